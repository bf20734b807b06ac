package claude

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zergrush/zerg/internal/pathx"
	"github.com/zergrush/zerg/internal/policy"
	policybash "github.com/zergrush/zerg/internal/policy/bash"
	"github.com/zergrush/zerg/internal/security"
	"github.com/zergrush/zerg/internal/textx"
	"github.com/zergrush/zerg/internal/toolchain"
)

// DefaultTools is the built-in tool set a worker gets unless the spec says
// otherwise; trimming tools shrinks the first request from ≈87 K to ≈13 K chars.
var DefaultTools = []string{"Bash", "Edit", "Read", "Write", "Glob", "Grep"}

// Defaults applied by Spec.normalize.
const (
	DefaultPermissionMode = "acceptEdits"
	DefaultMaxRetries     = 3
	DefaultKillGrace      = 5 * time.Second
	DefaultStderrLimit    = 64 << 10
)

// EnvRunMarker is set in every worker's environment to the run's marker; the
// kill sweep uses it to recognise the run's processes that escaped the tree.
const EnvRunMarker = "ZERG_RUN_MARKER"

// Spec is everything needed to launch one attempt of one worker.
type Spec struct {
	// Binary is the claude executable (see Find).
	Binary string
	// Workdir is the worker's checkout: the process's cwd and the policy's
	// workspace. Absolute, must exist.
	Workdir string
	// AttemptDir holds the attempt's private state: settings.json,
	// policy.json, home/, config/ (CLAUDE_CONFIG_DIR) and tmp/. It must be
	// outside Workdir so the agent's file tools cannot rewrite the policy.
	AttemptDir string
	// Prompt is the task prompt. Passed after "--" so a leading '-' is text;
	// prompts over 100 KiB go through stdin instead of argv.
	Prompt string
	// PromptLater starts the CLI without a prompt: it loads and waits on
	// stdin (--input-format stream-json) for the one message Run.Send
	// gives it, so that its start-up is paid before the task is ready to
	// run (a prepared worker). Prompt must then be empty.
	PromptLater bool

	Model         string
	FallbackModel string
	MaxTurns      int     // --max-turns; 0 = the CLI default
	MaxBudgetUSD  float64 // --max-budget-usd; 0 = none

	// Tools is the exact built-in tool set; nil means DefaultTools. Names are
	// trimmed; empty names are dropped.
	Tools []string
	// AllowedTools and DisallowedTools are permission rules ("Bash(go test *)");
	// they go to the settings file, not argv, because --allowedTools is
	// variadic and would swallow the prompt.
	AllowedTools    []string
	DisallowedTools []string
	// PermissionMode defaults to acceptEdits. bypassPermissions is refused
	// when running as root.
	PermissionMode     string
	AppendSystemPrompt string
	// SessionID is the --session-id UUID; generated when empty.
	SessionID string

	// API is how the worker reaches the Messages API.
	API APISettings
	// MaxRetries sets CLAUDE_CODE_MAX_RETRIES (default 3; the CLI clamps to 15).
	MaxRetries int
	// APITimeout sets API_TIMEOUT_MS when > 0 (per-attempt header timeout).
	APITimeout time.Duration
	// PassEnv names variables copied from zerg's own environment when set,
	// e.g. "GOPATH", "GOCACHE", "HTTPS_PROXY". Nothing outside the allowlist
	// reaches the worker unless it is named here or in SetEnv.
	PassEnv []string
	// SetEnv sets variables to explicit values (after PassEnv). It cannot set
	// the API credentials (use API) or the variables the driver owns.
	SetEnv map[string]string

	// Hook configures the PreToolUse policy hook.
	Hook HookSpec

	// RunAs, when set, runs the CLI (and so its hooks and every tool command)
	// as this unprivileged user: credentials set at exec, no supplementary
	// groups, HOME/CLAUDE_CONFIG_DIR/TMPDIR under the attempt dir owned by
	// that user, the attempt dir itself and its settings and policy files
	// read-only for it. The workdir must already be usable by it
	// (security.WorkerUser.PrepareWorkspace). Switching users needs root; nil
	// runs the worker as zerg's own user.
	RunAs *WorkerUser

	// Isolation, when set, makes the CLI's process in a driver's isolation
	// (internal/driver: a sandbox, a container): it binds the paths the
	// worker needs and switches to its own uid, so RunAs only names the
	// owner of the attempt dir's writable parts. nil: a process on this
	// machine, as RunAs.
	Isolation Isolation

	// IdleTimeout kills the run when no stdout line arrived for this long
	// (0 = no watchdog). The CLI itself needs ≥ 300 s to notice a stalled stream.
	IdleTimeout time.Duration
	// KillGrace is the time between SIGTERM and SIGKILL (default 5 s).
	KillGrace time.Duration
	// StderrLimit bounds the stderr tail kept (default 64 KiB).
	StderrLimit int

	// OnEvent, when set, is called for every stdout line in order, from the
	// reader goroutine. It must not block for long: the CLI blocks on a full
	// stdout pipe.
	OnEvent func(Event)
}

