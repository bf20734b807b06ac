package config

import (
	"fmt"
	"math"
	"net"
	"net/url"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/zergrush/zerg/internal/security"
	"github.com/zergrush/zerg/internal/toolchain"
)

// Validate checks a Config held in memory and returns an *Error listing every
// problem (by option path; there is no file or line), or nil. Load and Parse
// run the same checks and add the file and line.
func (c Config) Validate() error {
	ps := c.problems()
	if len(ps) == 0 {
		return nil
	}
	return &Error{Problems: ps}
}

var (
	envNameRE  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	gateNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)
	modelRE    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:@/\[\]-]{0,127}$`)
	hexRE      = regexp.MustCompile(`^[0-9a-f]+$`)
	// At most 26 characters: sandbox mode adds "-N" per worker slot (up to
	// "-1024"), and user names end at 31.
	userNameRE = regexp.MustCompile(`^[a-z_][a-z0-9_-]{0,25}$`)
)

// CLIStallLimit is the Claude Code CLI's own stream watchdog: it never
// notices a stalled stream sooner. heartbeat.stall_timeout must be below it
// for zerg's watchdog to be the one that fires.
const CLIStallLimit = 300 * time.Second

// Upper bounds that catch typos (an extra zero) rather than express policy.
const (
	maxWorkers     = 64
	maxTaskRetries = 20
	maxInfraTries  = 100
)

// problems runs every check and returns what failed, each with the option
// path and what to do.
func (c Config) problems() []Problem {
	var ps []Problem
	add := func(path, format string, a ...any) {
		ps = append(ps, Problem{Field: path, Code: CodeBadValue, Message: fmt.Sprintf(format, a...)})
	}
	intRange := func(path string, v, lo, hi int) {
		if v < lo || v > hi {
			add(path, "%d is out of range; use a whole number from %d to %d", v, lo, hi)
		}
	}
	positive := func(path string, d time.Duration) {
		if d <= 0 {
			add(path, "%s must be longer than 0; write it like 60s", fmtDur(d))
		}
	}
	usd := func(path string, v float64) {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			add(path, "%v must be 0 (no limit) or a positive amount in USD", v)
		}
	}
	choice := func(path, v, what string, built, planned []string) {
		switch {
		case slices.Contains(built, v):
		case slices.Contains(planned, v):
			ps = append(ps, Problem{Field: path, Code: CodeNotAvailable,
				Message: fmt.Sprintf("%s is not available in this version; use %s", quote(v), oneOf(built))})
		default:
			add(path, "%s is not a %s; use %s", quote(v), what, oneOf(built))
		}
	}

	if c.Version != SchemaVersion {
		add("version", "%d is not a config version this zerg reads; write version: %d", c.Version, SchemaVersion)
	}
	intRange("workers", c.Workers, 1, maxWorkers)
	choice("mode", c.Mode, "mode", Modes, plannedModes)
	choice("schedule", c.Schedule, "schedule", Schedules, plannedSchedules)
	ps = append(ps, c.unavailableProblems()...)

	// claude
	if c.Claude.Path != "" && strings.TrimSpace(c.Claude.Path) != c.Claude.Path {
		add("claude.path", "%s has leading or trailing spaces; write the path alone, or leave it empty to find the pinned install", quote(c.Claude.Path))
	}
	if c.Claude.BaseURL != "" {
		if u, err := url.Parse(c.Claude.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			add("claude.base_url", "%s is not an http(s) URL; write it like https://api.anthropic.com or leave it empty", quote(c.Claude.BaseURL))
		}
	}
	if !envNameRE.MatchString(c.Claude.APIKeyEnv) {
		// Never echo the value: the usual mistake is pasting the key itself.
		add("claude.api_key_env", "must be the NAME of an environment variable (like ANTHROPIC_API_KEY), never the key itself")
	}
	if !envNameRE.MatchString(c.Claude.OAuthTokenEnv) {
		add("claude.oauth_token_env", "must be the NAME of an environment variable (like CLAUDE_CODE_OAUTH_TOKEN), never the token itself")
	}

	// models
	if !modelRE.MatchString(c.Models.Implement) {
		add("models.implement", "%s is not a model; use haiku, sonnet, opus or a model id like claude-sonnet-5", quote(c.Models.Implement))
	}
	if c.Models.Fallback != "" && !modelRE.MatchString(c.Models.Fallback) {
		add("models.fallback", "%s is not a model; use haiku, sonnet, opus, a model id, or leave it empty for none", quote(c.Models.Fallback))
	}
	for _, m := range []struct{ path, v string }{{"models.plan", c.Models.Plan}, {"models.design", c.Models.Design}, {"models.review", c.Models.Review}, {"models.simple", c.Models.Simple}} {
		if m.v != "" && !modelRE.MatchString(m.v) {
			add(m.path, "%s is not a model; use haiku, sonnet, opus, a model id, or leave it empty for models.implement", quote(m.v))
		}
	}

	// budget
	usd("budget.task_usd", c.Budget.TaskUSD)
	usd("budget.run_usd", c.Budget.RunUSD)
	usd("budget.confirm_above_usd", c.Budget.ConfirmAboveUSD)
	if c.Budget.MaxWorkersWithoutConfirm < 0 {
		add("budget.max_workers_without_confirm", "%d must be 0 (never ask) or a positive number of workers", c.Budget.MaxWorkersWithoutConfirm)
	}
	if c.Budget.OnExceed != OnExceedFinish && c.Budget.OnExceed != OnExceedCancel {
		add("budget.on_exceed", "%s is not a choice; use finish (running attempts finish) or cancel (they are stopped)", quote(c.Budget.OnExceed))
	}
	if c.Budget.MaxTurns < 0 {
		add("budget.max_turns", "%d must be 0 (no limit) or a positive number of turns", c.Budget.MaxTurns)
	}

	// retry
	intRange("retry.task_retries", c.Retry.TaskRetries, 0, maxTaskRetries)
	positive("retry.infra_backoff_initial", c.Retry.InfraBackoffInitial)
	positive("retry.infra_backoff_max", c.Retry.InfraBackoffMax)
	if c.Retry.InfraBackoffInitial > 0 && c.Retry.InfraBackoffMax > 0 && c.Retry.InfraBackoffInitial > c.Retry.InfraBackoffMax {
		add("retry.infra_backoff_initial", "%s is longer than retry.infra_backoff_max (%s); make it shorter", fmtDur(c.Retry.InfraBackoffInitial), fmtDur(c.Retry.InfraBackoffMax))
	}
	intRange("retry.infra_max_attempts", c.Retry.InfraMaxAttempts, 1, maxInfraTries)
	positive("retry.wait_for_reset_max", c.Retry.WaitForResetMax)
	if c.Retry.WaitForResetMax > MaxWaitForReset {
		add("retry.wait_for_reset_max", "%s is longer than a week (168h); a limit that far ahead is not waited for in a running process: use at most 168h and resume the run later", fmtDur(c.Retry.WaitForResetMax))
	}

	// breaker
	intRange("breaker.failures", c.Breaker.Failures, 1, 1000)
	positive("breaker.cooldown", c.Breaker.Cooldown)

	// backpressure
	intRange("backpressure.window", c.Backpressure.Window, 1, 10000)
	if c.Backpressure.Window >= 1 {
		intRange("backpressure.min_samples", c.Backpressure.MinSamples, 1, c.Backpressure.Window)
	}
	y, r := c.Backpressure.Yellow, c.Backpressure.Red
	switch {
	case !(y >= 0 && y <= 1):
		add("backpressure.yellow", "%v is not a failure rate; use a fraction from 0 to 1, below backpressure.red", y)
	case !(r >= 0 && r <= 1):
		add("backpressure.red", "%v is not a failure rate; use a fraction from 0 to 1, above backpressure.yellow", r)
	case y >= r:
		add("backpressure.yellow", "%v must be below backpressure.red (%v)", y, r)
	}

	positive("heartbeat.stall_timeout", c.Heartbeat.StallTimeout)
	if c.Heartbeat.StallTimeout >= CLIStallLimit {
		// Refused, not warned: at or past the CLI's own watchdog, a stall is
		// the CLI's to handle (it retries the request, with its fallback up
		// to 10 minutes) and zerg's never fires first, so the setting would
		// silently do nothing while looking like it protects the run.
		add("heartbeat.stall_timeout", "%s is not below the Claude Code CLI's own stream watchdog (%s), so it would never fire first; use less, like the default 120s",
			fmtDur(c.Heartbeat.StallTimeout), fmtDur(CLIStallLimit))
	}
	positive("verification.timeout", c.Verification.Timeout)
	intRange("design.max_rounds", c.Design.MaxRounds, 1, 20)

	// gates
	names := map[string]int{}
	for i, g := range c.Gates {
		p := fmt.Sprintf("gates[%d]", i)
		switch {
		case g.Name == "":
			add(p+".name", "every gate needs a name (like test or lint)")
		case !gateNameRE.MatchString(g.Name):
			add(p+".name", "%s is not a gate name; use letters, digits, '.', '_' or '-' (up to 64)", quote(g.Name))
		default:
			if first, dup := names[g.Name]; dup {
				add(p+".name", "%s is already the name of gates[%d]; gate names must be unique", quote(g.Name), first)
			} else {
				names[g.Name] = i
			}
		}
		if strings.TrimSpace(g.Command) == "" {
			add(p+".command", "is empty; write the shell command that runs the gate, like go test ./...")
		}
		positive(p+".timeout", g.Timeout)
		if g.When != "" && !slices.Contains(GateWhens, g.When) {
			add(p+".when", "%s is not a choice; use every_level (every merged level, every batch under the dag schedule) or last_level (only the merge that completes the graph)", quote(g.When))
		}
	}
	if c.Security.RefusedWrites != RefusedWritesReport && c.Security.RefusedWrites != RefusedWritesFail {
		add("security.refused_writes", "%s is not a choice; use report (a refused write is shown with the result) or fail (it also fails the attempt)", quote(c.Security.RefusedWrites))
	}
	if c.Commits.Author != CommitAuthorUser && c.Commits.Author != CommitAuthorZerg {
		add("commits.author", "%s is not a choice; use user (your git user.name and user.email) or zerg", quote(c.Commits.Author))
	}

	// sandbox mode: egress, limits; protected paths (both modes)
	for i, h := range c.Egress.Allow {
		p := fmt.Sprintf("egress.allow[%d]", i)
		if !egressRE.MatchString(h) {
			add(p, "%s is not a host; write a name like proxy.golang.org, name:port, or *.example.com", quote(h))
		}
	}
	if len(c.Egress.Allow) > 0 && c.Mode == "subprocess" {
		add("egress.allow", "applies to sandbox mode only: subprocess mode cannot restrict the network; use mode: sandbox or remove the list")
	}
	for _, l := range []struct {
		path string
		v    int
	}{{"sandbox.memory_mb", c.Sandbox.MemoryMB}, {"sandbox.processes", c.Sandbox.Processes}, {"sandbox.cpu_seconds", c.Sandbox.CPUSeconds},
		{"sandbox.file_size_mb", c.Sandbox.FileSizeMB}, {"sandbox.open_files", c.Sandbox.OpenFiles}} {
		intRange(l.path, l.v, 0, 1<<30)
	}
	intRange("sandbox.max_commit_file_mb", c.Sandbox.MaxCommitFileMB, 1, 4096)
	intRange("gateway.max_tokens", c.Gateway.MaxTokens, 0, 1<<30)
	for i, b := range c.Gateway.Betas {
		if !betaRE.MatchString(b) {
			add(fmt.Sprintf("gateway.betas[%d]", i), "%s is not a beta feature name; write one like files-api-2025-04-14", quote(b))
		}
	}
	for i, n := range c.Gateway.ServerTools {
		if !slices.Contains(ServerToolNames, n) {
			add(fmt.Sprintf("gateway.server_tools[%d]", i), "%s is not a server-side tool zerg knows; use one of %s", quote(n), strings.Join(ServerToolNames, ", "))
		}
	}
	if (len(c.Gateway.Betas) > 0 || len(c.Gateway.ServerTools) > 0 || c.Gateway.Strict) && c.Mode == ModeSubprocess {
		add("gateway", "applies to sandbox mode only: in subprocess mode the worker holds the key and talks to the API itself; use mode: sandbox or remove it")
	}
	switch c.Container.Runtime {
	case "auto", "podman", "docker":
	default:
		add("container.runtime", "%s is not a container engine zerg drives; use auto, podman or docker", quote(c.Container.Runtime))
	}
	if img := c.Container.Image; img != "" && (strings.TrimSpace(img) != img || strings.HasPrefix(img, "-") || strings.ContainsAny(img, " \t\n")) {
		add("container.image", "%s is not an image reference; write one like localhost/myproject:dev, or leave it empty for the repository's devcontainer", quote(img))
	}
	positive("tasks.lease", c.Tasks.Lease)
	validateCluster(c.Cluster, c.Mode, add)
	intRange("disk.min_free_mb", c.Disk.MinFreeMB, 0, 1<<30)
	intRange("disk.workspace_mb", c.Disk.WorkspaceMB, 0, 1<<30)
	for i, g := range c.Security.ProtectedPaths {
		p := fmt.Sprintf("security.protected_paths[%d]", i)
		// As security.NewProtectedPaths reads it: "./" alone is no path.
		if strings.TrimPrefix(g, "./") == "" || strings.HasPrefix(g, "/") || strings.Contains(g, "..") || !doublestar.ValidatePattern(g) {
			add(p, "%s is not a repository-relative glob; write one like deploy/** or Makefile", quote(g))
		}
	}

	for i, g := range c.Security.AllowProtected {
		if _, err := security.NewOpening([]string{g}); err != nil {
			add(fmt.Sprintf("security.allow_protected[%d]", i), "%v", err)
		}
	}

	// toolchains, caches and the worker policy
	for i, n := range c.Toolchains.Off {
		if !slices.Contains(toolchain.Names(), n) {
			add(fmt.Sprintf("toolchains.off[%d]", i), "%s is not a toolchain zerg knows; use one of %s", quote(n), strings.Join(toolchain.Names(), ", "))
		}
	}
	for i, n := range c.Caches.Off {
		if !slices.Contains(CacheNames, n) {
			add(fmt.Sprintf("caches.off[%d]", i), "%s is not a cache zerg knows; use one of %s", quote(n), strings.Join(CacheNames, ", "))
		}
	}
	for _, l := range []struct {
		path  string
		paths []string
	}{{"toolchains.paths", c.Toolchains.Paths}, {"caches.read_only", c.Caches.ReadOnly}} {
		for i, d := range l.paths {
			if !filepath.IsAbs(d) || filepath.Clean(d) == "/" {
				add(fmt.Sprintf("%s[%d]", l.path, i), "%s is not an absolute directory; write one like /opt/tools/bin", quote(d))
			}
		}
	}
	for _, l := range []struct {
		path  string
		names []string
	}{{"worker_policy.allow_commands", c.WorkerPolicy.AllowCommands}, {"worker_policy.deny_commands", c.WorkerPolicy.DenyCommands}} {
		for i, n := range l.names {
			if !commandNameRE.MatchString(n) {
				add(fmt.Sprintf("%s[%d]", l.path, i), "%s is not a program name; write a name like bd or mise, without arguments or a path", quote(n))
			}
		}
	}

	// env pass-through
	seenEnv := map[string]bool{}
	for i, name := range c.Env.Pass {
		p := fmt.Sprintf("env.pass[%d]", i)
		if n, _, hasValue := strings.Cut(name, "="); hasValue {
			// Show only the name part: the rest may be a secret.
			add(p, "%s=… is not a variable name; list names only, the values come from zerg's own environment", quote(n))
			continue
		}
		if !envNameRE.MatchString(name) {
			add(p, "%s is not an environment variable name; use letters, digits and '_'", quote(name))
			continue
		}
		if seenEnv[name] {
			add(p, "%s is listed twice; keep one", quote(name))
		}
		seenEnv[name] = true
		if why := security.DangerousEnv(name); why != "" && !slices.Contains(c.Env.AllowDangerous, name) {
			add(p, "%s %s; workers do not get it unless you also list it under env.allow_dangerous", quote(name), why)
		}
	}
	for i, name := range c.Env.AllowDangerous {
		if !seenEnv[name] {
			add(fmt.Sprintf("env.allow_dangerous[%d]", i), "%s is not in env.pass; list it there too, or remove it here", quote(name))
		}
	}

	// security
	if wu := c.Security.WorkerUser; wu == "root" {
		add("security.worker_user", "must not be root: workers would run with full privileges; use an unprivileged account such as %s", DefaultWorkerUser)
	} else if !userNameRE.MatchString(wu) {
		add("security.worker_user", "%s is not a user name; use lower-case letters, digits, _ and - (at most 26, since sandbox mode adds -N for each worker slot; not starting with a digit or -), e.g. %s", quote(wu), DefaultWorkerUser)
	}

	// security rules
	sr := c.SecurityRules
	if sr.Enabled || sr.URL != "" {
		if msg := checkRulesURL(sr.URL); msg != "" {
			add("security_rules.url", "%s", msg)
		}
	}
	if sr.Enabled || sr.Commit != "" {
		if !(hexRE.MatchString(sr.Commit) && (len(sr.Commit) == 40 || len(sr.Commit) == 64)) {
			add("security_rules.commit", "%s is not a full commit id; pin the rules to a full 40-character lower-case commit hash, not a branch or tag", quote(sr.Commit))
		}
	}
	if sr.SHA256 != "" && !(hexRE.MatchString(sr.SHA256) && len(sr.SHA256) == 64) {
		add("security_rules.sha256", "%s is not a SHA-256; write 64 lower-case hex digits or leave it empty", quote(sr.SHA256))
	}

	if c.Context.TokenBudget < 1 || c.Context.TokenBudget > 1_000_000 {
		add("context.token_budget", "%d is out of range; use a number of tokens from 1 to 1000000 (default 4000)", c.Context.TokenBudget)
	}
	return ps
}

// checkRulesURL accepts the git URLs a rules fetch can use: https, http, ssh,
// git, file, or an absolute local path (tests and air-gapped mirrors).
func checkRulesURL(s string) string {
	const how = "; write a git repository URL like " + DefaultRulesURL
	if s == "" {
		return "is empty" + how + ", or set security_rules.enabled: false"
	}
	if strings.HasPrefix(s, "/") {
		return ""
	}
	u, err := url.Parse(s)
	if err != nil {
		return quote(s) + " is not a URL" + how
	}
	switch u.Scheme {
	case "https", "http", "ssh", "git":
		if u.Host == "" {
			return quote(s) + " has no host" + how
		}
	case "file":
	default:
		return quote(s) + " is not a git URL" + how
	}
	return ""
}

// notBuilt describes an option tagged zerg:"unavailable": the default earlier
// versions of zerg init wrote into every config (accepted like the zero value,
// so those files still load; nil when that default was the zero value), and
// what to do instead.
type notBuilt struct {
	old  any
	hint string
}

// unavailable lists every option this version parses but does not build,
// keyed by option path. A test holds it to the zerg:"unavailable" tags.
// CacheNames are the caches internal/toolchain knows, by their name in caches.off.
var CacheNames = []string{"go-mod", "go-build", "npm", "pip", "uv", "cargo"}

// commandNameRE is a program name as a policy rule names it.
var commandNameRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._+-]{0,63}$`)

