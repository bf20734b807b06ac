package config

import "time"

// FileName is the config file's path relative to the repository root.
const FileName = ".zerg/config.yaml"

// SchemaVersion is the only config version this zerg reads.
const SchemaVersion = 1

// Enumerations accepted by the config.
var (
	Modes     = []string{"subprocess", "sandbox", "container", "tasks"}
	Schedules = []string{"level", "dag"}
)

// Config is the typed form of .zerg/config.yaml. The yaml tags are the option
// names; every option has a default in Default, and Template writes all of them
// with a comment. Durations are written as strings such as "60s" or "5m".
type Config struct {
	Version       int           `yaml:"version"`
	Workers       int           `yaml:"workers"`
	Mode          string        `yaml:"mode"`
	Schedule      string        `yaml:"schedule"`
	Claude        Claude        `yaml:"claude"`
	Models        Models        `yaml:"models"`
	Budget        Budget        `yaml:"budget"`
	Retry         Retry         `yaml:"retry"`
	Breaker       Breaker       `yaml:"breaker"`
	Backpressure  Backpressure  `yaml:"backpressure"`
	Heartbeat     Heartbeat     `yaml:"heartbeat"`
	Launch        Launch        `yaml:"launch"`
	Verification  Verification  `yaml:"verification"`
	Gates         []Gate        `yaml:"gates"`
	Env           Env           `yaml:"env"`
	Egress        Egress        `yaml:"egress"`
	Security      Security      `yaml:"security"`
	SecurityRules SecurityRules `yaml:"security_rules"`
	Context       Context       `yaml:"context"`
}

// Claude says how to start the Claude Code CLI.
type Claude struct {
	// Path is the claude binary: a path or a name looked up in PATH. Empty means
	// ZERG_CLAUDE, then the pinned install, then PATH (see internal/claude.Find).
	Path string `yaml:"path"`
	// BaseURL overrides ANTHROPIC_BASE_URL for workers; empty keeps the CLI's default.
	BaseURL string `yaml:"base_url"`
	// APIKeyEnv is the NAME of the environment variable holding the API key.
	// The key itself never appears in the config (it would end up in git).
	APIKeyEnv string `yaml:"api_key_env"`
}

// Models maps roles to a model alias (haiku, sonnet, opus) or a full model id.
// A task's own "model" field in the graph wins over its role.
type Models struct {
	Simple    string `yaml:"simple"`    // read-only and simple tasks
	Implement string `yaml:"implement"` // tasks that write code
	Plan      string `yaml:"plan"`      // zerg plan: requirements discovery
	Design    string `yaml:"design"`    // zerg design: design.md and the task graph
	Review    string `yaml:"review"`    // zerg review
	Debug     string `yaml:"debug"`     // zerg debug: failure diagnosis
	Fallback  string `yaml:"fallback"`  // --fallback-model when overloaded; empty: none
}

// Budget caps spending. Zero means no limit for the USD amounts and max_turns.
type Budget struct {
	TaskUSD         float64 `yaml:"task_usd"`
	RunUSD          float64 `yaml:"run_usd"`
	MaxTurns        int     `yaml:"max_turns"`
	ConfirmAboveUSD float64 `yaml:"confirm_above_usd"`
}

// Retry is the retry policy. Task failures spend TaskRetries; infra failures
// (rate limits, 5xx, stalls, crashes) are retried with backoff and do not.
type Retry struct {
	TaskRetries         int           `yaml:"task_retries"`
	InfraBackoffInitial time.Duration `yaml:"infra_backoff_initial"`
	InfraBackoffMax     time.Duration `yaml:"infra_backoff_max"`
	InfraMaxAttempts    int           `yaml:"infra_max_attempts"`
}

// Breaker is the circuit breaker on consecutive infra failures.
type Breaker struct {
	Failures int           `yaml:"failures"`
	Cooldown time.Duration `yaml:"cooldown"`
}

// Backpressure sets the failure-rate zones over a sliding window of attempts:
// below Yellow full concurrency, from Yellow half, from Red launches pause.
type Backpressure struct {
	Window     int     `yaml:"window"`
	MinSamples int     `yaml:"min_samples"`
	Yellow     float64 `yaml:"yellow"`
	Red        float64 `yaml:"red"`
}

// Heartbeat is the stall watchdog.
type Heartbeat struct {
	// StallTimeout kills a worker's process tree after this long without a
	// stream event. The CLI's own stream watchdog cannot go below 300 s.
	StallTimeout time.Duration `yaml:"stall_timeout"`
}

// Launch shapes how workers start.
type Launch struct {
	// Stagger delays the 2nd..Nth worker so the first can warm the prompt
	// cache; 0 starts all at once.
	Stagger time.Duration `yaml:"stagger"`
}