// WorkerUser is the unprivileged account a worker runs as (Spec.RunAs).
type WorkerUser = security.WorkerUser

// HookSpec is the policy hook of one attempt: every tool call goes through
// `zerg hook pre-tool-use`, which applies the attempt's policy.Policy.
type HookSpec struct {
	// ZergBinary is the zerg executable the CLI runs as
	// `<zerg> hook pre-tool-use --policy <file>`. Required unless Disabled.
	ZergBinary string
	// AllowedPaths are repo-relative paths or doublestar globs the agent may
	// write with Write/Edit/MultiEdit/NotebookEdit; empty denies every write.
	AllowedPaths []string
	// Protect are the repository-relative globs no write may touch whatever
	// AllowedPaths says (the commit check's list; nil: zerg's own), and
	// Opened the entries of AllowedPaths security.allow_protected opens.
	Protect []string
	Opened  []string
	// ReadDirs are extra absolute directories the read tools may read
	// besides the workdir; usually none.
	ReadDirs []string
	// BashAllow are Bash rules on top of policybash.DefaultAllow and the
	// toolchain rules derived from BashCommands (see policybash.Policy).
	BashAllow []string
	// BashCommands are command lines the worker may run exactly as written:
	// the task's verification command. In subprocess mode the programs in
	// them may run with any arguments, and their toolchains' usual
	// commands too.
	BashCommands []string
	// AllowCommands are programs the worker may run with any arguments in
	// subprocess mode (worker_policy.allow_commands), on top of the
	// toolchains toolchain.Detect finds in the workdir and the programs of
	// BashCommands. What reaches outside stays refused.
	AllowCommands []string
	// DenyCommands are programs the worker may never run, in either mode
	// (worker_policy.deny_commands), on top of zerg's own list of what
	// reaches outside. They win over every allow rule.
	DenyCommands []string
	// ToolchainsOff are detected toolchains whose programs are not allowed
	// (toolchains.off).
	ToolchainsOff []string
	// BashSandboxed is sandbox mode: the sandbox is the boundary for
	// commands, the hook only refuses those that reach outside it (the
	// network, the remote, paths outside the workspace, other processes,
	// the environment's credentials, listeners on every interface), so
	// the model is told at once; the file and read checks still apply.
	BashSandboxed bool
	// BashUnrestricted turns the Bash check off (tests of the driver); the
	// file and read checks still apply.
	BashUnrestricted bool
	// Disabled leaves the hook out (tests of the driver itself only).
	Disabled bool
}

// Attempt-dir layout.
const (
	settingsFile = "settings.json"
	policyFile   = "policy.json"
	homeDir      = "home"
	configDir    = "config"
	tmpDir       = "tmp"
)

