package doctor

import (
	"github.com/zergrush/zerg/internal/driver"
)

// Report is what `zerg doctor --json` prints.
type Report struct {
	OK      bool         `json:"ok"`
	Claude  ClaudeCheck  `json:"claude"`
	Git     ToolCheck    `json:"git"`
	Bwrap   ToolCheck    `json:"bwrap"`
	UserNS  UserNSCheck  `json:"user_namespaces"`
	Sandbox SandboxCheck `json:"sandbox"`
	Cgroups CgroupCheck  `json:"cgroups"`
	// Container is container mode's engine and image.
	Container ContainerCheck `json:"container"`
	// Mode is the configured mode (sandbox when there is no config).
	Mode string `json:"mode"`
	// Config is why the project's config does not load ("" when it does,
	// or there is none): every command that reads it refuses it.
	Config string `json:"config,omitempty"`
	Root   bool   `json:"root"`
	// Processes are the kernel mechanisms zerg's process handling uses
	// here (internal/proc, docs/processes.md).
	Processes string `json:"processes"`
	// Credential is the model-API credential a real run would use and the
	// variable it comes from ("API key from ANTHROPIC_API_KEY",
	// "subscription token from CLAUDE_CODE_OAUTH_TOKEN"), never its value.
	Credential string `json:"credential"`
	// Probe is the launch probe of the CLI (nil when there is none to run).
	Probe *ProbeCheck `json:"probe,omitempty"`
	// Modes are the modes that can run on this machine, from the checks
	// above (subprocess and tasks need nothing beyond the CLI and git).
	Modes []string `json:"modes"`
}

// ContainerCheck says whether container mode works here: the engine
// container.runtime names, the image the config or devcontainer gives,
// and a container of it started as the worker user.
type ContainerCheck struct {
	Available bool   `json:"available"`
	Runtime   string `json:"runtime,omitempty"`
	Rootless  bool   `json:"rootless,omitempty"`
	Image     string `json:"image,omitempty"`
	Source    string `json:"source,omitempty"`
	Error     string `json:"error,omitempty"`
}

// CgroupCheck says whether sandboxed attempts get a cgroup of their own
// (memory and processes as totals) and which kind, or why not.
type CgroupCheck struct {
	Available bool   `json:"available"`
	Kind      string `json:"kind,omitempty"`
	Detail    string `json:"detail,omitempty"`
}

// ClaudeCheck is the Claude Code binary zerg would launch.
type ClaudeCheck struct {
	Found       bool   `json:"found"`
	Path        string `json:"path,omitempty"`
	Source      string `json:"source,omitempty"`
	Version     string `json:"version,omitempty"`
	Pinned      string `json:"pinned,omitempty"`
	PinnedMatch *bool  `json:"pinned_match,omitempty"` // nil when no pin is known
	// MinVersion and TestedVersion are zerg's supported range, Support
	// where Version stands in it: supported, newer (than tested: the
	// launch probe decides), older (refused) or unreadable.
	MinVersion    string `json:"min_version"`
	TestedVersion string `json:"tested_version"`
	Support       string `json:"support,omitempty"`
	Error         string `json:"error,omitempty"`
}

// ProbeCheck is the launch probe's verdict on this CLI with this config's
// gateway policy (internal/cliprobe): what the aliases resolve to, and
// whether the gateway would refuse the CLI's own request.
type ProbeCheck struct {
	OK     bool          `json:"ok"`
	Models []ProbedModel `json:"models,omitempty"`
	// MaxTokens is the most the CLI asked for.
	MaxTokens int64 `json:"max_tokens,omitempty"`
	// Betas are the betas the CLI sent; Unreviewed what of its requests
	// zerg has not reviewed (forwarded and audited unless gateway.strict).
	Betas      []string `json:"betas,omitempty"`
	Unreviewed []string `json:"unreviewed,omitempty"`
	// Refused is the gateway's refusal of the CLI's own request and Fix
	// what to change; Error a probe that could not run.
	Refused string `json:"refused,omitempty"`
	Fix     string `json:"fix,omitempty"`
	Error   string `json:"error,omitempty"`
}

// ProbedModel is a model of the config and the id the CLI resolved it to.
type ProbedModel struct {
	Model    string `json:"model"`
	Resolved string `json:"resolved,omitempty"`
}

// ToolCheck is a tool on PATH and its version line.
type ToolCheck struct {
	Found   bool   `json:"found"`
	Path    string `json:"path,omitempty"`
	Version string `json:"version,omitempty"`
	Error   string `json:"error,omitempty"`
}

// UserNSCheck says whether an unprivileged process can make a user
// namespace here (bubblewrap needs it).
type UserNSCheck struct {
	Available bool   `json:"available"`
	Detail    string `json:"detail,omitempty"`
}

// SandboxCheck says whether sandbox mode works here (sandbox.Check), and as
// which user it was tried: the worker user when zerg runs as root.
type SandboxCheck struct {
	Available bool   `json:"available"`
	User      string `json:"user,omitempty"`
	Error     string `json:"error,omitempty"`
}

// NoClaudeAndGit is why no mode runs on a machine without a claude that
// answers its version and git.
const NoClaudeAndGit = "no usable claude and git"

// RunnableModes are the modes rep's checks say can run here, and the
// reason of each that cannot.
func RunnableModes(rep Report) (run []string, not map[string]string) {
	not = map[string]string{}
	usable := rep.Claude.Found && rep.Claude.Version != "" && rep.Git.Found
	for _, f := range driver.Factories() {
		ok, why := rep.probePassed(f.Probe)
		switch {
		case !usable:
			not[f.Mode] = NoClaudeAndGit
		case ok:
			run = append(run, f.Mode)
		default:
			not[f.Mode] = why
		}
	}
	return run, not
}

// probePassed is the verdict of rep's check p (a mode's Factory.Probe) and
// why it failed.
func (rep Report) probePassed(p driver.Probe) (bool, string) {
	switch p {
	case driver.ProbeSandbox:
		return rep.Sandbox.Available, rep.Sandbox.Error
	case driver.ProbeContainer:
		return rep.Container.Available, rep.Container.Error
	}
	return true, ""
}

// RequiredProbePassed reports whether the configured mode's check passes
// where zerg doctor requires it (Factory.ProbeRequired).
func (rep Report) RequiredProbePassed() bool {
	f, _ := driver.Lookup(rep.Mode)
	ok, _ := rep.probePassed(f.Probe)
	return !f.ProbeRequired || ok
}