// Verification holds defaults for task verification commands.
type Verification struct {
	// Timeout applies when a task has no timeout_seconds.
	Timeout time.Duration `yaml:"timeout"`
}

// Gate is a quality gate run on the merged integration head.
type Gate struct {
	Name     string        `yaml:"name"`
	Command  string        `yaml:"command"`
	Timeout  time.Duration `yaml:"timeout"`
	Required bool          `yaml:"required"`
}

// Gate defaults for options a gate entry leaves out.
const (
	DefaultGateTimeout  = 10 * time.Minute
	DefaultGateRequired = true
)

// defaults fills the options a gate entry may leave out; the decoder calls it
// for every new list element.
func (g *Gate) defaults() {
	g.Timeout = DefaultGateTimeout
	g.Required = DefaultGateRequired
}

// Env lists extra environment variables passed to workers on top of zerg's
// built-in allowlist.
type Env struct {
	Pass []string `yaml:"pass"`
	// AllowDangerous overrides, by name, the refusal of dangerous names in
	// Pass (LD_*, NODE_OPTIONS, GIT_*, cloud and VCS credentials, …). Each
	// override is recorded in the audit log when a run starts.
	AllowDangerous []string `yaml:"allow_dangerous"`
}

// Egress is the network allowlist for sandbox and container workers.
type Egress struct {
	// Allow lists hosts ("host" or "host:port", "*.example.com" for
	// subdomains). The model API is reached through zerg's gateway and needs
	// no entry.
	Allow []string `yaml:"allow"`
}

// Security holds worker confinement options.
type Security struct {
	// WorkerUser is the unprivileged account workers run as when zerg runs
	// as root; zerg creates it (useradd --system) when it is missing.
	WorkerUser string `yaml:"worker_user"`
}

// DefaultWorkerUser is the default of security.worker_user (the same name as
// internal/security.DefaultWorkerUser; config does not import that package).
const DefaultWorkerUser = "zerg-worker"

// SecurityRules says where the security rules come from.
type SecurityRules struct {
	Enabled bool   `yaml:"enabled"`
	URL     string `yaml:"url"`
	// Commit pins the rules to a full commit id, never a branch.
	Commit string `yaml:"commit"`
	// SHA256 is the expected checksum of the fetched rules; empty: not checked.
	SHA256 string `yaml:"sha256"`
}

// Context is the context-pack budget.
type Context struct {
	// TokenBudget bounds the task-specific part of each worker's prompt.
	TokenBudget int `yaml:"token_budget"`
}

// Default rules source: a snapshot of it is in shared/corpora/secure-coding-rules.
const (
	DefaultRulesURL    = "https://github.com/TikiTribe/claude-secure-coding-rules"
	DefaultRulesCommit = "f644d862f89f926537591d64439c067b1e066ffe"
)

// Default returns the configuration used for every option the file leaves out.
// Model tiering follows the design: haiku where the work is read-only or
// simple, sonnet for code and conversation, opus only for design, where one
// good task graph saves many worker attempts.
func Default() Config {
	return Config{
		Version:  SchemaVersion,
		Workers:  4,
		Mode:     "subprocess",
		Schedule: "level",
		Claude: Claude{
			Path:      "",
			APIKeyEnv: "ANTHROPIC_API_KEY",
		},
		Models: Models{
			Simple:    "haiku",
			Implement: "sonnet",
			Plan:      "sonnet",
			Design:    "opus",
			Review:    "sonnet",
			Debug:     "sonnet",
		},
		Budget: Budget{
			TaskUSD:         3,
			RunUSD:          50,
			MaxTurns:        50,
			ConfirmAboveUSD: 10,
		},
		Retry: Retry{
			TaskRetries:         2,
			InfraBackoffInitial: 5 * time.Second,
			InfraBackoffMax:     5 * time.Minute,
			InfraMaxAttempts:    8,
		},
		Breaker:      Breaker{Failures: 5, Cooldown: 60 * time.Second},
		Backpressure: Backpressure{Window: 20, MinSamples: 5, Yellow: 0.2, Red: 0.5},
		Heartbeat:    Heartbeat{StallTimeout: 120 * time.Second},
		Verification: Verification{Timeout: 10 * time.Minute},
		Gates:        []Gate{},
		Env:          Env{Pass: []string{}, AllowDangerous: []string{}},
		Egress:       Egress{Allow: []string{}},
		Security:     Security{WorkerUser: DefaultWorkerUser},
		SecurityRules: SecurityRules{
			Enabled: true,
			URL:     DefaultRulesURL,
			Commit:  DefaultRulesCommit,
		},
		Context: Context{TokenBudget: 4000},
	}
}