var permissionModes = []string{"acceptEdits", "auto", "bypassPermissions", "default", "dontAsk", "plan"}

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// PromptEnv trims the CLI's system prompt to what a zerg session can use;
// each variable drops a section the pinned CLI sends by default, measured in
// docs/context.md. Auto memory: a session works in a checkout and (but for
// an interactive plan) a config dir of its own, so the memory it would read
// is always empty, and the memory files are outside what it may write. Git
// instructions: the CLI's commit and pull-request workflow contradicts the
// worker's rule that zerg, not the worker, commits. Together they are about
// 730 tokens of every request with opus and 4,800 with sonnet.
var PromptEnv = map[string]string{
	"CLAUDE_CODE_DISABLE_AUTO_MEMORY":      "1",
	"CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS": "1",
}

// ownedEnv are variables only the driver sets.
var ownedEnv = []string{"HOME", "CLAUDE_CONFIG_DIR", "CLAUDE_CODE_TMPDIR", "TMPDIR", EnvRunMarker, EnvAPIKey, EnvAuthToken, EnvOAuthToken, EnvBaseURL}

// ErrBadSpec marks a spec that cannot be launched.
var ErrBadSpec = errors.New("bad worker spec")

// isRoot is a seam for tests of the root-only refusal.
var isRoot = func() bool { return os.Geteuid() == 0 }

// normalize fills defaults and validates. It does not touch the filesystem
// beyond Stat.
func (s Spec) normalize() (Spec, error) {
	bad := func(format string, a ...any) (Spec, error) {
		return s, fmt.Errorf("%w: %s", ErrBadSpec, fmt.Sprintf(format, a...))
	}
	if s.Binary == "" {
		return bad("no claude binary")
	}
	if !filepath.IsAbs(s.Workdir) {
		return bad("workdir %q is not absolute", s.Workdir)
	}
	if !filepath.IsAbs(s.AttemptDir) {
		return bad("attempt dir %q is not absolute", s.AttemptDir)
	}
	s.Workdir, s.AttemptDir = filepath.Clean(s.Workdir), filepath.Clean(s.AttemptDir)
	if pathx.Within(s.Workdir, s.AttemptDir) {
		return bad("attempt dir %s is inside the workdir %s", s.AttemptDir, s.Workdir)
	}
	switch {
	case s.PromptLater && s.Prompt != "":
		return bad("a prompt given to a worker that takes it later")
	case !s.PromptLater && strings.TrimSpace(s.Prompt) == "":
		return bad("empty prompt")
	}
	if len(s.AppendSystemPrompt) > maxArgPrompt {
		return bad("append-system-prompt longer than %d bytes", maxArgPrompt)
	}
	if s.PermissionMode == "" {
		s.PermissionMode = DefaultPermissionMode
	}
	if !slices.Contains(permissionModes, s.PermissionMode) {
		return bad("unknown permission mode %q", s.PermissionMode)
	}
	if s.PermissionMode == "bypassPermissions" && isRoot() {
		return bad("bypassPermissions is never used as root")
	}
	if s.SessionID == "" {
		s.SessionID = NewSessionID()
	} else if !validSessionID(s.SessionID) {
		return bad("session id %q is not a UUID", s.SessionID)
	}
	if s.MaxTurns < 0 || s.MaxBudgetUSD < 0 || s.MaxRetries < 0 || s.APITimeout < 0 || s.IdleTimeout < 0 || s.KillGrace < 0 {
		return bad("negative limit")
	}
	if s.MaxRetries == 0 {
		s.MaxRetries = DefaultMaxRetries
	}
	if s.KillGrace == 0 {
		s.KillGrace = DefaultKillGrace
	}
	if s.StderrLimit <= 0 {
		s.StderrLimit = DefaultStderrLimit
	}
	tools := s.Tools
	if tools == nil {
		tools = DefaultTools
	}
	s.Tools = nil
	for _, t := range tools {
		if t = strings.TrimSpace(t); t != "" && !slices.Contains(s.Tools, t) {
			if strings.ContainsAny(t, ", ") {
				return bad("tool name %q", t)
			}
			s.Tools = append(s.Tools, t)
		}
	}
	if s.Tools == nil {
		s.Tools = []string{} // explicitly no tools
	}
	for _, n := range s.PassEnv {
		if !envNameRE.MatchString(n) {
			return bad("env name %q", n)
		}
		if slices.Contains(ownedEnv, n) {
			return bad("%s is set by the driver, not passed through", n)
		}
	}
	for n := range s.SetEnv {
		if !envNameRE.MatchString(n) {
			return bad("env name %q", n)
		}
		if slices.Contains(ownedEnv, n) {
			return bad("%s is set by the driver, not by SetEnv", n)
		}
	}
	if !s.Hook.Disabled {
		if s.Hook.ZergBinary == "" || !filepath.IsAbs(s.Hook.ZergBinary) {
			return bad("hook needs the absolute path of the zerg binary")
		}
		if err := s.policy().Validate(); err != nil {
			return bad("%v", err)
		}
	}
	if u := s.RunAs; u != nil {
		if u.UID <= 0 || u.GID <= 0 {
			return bad("worker user %s has uid %d gid %d; it must be unprivileged", u.Name, u.UID, u.GID)
		}
		if !isRoot() && u.UID != os.Geteuid() {
			return bad("only root can run workers as %s", u.Name)
		}
	}
	return s, nil
}