// betaRE is an anthropic-beta feature name.
var betaRE = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{0,99}$`)

// ServerToolNames are the values gateway.server_tools takes (the
// gateway's ServerTools; config does not import that package).
var ServerToolNames = []string{"web_search", "web_fetch", "code_execution", "mcp"}

// egressRE is a host name, a host:port, or a *. wildcard of a domain.
var egressRE = regexp.MustCompile(`^(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*(:[0-9]{1,5})?$`)

var unavailable = map[string]notBuilt{
	"models.debug":   {"sonnet", "there is no zerg debug command; remove the line"},
	"launch.stagger": {nil, "workers start together; remove the line"},
}

// unavailableProblems reports each option that is not built and is set to
// something other than its zero value or its old default.
func (c Config) unavailableProblems() []Problem {
	var ps []Problem
	walkUnavailable(reflect.ValueOf(c), "", false, func(path string, v reflect.Value) {
		nb, ok := unavailable[path]
		if !ok {
			panic("config: no entry in unavailable for " + path)
		}
		if empty(v) || (nb.old != nil && reflect.DeepEqual(v.Interface(), nb.old)) {
			return
		}
		ps = append(ps, Problem{Field: path, Code: CodeNotAvailable, Message: "is not available in this version; " + nb.hint})
	})
	return ps
}

// clearUnavailable sets every option that is not built to its zero value,
// so no code can come to depend on it.
func (c *Config) clearUnavailable() {
	walkUnavailable(reflect.ValueOf(c).Elem(), "", false, func(_ string, v reflect.Value) {
		v.SetZero()
	})
}

// walkUnavailable calls fn for every leaf option of v that is tagged
// zerg:"unavailable" or sits in a tagged section.
func walkUnavailable(v reflect.Value, path string, tagged bool, fn func(string, reflect.Value)) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		p := join(path, tagName(f))
		in := tagged || isUnavailable(f)
		switch {
		case f.Type.Kind() == reflect.Struct && f.Type != durationType:
			walkUnavailable(v.Field(i), p, in, fn)
		case in:
			fn(p, v.Field(i))
		}
	}
}

// isUnavailable says whether a Config field is an option this version does not build.
func isUnavailable(f reflect.StructField) bool { return f.Tag.Get("zerg") == "unavailable" }

func empty(v reflect.Value) bool {
	if v.Kind() == reflect.Slice {
		return v.Len() == 0
	}
	return v.IsZero()
}

// oneOf lists choices as a sentence does: "a", "a or b", "a, b or c".
func oneOf(choices []string) string {
	if len(choices) < 3 {
		return strings.Join(choices, " or ")
	}
	return strings.Join(choices[:len(choices)-1], ", ") + " or " + choices[len(choices)-1]
}

// validateCluster checks the cluster section: a URL agents can dial, a
// listen address, and a way for the coordinator to reach the server.
func validateCluster(cl Cluster, mode string, add func(path, format string, a ...any)) {
	if d := cl.AckWait; d < 5*time.Second || d > 24*time.Hour {
		add("cluster.ack_wait", "%s is out of range; use 5s to 24h", FormatDuration(d))
	}
	if cl.MaxDeliver < 1 || cl.MaxDeliver > 100 {
		add("cluster.max_deliver", "%d is out of range; use 1 to 100", cl.MaxDeliver)
	}
	if _, port, err := net.SplitHostPort(cl.Listen); err != nil || port == "" {
		add("cluster.listen", "%s is not host:port; write one like 0.0.0.0:4222", quote(cl.Listen))
	}
	if cl.AgentKey != AgentKeyCoordinator && cl.AgentKey != AgentKeyLocal {
		add("cluster.agent_key", "%s is not a key an agent uses; write coordinator (the default: through the coordinator) or local (the agent host's own ANTHROPIC_API_KEY)", quote(cl.AgentKey))
	}
	if cl.URL == "" {
		return
	}
	if err := ClusterURLProblem(cl.URL); err != "" {
		add("cluster.url", "%s", err)
	}
	if mode == ModeTasks {
		add("cluster.url", "tasks mode runs its workers in your own session; cluster mode needs mode subprocess, sandbox or container")
	}
	if cl.Embed && cl.Creds != "" {
		add("cluster.creds", "is for a server zerg does not embed; remove it or set cluster.embed: false")
	}
	if !cl.Embed && cl.Creds == "" {
		add("cluster.creds", "is empty: the coordinator needs credentials for a server it does not embed (or set cluster.embed: true)")
	}
}

// ClusterURLProblem says what is wrong with a cluster URL ("" for
// nothing): agents dial it, so it needs a scheme, a host and a port.
func ClusterURLProblem(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "nats" && u.Scheme != "tls") || u.Hostname() == "" || u.Port() == "" || u.Path != "" {
		return fmt.Sprintf("%s is not a server address; write one like tls://coordinator.example:4222", quote(raw))
	}
	return ""
}
