package claude

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zergrush/zerg/internal/security"
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

	// Hook configures the PreToolUse write-policy hook.
	Hook HookSpec

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

// HookSpec is the write-policy hook of one attempt.
type HookSpec struct {
	// ZergBinary is the zerg executable the CLI runs as
	// `<zerg> hook pre-tool-use --policy <file>`. Required unless Disabled.
	ZergBinary string
	// AllowedPaths are repo-relative paths or doublestar globs the agent may
	// write with Write/Edit/MultiEdit/NotebookEdit; empty denies every write.
	AllowedPaths []string
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

// ownedEnv are variables only the driver sets.
var ownedEnv = []string{"HOME", "CLAUDE_CONFIG_DIR", "CLAUDE_CODE_TMPDIR", EnvRunMarker, EnvAPIKey, EnvAuthToken, EnvBaseURL}

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
	if within(s.Workdir, s.AttemptDir) {
		return bad("attempt dir %s is inside the workdir %s", s.AttemptDir, s.Workdir)
	}
	if strings.TrimSpace(s.Prompt) == "" {
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
		pol := security.Policy{Version: security.PolicyVersion, Workspace: s.Workdir, Allow: s.Hook.AllowedPaths}
		if err := pol.Validate(); err != nil {
			return bad("%v", err)
		}
	}
	return s, nil
}

func within(parent, p string) bool {
	rel, err := filepath.Rel(parent, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

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
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
		"CLAUDE_CODE_MAX_RETRIES":                  strconv.Itoa(s.MaxRetries),
		EnvRunMarker:                               marker,
	}
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

// settingsJSON renders the settings file for a normalized spec.
func (s Spec) settingsJSON() ([]byte, error) {
	st := settings{Permissions: permissions{Allow: nonNil(s.AllowedTools), Deny: nonNil(s.DisallowedTools)}}
	if !s.Hook.Disabled {
		st.Hooks = map[string][]hookMatcher{
			"PreToolUse": {{
				Matcher: security.WriteToolsMatcher(),
				Hooks: []hookCommand{{
					Type:    "command",
					Command: shellQuote(s.Hook.ZergBinary) + " hook pre-tool-use --policy " + shellQuote(s.policyPath()),
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

// shellQuote quotes s for sh: hook commands are run through a shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// prepare creates the attempt directory layout and writes the settings and
// policy files.
func (s Spec) prepare() error {
	for _, d := range []string{s.AttemptDir, s.homePath(), s.configPath(), s.tmpPath()} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("create attempt dir: %w", err)
		}
	}
	if st, err := os.Stat(s.Workdir); err != nil || !st.IsDir() {
		return fmt.Errorf("%w: workdir %s is not a directory", ErrBadSpec, s.Workdir)
	}
	data, err := s.settingsJSON()
	if err != nil {
		return fmt.Errorf("encode settings: %w", err)
	}
	if err := os.WriteFile(s.settingsPath(), append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("write settings: %w", err)
	}
	if !s.Hook.Disabled {
		pol := &security.Policy{Version: security.PolicyVersion, Workspace: s.Workdir, Allow: nonNil(s.Hook.AllowedPaths)}
		if err := security.WritePolicy(s.policyPath(), pol); err != nil {
			return err
		}
	}
	return nil
}