// policy is the attempt's hook policy for a normalized spec. In subprocess
// mode the Bash rules are the defaults, the toolchain rules and programs of
// the verification commands, the programs of the toolchains detected in the
// workdir (less ToolchainsOff), AllowCommands and BashAllow; the worker's
// scratch space is its TMPDIR and its own entries in /tmp. In sandbox mode
// only what reaches outside is refused. DenyCommands apply in both.
func (s Spec) policy() *policy.Policy {
	bash := policybash.Policy{Unrestricted: s.Hook.BashUnrestricted, Deny: s.Hook.DenyCommands}
	switch {
	case bash.Unrestricted:
	case s.Hook.BashSandboxed:
		bash.Sandboxed = true
		bash.Commands = s.Hook.BashCommands
		bash.Scratch = []string{s.tmpPath()}
	default:
		bash.Allow = policybash.DefaultAllow()
		add := func(rules ...string) {
			for _, r := range rules {
				if !slices.Contains(bash.Allow, r) {
					bash.Allow = append(bash.Allow, r)
				}
			}
		}
		for _, c := range s.Hook.BashCommands {
			add(policybash.ToolchainRules(c)...)
			add(policybash.CommandPrograms(c)...)
		}
		add(s.toolchainPrograms()...)
		add(s.Hook.AllowCommands...)
		add(s.Hook.BashAllow...)
		bash.Commands = s.Hook.BashCommands
		bash.Scratch = []string{s.tmpPath()}
		bash.SharedTmp = sharedTmp
	}
	return &policy.Policy{
		Version:   policy.Version,
		Workspace: s.Workdir,
		Allow:     nonNil(s.Hook.AllowedPaths),
		ReadDirs:  s.Hook.ReadDirs,
		Protected: []string{s.AttemptDir},
		Protect:   s.Hook.Protect,
		Opened:    s.Hook.Opened,
		Bash:      bash,
	}
}

// sharedTmp is the machine's temporary directory models write to by habit.
const sharedTmp = "/tmp"

