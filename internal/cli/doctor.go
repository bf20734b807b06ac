package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/cliprobe"
	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/driver"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/proc"
	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/security"
	"github.com/zergrush/zerg/internal/textx"
)

func init() { register(newDoctorCmd) }

// doctorReport is what `zerg doctor --json` prints.
type doctorReport struct {
	OK      bool         `json:"ok"`
	Claude  claudeCheck  `json:"claude"`
	Git     toolCheck    `json:"git"`
	Bwrap   toolCheck    `json:"bwrap"`
	UserNS  usernsCheck  `json:"user_namespaces"`
	Sandbox sandboxCheck `json:"sandbox"`
	Cgroups cgroupCheck  `json:"cgroups"`
	// Container is container mode's engine and image.
	Container containerCheck `json:"container"`
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
	Probe *probeCheck `json:"probe,omitempty"`
	// Modes are the modes that can run on this machine, from the checks
	// above (subprocess and tasks need nothing beyond the CLI and git).
	Modes []string `json:"modes"`
}

// runnableModes are the modes rep's checks say can run here, and the
// reason of each that cannot.
func runnableModes(rep doctorReport) (run []string, not map[string]string) {
	not = map[string]string{}
	usable := rep.Claude.Found && rep.Claude.Version != "" && rep.Git.Found
	for _, f := range driver.Factories() {
		ok, why := probePassed(rep, f.Probe)
		switch {
		case !usable:
			not[f.Mode] = noClaudeAndGit
		case ok:
			run = append(run, f.Mode)
		default:
			not[f.Mode] = why
		}
	}
	return run, not
}

const noClaudeAndGit = "no usable claude and git"

// probePassed is the verdict of rep's check p (a mode's Factory.Probe) and
// why it failed.
func probePassed(rep doctorReport, p driver.Probe) (bool, string) {
	switch p {
	case driver.ProbeSandbox:
		return rep.Sandbox.Available, rep.Sandbox.Error
	case driver.ProbeContainer:
		return rep.Container.Available, rep.Container.Error
	}
	return true, ""
}

// requiredProbePassed reports whether the configured mode's check passes
// where zerg doctor requires it (Factory.ProbeRequired).
func requiredProbePassed(rep doctorReport) bool {
	f, _ := driver.Lookup(rep.Mode)
	ok, _ := probePassed(rep, f.Probe)
	return !f.ProbeRequired || ok
}

// containerCheck says whether container mode works here: the engine
// container.runtime names, the image the config or devcontainer gives,
// and a container of it started as the worker user.
type containerCheck struct {
	Available bool   `json:"available"`
	Runtime   string `json:"runtime,omitempty"`
	Rootless  bool   `json:"rootless,omitempty"`
	Image     string `json:"image,omitempty"`
	Source    string `json:"source,omitempty"`
	Error     string `json:"error,omitempty"`
}

// cgroupCheck says whether sandboxed attempts get a cgroup of their own
// (memory and processes as totals) and which kind, or why not.
type cgroupCheck struct {
	Available bool   `json:"available"`
	Kind      string `json:"kind,omitempty"`
	Detail    string `json:"detail,omitempty"`
}