// toolchainPrograms are the programs of the toolchains detected in the
// workdir and in its directories one level down (a frontend in assets/, a
// backend in server/), less those of ToolchainsOff. Hidden and dependency
// directories are not looked at.
func (s Spec) toolchainPrograms() []string {
	dirs := []string{s.Workdir}
	if entries, err := os.ReadDir(s.Workdir); err == nil {
		for _, e := range entries {
			if e.IsDir() && !strings.HasPrefix(e.Name(), ".") && !slices.Contains(dependencyDirs, e.Name()) {
				dirs = append(dirs, filepath.Join(s.Workdir, e.Name()))
			}
		}
	}
	var out []string
	for _, d := range dirs {
		for _, tc := range toolchain.Detect(d) {
			if slices.Contains(s.Hook.ToolchainsOff, tc.Name) {
				continue
			}
			for _, c := range tc.Commands {
				if !slices.Contains(out, c) {
					out = append(out, c)
				}
			}
		}
	}
	return out
}

// dependencyDirs hold other projects' files, not the repository's own.
var dependencyDirs = []string{"node_modules", "vendor", "third_party", "deps", "_build", "target", "dist", "build"}

// Paths of the attempt's files.
func (s Spec) settingsPath() string { return filepath.Join(s.AttemptDir, settingsFile) }
func (s Spec) policyPath() string   { return filepath.Join(s.AttemptDir, policyFile) }
func (s Spec) homePath() string     { return filepath.Join(s.AttemptDir, homeDir) }
func (s Spec) configPath() string   { return filepath.Join(s.AttemptDir, configDir) }
func (s Spec) tmpPath() string      { return filepath.Join(s.AttemptDir, tmpDir) }

// args builds argv (without argv[0]) for a normalized spec. No credential
// ever appears here.
func (s Spec) args() []string {
	a := []string{
		"-p", "--output-format", "stream-json", "--verbose",
		"--setting-sources", "",
		"--settings", s.settingsPath(),
		"--strict-mcp-config",
		"--session-id", s.SessionID,
		"--permission-mode", s.PermissionMode,
		"--tools", strings.Join(s.Tools, ","),
	}
	if s.Model != "" {
		a = append(a, "--model", s.Model)
	}
	if s.FallbackModel != "" {
		a = append(a, "--fallback-model", s.FallbackModel)
	}
	if s.MaxTurns > 0 {
		a = append(a, "--max-turns", strconv.Itoa(s.MaxTurns))
	}
	if s.MaxBudgetUSD > 0 {
		a = append(a, "--max-budget-usd", strconv.FormatFloat(s.MaxBudgetUSD, 'f', -1, 64))
	}
	if s.AppendSystemPrompt != "" {
		a = append(a, "--append-system-prompt", s.AppendSystemPrompt)
	}
	if s.PromptLater {
		return append(a, "--input-format", "stream-json")
	}
	if s.promptOnStdin() {
		return a
	}
	return append(a, "--", s.Prompt)
}

// maxArgPrompt keeps the prompt below Linux's 128 KiB limit for one argv
// string; longer prompts go through stdin, which the CLI reads to EOF.
const maxArgPrompt = 100 << 10

func (s Spec) promptOnStdin() bool { return len(s.Prompt) > maxArgPrompt }

// env builds the worker's environment from scratch: an allowlist, never a
// copy of ours (hooks and Bash children inherit all of it, and an inherited
// IS_SANDBOX silently changes retry behaviour).
func (s Spec) env(getenv func(string) string, marker string) []string {
	m := map[string]string{
		"PATH":               defaultPath(getenv("PATH")),
		"HOME":               s.homePath(),
		"TERM":               "dumb",
		"CLAUDE_CONFIG_DIR":  s.configPath(),
		"CLAUDE_CODE_TMPDIR": s.tmpPath(),
		"TMPDIR":             s.tmpPath(),
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
		"CLAUDE_CODE_MAX_RETRIES":                  strconv.Itoa(s.MaxRetries),
		EnvRunMarker:                               marker,
	}
	maps.Copy(m, PromptEnv)
	for _, n := range []string{"LANG", "LANGUAGE", "TZ"} {
		if v := getenv(n); v != "" {
			m[n] = v
		}
	}
	for _, n := range localeNames {
		if v := getenv(n); v != "" {
			m[n] = v
		}
	}
	if s.APITimeout > 0 {
		m["API_TIMEOUT_MS"] = strconv.FormatInt(s.APITimeout.Milliseconds(), 10)
	}
	if s.API.BaseURL != "" {
		m[EnvBaseURL] = s.API.BaseURL
	}
	if s.API.APIKey != "" {
		m[EnvAPIKey] = string(s.API.APIKey)
	}
	if s.API.AuthToken != "" {
		m[EnvAuthToken] = string(s.API.AuthToken)
	}
	if s.API.OAuthToken != "" {
		m[EnvOAuthToken] = string(s.API.OAuthToken)
	}
	if s.RunAs != nil {
		// The worker's own git calls (git status, git diff) would refuse the
		// workspace's git metadata, which stays zerg's ("dubious ownership").
		// Command-line-scoped config trusts exactly this workspace.
		m["GIT_CONFIG_COUNT"] = "1"
		m["GIT_CONFIG_KEY_0"] = "safe.directory"
		m["GIT_CONFIG_VALUE_0"] = s.Workdir
	}
	for _, n := range s.PassEnv {
		if v, ok := lookup(getenv, n); ok {
			m[n] = v
		}
	}
	for n, v := range s.SetEnv {
		m[n] = v
	}
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

// InheritedEnv reports whether the driver copies the variable name from
// zerg's environment into every worker's (besides the API variables and the
// names a Spec passes): PATH, language and locale, time zone.
func InheritedEnv(name string) bool {
	return name == "PATH" || name == "LANG" || name == "LANGUAGE" || name == "TZ" || slices.Contains(localeNames, name)
}

// localeNames are the LC_* variables passed through when set.
var localeNames = []string{"LC_ALL", "LC_CTYPE", "LC_COLLATE", "LC_MESSAGES", "LC_MONETARY", "LC_NUMERIC", "LC_TIME"}

func lookup(getenv func(string) string, n string) (string, bool) {
	v := getenv(n)
	return v, v != ""
}

// settings is the --settings file: our hook and the permission rules.
type settings struct {
	Hooks       map[string][]hookMatcher `json:"hooks,omitempty"`
	Permissions permissions              `json:"permissions"`
}

type hookMatcher struct {
	Matcher string        `json:"matcher"`
	Hooks   []hookCommand `json:"hooks"`
}

type hookCommand struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Timeout int    `json:"timeout,omitempty"` // seconds
}

type permissions struct {
	Allow []string `json:"allow"`
	Deny  []string `json:"deny"`
}

// hookTimeoutSec is generous: a timed-out hook is a non-blocking error, so
// the tool would run.
const hookTimeoutSec = 120

// denyRules are Claude Code permission rules added to every worker's
// settings: a second layer under the hook for the worst cases, in the CLI's
// own rule syntax (`//` starts an absolute path). The hook is the real check;
// these only matter if it were ever left out or misconfigured.
func (s Spec) denyRules() []string {
	rules := []string{
		"Bash(curl:*)", "Bash(wget:*)", "Bash(nc:*)", "Bash(ncat:*)", "Bash(ssh:*)", "Bash(scp:*)",
		"Bash(sudo:*)", "Bash(su:*)", "Bash(env)", "Bash(env:*)", "Bash(printenv:*)",
		"Bash(git push:*)", "Bash(git remote:*)", "Bash(git config:*)",
		"WebFetch", "WebSearch",
	}
	// In-workspace paths (.git, .zerg, .claude settings) are left to the
	// hook: a path rule there fails the call before any hook runs and the
	// denial is then missing from the result's permission_denials.
	rules = append(rules, "Edit(/"+filepath.ToSlash(s.AttemptDir)+"/**)", "Read(/"+filepath.ToSlash(s.AttemptDir)+"/**)")
	return rules
}