type claudeCheck struct {
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

// probeCheck is the launch probe's verdict on this CLI with this config's
// gateway policy (internal/cliprobe): what the aliases resolve to, and
// whether the gateway would refuse the CLI's own request.
type probeCheck struct {
	OK     bool          `json:"ok"`
	Models []probedModel `json:"models,omitempty"`
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

type probedModel struct {
	Model    string `json:"model"`
	Resolved string `json:"resolved,omitempty"`
}

type toolCheck struct {
	Found   bool   `json:"found"`
	Path    string `json:"path,omitempty"`
	Version string `json:"version,omitempty"`
	Error   string `json:"error,omitempty"`
}

type usernsCheck struct {
	Available bool   `json:"available"`
	Detail    string `json:"detail,omitempty"`
}

// sandboxCheck says whether sandbox mode works here (sandbox.Check), and as
// which user it was tried: the worker user when zerg runs as root.
type sandboxCheck struct {
	Available bool   `json:"available"`
	User      string `json:"user,omitempty"`
	Error     string `json:"error,omitempty"`
}

// doctorDeps are the probes, replaceable in tests.
type doctorDeps struct {
	locate    func(configPath string) (claude.Location, error)
	version   func(ctx context.Context, path string) (string, error)
	lookPath  func(string) (string, error)
	toolVer   func(ctx context.Context, path string, args ...string) (string, error)
	userns    func() usernsCheck
	sandbox   func(ctx context.Context, a *app) sandboxCheck
	container func(ctx context.Context, a *app) containerCheck
	cgroups   func() cgroupCheck
	isRoot    func() bool
	configBin func(a *app) string
	getenv    func(string) string // nil: os.Getenv
	// probe runs the launch probe (nil: none, in tests of the rest).
	probe func(ctx context.Context, cfg config.Config, worker claude.Spec) (*cliprobe.Report, error)
}

var defaultDoctorDeps = doctorDeps{
	locate:    claude.Locate,
	version:   claude.Version,
	lookPath:  exec.LookPath,
	toolVer:   toolVersion,
	userns:    probeUserNS,
	sandbox:   probeSandbox,
	container: probeContainer,
	cgroups:   probeCgroups,
	isRoot:    func() bool { return os.Geteuid() == 0 },
	configBin: configuredClaude,
	probe: func(ctx context.Context, cfg config.Config, worker claude.Spec) (*cliprobe.Report, error) {
		return run.ProbeCLI(ctx, cfg, nil, worker)
	},
}

func newDoctorCmd(a *app) *cobra.Command {
	var asJSON bool
	var claudePath string
	cmd := &cobra.Command{
		Use:   "doctor [--json]",
		Short: "Check what zerg needs: the claude CLI, git, bubblewrap, user namespaces, the sandbox, containers",
		Long: `Reports the Claude Code binary zerg would launch (path, where it was found,
version, where it stands in the supported range and whether it is the version
pinned in tools/claude/package.json), the launch probe (one turn of it per
model of the config through a gateway with the config's policy, against a
local stub: the model ids the aliases resolve to, and whether the gateway
would refuse the CLI's own request),
git, bubblewrap, user namespaces, whether a sandbox starts on this machine
(and why not), whether sandboxed attempts get a cgroup of their own (memory
and processes as totals), whether a container of the project's image starts
(container mode: the engine, the image, and why not) and whether zerg runs
as root.
Exit 0 when everything required (git, a claude of the supported range or
newer whose launch probe passes, and the configured mode's container engine
and image in container mode) is there, 1 otherwise.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDoctor(cmd.Context(), a, defaultDoctorDeps, claudePath, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	cmd.Flags().StringVar(&claudePath, "claude", "", "check this claude binary instead of the configured one")
	return cmd
}

func runDoctor(ctx context.Context, a *app, d doctorDeps, claudePath string, asJSON bool) error {
	if claudePath == "" {
		claudePath = d.configBin(a)
	}
	rep := doctorReport{Root: d.isRoot(), Processes: proc.Available().String(), Claude: claudeCheck{MinVersion: claude.MinVersion, TestedVersion: claude.TestedVersion}}

	loc, err := d.locate(claudePath)
	switch {
	case err != nil:
		rep.Claude.Error = err.Error()
	default:
		rep.Claude.Found, rep.Claude.Path, rep.Claude.Source = true, loc.Path, string(loc.Source)
		if v, err := d.version(ctx, loc.Path); err != nil {
			rep.Claude.Error = err.Error()
		} else {
			rep.Claude.Version, rep.Claude.Support = v, string(claude.SupportOf(v))
		}
	}
	if loc.RepoRoot != "" {
		if pin, err := claude.PinnedVersion(loc.RepoRoot); err == nil {
			rep.Claude.Pinned = pin
			if rep.Claude.Version != "" {
				match := rep.Claude.Version == pin
				rep.Claude.PinnedMatch = &match
			}
		}
	}
	rep.Git = checkTool(ctx, d, "git", "--version")
	rep.Bwrap = checkTool(ctx, d, "bwrap", "--version")
	rep.UserNS = d.userns()
	rep.Sandbox = d.sandbox(ctx, a)
	if d.cgroups != nil {
		rep.Cgroups = d.cgroups()
	}
	cfgNow := config.Default()
	// A config zerg config check refuses is refused here too: every other
	// command would stop on it.
	if cfg, err := loadNearestConfig(a); err != nil {
		rep.Config = textx.OneLine(err.Error())
	} else if cfg != nil {
		cfgNow = *cfg
	}
	rep.Mode = cfgNow.Mode
	getenv := d.getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	api, apiErr := apiFromGetenv(cfgNow, false, getenv)
	if apiErr == nil {
		rep.Credential = credentialNote(cfgNow, api, getenv)
	}
	if d.probe != nil && rep.Claude.Version != "" && rep.Claude.Support != string(claude.OlderMin) {
		worker := claude.Spec{Binary: loc.Path, API: api}
		if self, err := os.Executable(); err == nil {
			worker.Hook.ZergBinary = hookBinary(self)
		}
		rep.Probe = doctorProbe(ctx, d, cfgNow, worker)
	}
	if d.container != nil {
		rep.Container = d.container(ctx, a)
	}
	rep.Modes, _ = runnableModes(rep)
	if rep.Modes == nil {
		rep.Modes = []string{}
	}
	rep.OK = rep.Config == "" && rep.Claude.Found && rep.Claude.Version != "" && rep.Claude.Support != string(claude.OlderMin) && rep.Git.Found &&
		requiredProbePassed(rep) && (rep.Probe == nil || rep.Probe.OK)

	if asJSON {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		printDoctor(a, rep)
	}
	if !rep.OK {
		return silent(ExitFailed)
	}
	return nil
}

// doctorProbe runs the launch probe with the config's models and policy.
func doctorProbe(ctx context.Context, d doctorDeps, cfg config.Config, worker claude.Spec) *probeCheck {
	rep, err := d.probe(ctx, cfg, worker)
	if err != nil {
		return &probeCheck{Error: err.Error()}
	}
	pc := &probeCheck{MaxTokens: rep.MaxTokens, Betas: rep.Betas, Unreviewed: rep.Unreviewed}
	for _, m := range rep.Models {
		pm := probedModel{Model: m.Model}
		if len(m.Resolved) > 0 {
			pm.Resolved = m.Resolved[0]
		}
		pc.Models = append(pc.Models, pm)
	}
	if m, r := rep.Refusal(); r != nil {
		pc.Refused = fmt.Sprintf("model %s: %s", m.Model, r.Reason)
		pc.Fix = r.Fix
	} else if m, why := rep.Problem(); why != "" {
		pc.Error = fmt.Sprintf("model %s: %s", m.Model, why)
	} else {
		pc.OK = true
	}
	return pc
}

func checkTool(ctx context.Context, d doctorDeps, name string, args ...string) toolCheck {
	p, err := d.lookPath(name)
	if err != nil {
		return toolCheck{Error: name + " not found on PATH"}
	}
	tc := toolCheck{Found: true, Path: p}
	if v, err := d.toolVer(ctx, p, args...); err != nil {
		tc.Error = err.Error()
	} else {
		tc.Version = v
	}
	return tc
}

func printDoctor(a *app, rep doctorReport) {
	line := func(status, name, text string) { fmt.Fprintf(a.stdout, "%-7s %-16s %s\n", status, name, text) }
	c := rep.Claude
	switch {
	case !c.Found:
		line("MISSING", "claude", c.Error+" (required)")
	case c.Version == "":
		line("FAIL", "claude", c.Path+" ("+c.Source+"): "+c.Error)
	default:
		text := fmt.Sprintf("%s %s (%s)", c.Path, c.Version, c.Source)
		status := "ok"
		switch claude.Support(c.Support) {
		case claude.OlderMin:
			status = "FAIL"
			text += fmt.Sprintf(": older than supported (%s to %s): upgrade it (claude update)", c.MinVersion, c.TestedVersion)
		case claude.NewerTested:
			status = "WARN"
			text += fmt.Sprintf(": newer than tested (%s)", c.TestedVersion)
			if p := rep.Probe; p != nil && p.OK {
				text += ": the launch probe passed"
			}
		case claude.Unreadable:
			status = "WARN"
			text += ": not a version zerg can place in its supported range"
		default:
			text += fmt.Sprintf(", supported (%s to %s)", c.MinVersion, c.TestedVersion)
		}
		if c.PinnedMatch != nil && *c.PinnedMatch {
			text += ", the pinned version"
		} else if c.PinnedMatch != nil {
			text += fmt.Sprintf("; the pinned version is %s (make claude)", c.Pinned)
		}
		line(status, "claude", text)
	}
	if p := rep.Probe; p != nil {
		switch {
		case p.Refused != "":
			line("FAIL", "launch probe", "zerg's gateway would refuse the CLI's own request with this config: "+p.Refused+"; "+p.Fix)
		case p.Error != "":
			line("FAIL", "launch probe", p.Error)
		default:
			var aliases []string
			for _, m := range p.Models {
				aliases = append(aliases, m.Model+" → "+m.Resolved)
			}
			line("ok", "launch probe", fmt.Sprintf("one turn per model through the gateway with this config: %s; max_tokens %d",
				strings.Join(aliases, ", "), p.MaxTokens))
			if len(p.Unreviewed) > 0 {
				line("note", "launch probe", "forwarded and audited, not reviewed by zerg: "+strings.Join(p.Unreviewed, ", ")+" (gateway.strict refuses them)")
			}
		}
	}
	if rep.Credential == "no credential" {
		line("--", "credential", fmt.Sprintf("none: set ANTHROPIC_API_KEY, or %s from claude setup-token (an API key wins when both are set; --rehearse needs neither)", claude.EnvOAuthToken))
	} else if strings.Contains(rep.Credential, " wins ") {
		line("ok", "credential", rep.Credential)
	} else {
		line("ok", "credential", rep.Credential+" (an API key wins over a subscription token when both are set)")
	}
	if rep.Config != "" {
		line("FAIL", "config", rep.Config+" (zerg config check lists every problem)")
	}
	if rep.Git.Found {
		line("ok", "git", rep.Git.Version)
	} else {
		line("MISSING", "git", "git not found on PATH (required)")
	}
	if rep.Bwrap.Found {
		line("ok", "bwrap", rep.Bwrap.Version)
	} else {
		line("--", "bwrap", "not found (optional: needed for the sandbox isolation mode)")
	}
	if rep.UserNS.Available {
		line("ok", "user namespaces", rep.UserNS.Detail)
	} else {
		line("--", "user namespaces", "unavailable: "+rep.UserNS.Detail+" (optional: needed by bwrap)")
	}
	if sb := rep.Sandbox; sb.Available {
		line("ok", "sandbox", "a sandbox starts as "+sb.User)
	} else {
		line("--", "sandbox", "unavailable: "+sb.Error+" (optional: needed for the sandbox isolation mode)")
	}
	if cg := rep.Cgroups; cg.Available {
		line("ok", "cgroups", cg.Kind+": memory and processes are totals per sandboxed attempt, gate and check lane (a slot runs one at a time)")
	} else {
		line("--", "cgroups", "none ("+cg.Detail+"): memory and processes are limited per process only (docs/sandbox.md)")
	}
	switch ct := rep.Container; {
	case ct.Available:
		line("ok", "container", fmt.Sprintf("%s%s starts %s (%s)", ct.Runtime, map[bool]string{true: " (rootless)"}[ct.Rootless], ct.Image, ct.Source))
	case !requiredProbePassed(rep):
		line("FAIL", "container", ct.Error+" (required: the config's mode is container; docs/container.md)")
	default:
		line("--", "container", "unavailable: "+ct.Error+" (optional: needed for the container isolation mode)")
	}
	line("ok", "processes", rep.Processes)
	if run, not := runnableModes(rep); len(run) == 0 {
		line("FAIL", "modes", "none can run here: "+noClaudeAndGit)
	} else {
		text := "these run here: " + strings.Join(run, ", ")
		for _, f := range driver.Factories() {
			if why, ok := not[f.Mode]; ok && f.Probe != driver.ProbeNone {
				m := f.Mode
				if why == "" {
					why = "not checked"
				}
				text += "; not " + m + " (" + textx.OneLine(why) + ")"
			}
		}
		status := "ok"
		if !slices.Contains(run, rep.Mode) {
			status = "note"
			text += "; the config's mode " + rep.Mode + " is not among them: fix what it needs above, or set mode: " + run[0] + " in .zerg/config.yaml"
		}
		line(status, "modes", text)
	}
	if rep.Root {
		line("note", "root", "running as root: workers never get bypassPermissions")
	} else {
		line("ok", "root", "not root")
	}
}

// probeCgroups is what sandboxed attempts will get: internal/cgroup's
// detection, which creates zerg's own (empty) group directory.
func probeCgroups() cgroupCheck {
	cg := driver.ProbeCgroups()
	return cgroupCheck{Available: cg.Available, Kind: cg.Kind, Detail: cg.Detail}
}

// toolVersion runs `path args...` and returns its first output line.
func toolVersion(ctx context.Context, path string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, args...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", filepath.Base(path), strings.Join(args, " "), err)
	}
	first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return first, nil
}

// probeSandbox starts a sandbox as the user workers would run as: the
// configured worker user when zerg runs as root (nobody while that user does
// not exist yet: zerg creates it on the first run), else zerg's own user.
func probeSandbox(ctx context.Context, a *app) sandboxCheck {
	uid, gid, who, err := probeUser(a)
	if err != nil {
		return sandboxCheck{Error: err.Error()}
	}
	if err := driver.ProbeSandboxAs(ctx, uid, gid); err != nil {
		return sandboxCheck{User: who, Error: err.Error()}
	}
	return sandboxCheck{Available: true, User: who}
}

// probeUser is the user a probe starts a sandbox or container as.
func probeUser(a *app) (uid, gid int, who string, err error) {
	who = "zerg's own user"
	if u, err := user.Current(); err == nil {
		who = fmt.Sprintf("%s (uid %s)", u.Username, u.Uid)
	}
	if os.Geteuid() != 0 {
		return 0, 0, who, nil
	}
	name := config.DefaultWorkerUser
	if cfg := nearestConfig(a); cfg != nil && cfg.Security.WorkerUser != "" {
		name = cfg.Security.WorkerUser
	}
	if u, err := security.LookupWorkerUser(name); err == nil {
		return u.UID, u.GID, u.String(), nil
	}
	n, err := user.Lookup("nobody")
	if err != nil {
		return 0, 0, who, fmt.Errorf("no unprivileged user to try it as: %s and nobody do not exist", name)
	}
	uid, _ = strconv.Atoi(n.Uid)
	gid, _ = strconv.Atoi(n.Gid)
	return uid, gid, fmt.Sprintf("nobody (uid %d; the worker user %s does not exist yet)", uid, name), nil
}

// probeContainer finds the engine and the image container mode would use
// (building a devcontainer's image when it is not built yet, as a rush
// would) and starts a container of it.
func probeContainer(ctx context.Context, a *app) containerCheck {
	cfg := config.Default()
	if c := nearestConfig(a); c != nil {
		cfg = *c
	}
	root := ""
	if wd, err := a.getwd(); err == nil {
		root, _ = gitx.New(wd).TopLevel(ctx)
	}
	p := driver.ProbeContainerOf(ctx, cfg, root, a.stderr, func() (int, int, error) {
		uid, gid, _, err := probeUser(a)
		if err == nil && uid == 0 {
			uid, gid = os.Getuid(), os.Getgid()
		}
		return uid, gid, err
	})
	ct := containerCheck{Available: p.Err == nil, Runtime: p.Runtime, Rootless: p.Rootless, Image: p.Image, Source: p.Source}
	if p.Err != nil {
		ct.Error = p.Err.Error()
	}
	return ct
}

// configuredClaude returns claude.path from the nearest .zerg/config.yaml
// above the working directory, or "" (doctor also runs outside a project).
func configuredClaude(a *app) string {
	if cfg := nearestConfig(a); cfg != nil {
		return cfg.Claude.Path
	}
	return ""
}

// nearestConfig loads the nearest .zerg/config.yaml above the working
// directory, or returns nil when there is none or it does not load (the
// report says so: loadNearestConfig).
func nearestConfig(a *app) *config.Config {
	cfg, _ := loadNearestConfig(a)
	return cfg
}

// loadNearestConfig is nearestConfig with the error of a config that is
// there and does not load (nil, nil when there is none).
func loadNearestConfig(a *app) (*config.Config, error) {
	dir, err := a.getwd()
	if err != nil {
		return nil, nil
	}
	for {
		p := run.ConfigFile(dir)
		if _, err := os.Stat(p); err == nil {
			cfg, err := config.Load(p)
			if err != nil {
				return nil, err
			}
			return &cfg, nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil, nil
		}
		dir = parent
	}
}