// settingsJSON renders the settings file for a normalized spec.
func (s Spec) settingsJSON() ([]byte, error) {
	deny := nonNil(s.DisallowedTools)
	if !s.Hook.Disabled {
		deny = append(slices.Clone(deny), s.denyRules()...)
	}
	st := settings{Permissions: permissions{Allow: nonNil(s.AllowedTools), Deny: deny}}
	if !s.Hook.Disabled {
		st.Hooks = map[string][]hookMatcher{
			"PreToolUse": {{
				Matcher: policy.HookMatcher(),
				Hooks: []hookCommand{{
					Type:    "command",
					Command: textx.ShellQuote(s.Hook.ZergBinary) + " hook pre-tool-use --policy " + textx.ShellQuote(s.policyPath()),
					Timeout: hookTimeoutSec,
				}},
			}},
		}
	}
	return json.MarshalIndent(st, "", "  ")
}

func nonNil(x []string) []string {
	if x == nil {
		return []string{}
	}
	return x
}

// prepare creates the attempt directory layout and writes the settings and
// policy files. With RunAs, home/, config/ and tmp/ become the worker's, the
// attempt dir and the two files stay ours (0755/0644: readable, never
// writable by the worker), and everything the worker must reach is checked,
// so a 0700 directory on the way fails here with its name instead of as an
// obscure CLI error.
func (s Spec) prepare() error {
	if st, err := os.Stat(s.Workdir); err != nil || !st.IsDir() {
		return fmt.Errorf("%w: workdir %s is not a directory", ErrBadSpec, s.Workdir)
	}
	if u := s.RunAs; u != nil {
		if err := u.PrepareAttemptDir(s.AttemptDir, homeDir, configDir, tmpDir); err != nil {
			return fmt.Errorf("%w: %v", ErrBadSpec, err)
		}
		checks := []struct {
			path string
			want int
			what string
		}{
			{s.Workdir, security.AccessRead | security.AccessWrite | security.AccessExec, "workdir (call PrepareWorkspace)"},
			{s.Binary, security.AccessRead | security.AccessExec, "claude binary"},
		}
		if s.Isolation != nil {
			// The isolation binds these paths in; the host's directories
			// above them are not on the way inside.
			checks = nil
		} else if !s.Hook.Disabled {
			checks = append(checks, struct {
				path string
				want int
				what string
			}{s.Hook.ZergBinary, security.AccessRead | security.AccessExec, "zerg binary (the hook)"})
		}
		for _, c := range checks {
			p := c.path
			if !filepath.IsAbs(p) {
				lp, err := exec.LookPath(p)
				if err != nil {
					return fmt.Errorf("%w: %s %s: %v", ErrBadSpec, c.what, p, err)
				}
				if p, err = filepath.Abs(lp); err != nil {
					return fmt.Errorf("%w: %s %s: %v", ErrBadSpec, c.what, lp, err)
				}
			}
			if err := u.CheckAccess(p, c.want); err != nil {
				return fmt.Errorf("%w: %s: %v", ErrBadSpec, c.what, err)
			}
		}
	} else {
		for _, d := range []string{s.AttemptDir, s.homePath(), s.configPath(), s.tmpPath()} {
			if err := os.MkdirAll(d, 0o700); err != nil {
				return fmt.Errorf("create attempt dir: %w", err)
			}
		}
	}
	data, err := s.settingsJSON()
	if err != nil {
		return fmt.Errorf("encode settings: %w", err)
	}
	// 0644: a worker running as another user must read it; it holds no secret.
	if err := writeFileMode(s.settingsPath(), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write settings: %w", err)
	}
	if !s.Hook.Disabled {
		if err := policy.Write(s.policyPath(), s.policy()); err != nil {
			return err
		}
	}
	return nil
}

// writeFileMode writes data with exactly mode perm (WriteFile keeps an
// existing file's mode).
func writeFileMode(path string, data []byte, perm os.FileMode) error {
	if err := os.WriteFile(path, data, perm); err != nil {
		return err
	}
	return os.Chmod(path, perm)
}
