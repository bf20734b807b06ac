package config

import (
	"time"

	"github.com/zergrush/zerg/internal/security"
)

// FileName is the config file's path relative to the repository root.
const FileName = ".zerg/config.yaml"

// SchemaVersion is the only config version this zerg reads.
const SchemaVersion = 1

// The values of mode and schedule this version runs. A config asking for one
// that is planned but not built (plannedModes, plannedSchedules) is told it is
// not available in this version, rather than failing later in zerg rush.
// The modes this version runs.
const (
	ModeSandbox    = "sandbox"
	ModeSubprocess = "subprocess"
	ModeContainer  = "container"
	ModeTasks      = "tasks"
)

// The schedules this version runs (docs/schedule.md).
const (
	// ScheduleLevel runs a level's tasks, merges them all or none through
	// the gates, then starts the next level.
	ScheduleLevel = "level"
	// ScheduleDAG starts a task as soon as its dependencies are merged and
	// merges finished tasks in batches through the gates.
	ScheduleDAG = "dag"
)

var (
	Modes     = []string{ModeSandbox, ModeSubprocess, ModeContainer, ModeTasks}
	Schedules = []string{ScheduleLevel, ScheduleDAG}

	plannedModes     = []string{}
	plannedSchedules = []string{}
)

// Config is the typed form of .zerg/config.yaml. The yaml tags are the option
// names; every option has a default in Default, and Template writes all of them
// with a comment. Durations are written as strings such as "60s" or "5m".
//
// Fields tagged zerg:"unavailable" are options this version parses but does
// not build (see unavailable in validate.go): a file may set them only to
// their zero value or to the default earlier versions of zerg init wrote,
// Parse leaves them zero, and Template, docs and config show leave them out.
// No code should read them.
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
	Launch        Launch        `yaml:"launch" zerg:"unavailable"`
	Verification  Verification  `yaml:"verification"`
	Design        Design        `yaml:"design"`
	Gates         []Gate        `yaml:"gates"`
	Env           Env           `yaml:"env"`
	Egress        Egress        `yaml:"egress"`
	Gateway       Gateway       `yaml:"gateway"`
	Sandbox       Sandbox       `yaml:"sandbox"`
	Container     Container     `yaml:"container"`
	Tasks         Tasks         `yaml:"tasks"`
	Cluster       Cluster       `yaml:"cluster"`
	Disk          Disk          `yaml:"disk"`
	Toolchains    Toolchains    `yaml:"toolchains"`
	Caches        Caches        `yaml:"caches"`
	WorkerPolicy  WorkerPolicy  `yaml:"worker_policy"`
	Security      Security      `yaml:"security"`
	Commits       Commits       `yaml:"commits"`
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
	// OAuthTokenEnv is the NAME of the environment variable holding a
	// subscription (Pro/Max) token, as `claude setup-token` prints it. An
	// API key, when set too, wins.
	OAuthTokenEnv string `yaml:"oauth_token_env"`
}

// Models names the models workers use: an alias (haiku, sonnet, opus) or a
// full model id. A task's own "model" field in the graph wins.
type Models struct {
	Implement string `yaml:"implement"` // tasks that write code
	Fallback  string `yaml:"fallback"`  // --fallback-model when overloaded; empty: none
	// The sessions of zerg plan, zerg design and zerg review; empty: Implement.
	Plan   string `yaml:"plan"`
	Design string `yaml:"design"`
	Review string `yaml:"review"`

	// Simple is the model of tasks that own no file or only documentation
	// (*.md, *.txt, *.rst, *.adoc, docs/**); empty: Implement.
	Simple string `yaml:"simple"`

	// Not built: no other role starts a model in this version.
	Debug string `yaml:"debug" zerg:"unavailable"`
}

// For returns the model of a journey role: its own when set, else Implement.
func (m Models) For(role string) string {
	v := map[string]string{"plan": m.Plan, "design": m.Design, "review": m.Review}[role]
	if v == "" {
		return m.Implement
	}
	return v
}

// Budget caps spending. Zero means no limit (no question) for every field.
type Budget struct {
	TaskUSD  float64 `yaml:"task_usd"`
	MaxTurns int     `yaml:"max_turns"`
	// RunUSD: no attempt starts when what the run spent plus the projected
	// cost of the attempts in flight and of the next one would pass it.
	RunUSD float64 `yaml:"run_usd"`
	// OnExceed: what the attempts in flight do when RunUSD stops the
	// launching: finish (default) or cancel.
	OnExceed string `yaml:"on_exceed"`
	// ConfirmAboveUSD: zerg rush asks (y/N) before a run whose projected
	// high figure is above it, and refuses without a terminal unless --yes.
	ConfirmAboveUSD float64 `yaml:"confirm_above_usd"`
	// MaxWorkersWithoutConfirm: zerg rush asks the same way before a
	// fan-out (workers that can run at once) above it.
	MaxWorkersWithoutConfirm int `yaml:"max_workers_without_confirm"`
}

// What running attempts do when budget.run_usd stops the launching.
const (
	OnExceedFinish = "finish"
	OnExceedCancel = "cancel"
)

// Retry is the retry policy. Task failures spend TaskRetries; infra failures
// (rate limits, 5xx, stalls, crashes) are retried with backoff and do not.
type Retry struct {
	TaskRetries         int           `yaml:"task_retries"`
	InfraBackoffInitial time.Duration `yaml:"infra_backoff_initial"`
	InfraBackoffMax     time.Duration `yaml:"infra_backoff_max"`
	InfraMaxAttempts    int           `yaml:"infra_max_attempts"`
	// WaitForReset: an account's usage limit that says when it resets
	// pauses the run until then, and the run goes on by itself, instead
	// of ending resumable. zerg rush --wait-for-reset sets it.
	WaitForReset bool `yaml:"wait_for_reset"`
	// WaitForResetMax: a reset further ahead than this is not waited for
	// (the run ends resumable as without WaitForReset).
	WaitForResetMax time.Duration `yaml:"wait_for_reset_max"`
}

// MaxWaitForReset bounds retry.wait_for_reset_max: a week, the longest
// usage window a subscription has.
const MaxWaitForReset = 7 * 24 * time.Hour

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

// Launch shapes how workers start. Not built: workers start together.
type Launch struct {
	Stagger time.Duration `yaml:"stagger" zerg:"unavailable"`
}

// Verification holds defaults for task verification commands.
type Verification struct {
	// Timeout applies when a task has no timeout_seconds.
	Timeout time.Duration `yaml:"timeout"`
}

// Design tunes zerg design.
type Design struct {
	// MaxRounds bounds the design sessions: round 1 writes the task graph,
	// each later round gets the validation errors of the previous one.
	MaxRounds int `yaml:"max_rounds"`
}

// Gate is a quality gate run on the merged integration head.
type Gate struct {
	Name     string        `yaml:"name"`
	Command  string        `yaml:"command"`
	Timeout  time.Duration `yaml:"timeout"`
	Required bool          `yaml:"required"`
	// When is which merges the gate runs on: GateEveryLevel (also when
	// empty) or GateLastLevel (a full suite that needs what later levels
	// add).
	When string `yaml:"when,omitempty"`
}

// The values of gates[].when.
const (
	// GateEveryLevel runs the gate on every merged level (every batch,
	// under the dag schedule).
	GateEveryLevel = "every_level"
	// GateLastLevel runs it only on the merge that completes the graph:
	// the last level's (the batch that merges the graph's last tasks).
	GateLastLevel = "last_level"
)

// GateWhens lists the values of gates[].when.
var GateWhens = []string{GateEveryLevel, GateLastLevel}

// Gate defaults for options a gate entry leaves out.
const (
	DefaultGateTimeout  = 10 * time.Minute
	DefaultGateRequired = true
)

// RunsOn reports whether the gate runs on a merge; last says it is the
// merge that completes the graph.
func (g Gate) RunsOn(last bool) bool { return g.When != GateLastLevel || last }

// EffectiveTimeout is the gate's timeout, the default when it has none.
func (g Gate) EffectiveTimeout() time.Duration {
	if g.Timeout <= 0 {
		return DefaultGateTimeout
	}
	return g.Timeout
}

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

// Egress is the network allowlist of sandbox mode: the hosts a worker may
// reach through its gateway besides the model API. Empty: none.
type Egress struct {
	Allow []string `yaml:"allow"`
}

// Gateway is what a sandboxed worker's model-API requests may ask for
// (docs/gateway.md): the gateway refuses anything else before it reaches
// the API. The model must be the task's (or the fallback), and the budget
// is budget.task_usd and budget.run_usd.
type Gateway struct {
	// MaxTokens caps a request's max_tokens. 0 (the default) follows the
	// CLI: the most it asked for in zerg's launch probe, and at least
	// 128000 (Claude Code 2.1.332 asks for 128000 with every model).
	MaxTokens int `yaml:"max_tokens"`
	// Betas are anthropic-beta features allowed on top of the ones zerg
	// has reviewed, those of the families it refuses included.
	Betas []string `yaml:"betas"`
	// Strict refuses every beta, body field and content block zerg has
	// not reviewed, even the CLI's own; otherwise they are forwarded and
	// audited (docs/gateway.md).
	Strict bool `yaml:"strict"`
	// ServerTools are server-side tools the API may run for a worker:
	// web_search, web_fetch, code_execution, mcp. Their domains and MCP
	// servers must also be in egress.allow.
	ServerTools []string `yaml:"server_tools"`
}

// Disk bounds what runs take of the disk zerg's own records live on.
type Disk struct {
	// MinFreeMB: no attempt starts while the filesystem of the run's
	// records or of the workspaces has less free; an attempt whose
	// workspace grows while free space is below it is stopped.
	MinFreeMB int `yaml:"min_free_mb"`
	// WorkspaceMB bounds what one attempt may write: its workspace, home,
	// CLAUDE_CONFIG_DIR and scratch space together. 0: no limit.
	WorkspaceMB int `yaml:"workspace_mb"`
}

// Sandbox holds the resource limits of each sandboxed command (a worker,
// its verification, a gate) and of what it may commit.
type Sandbox struct {
	MemoryMB        int `yaml:"memory_mb"`          // memory of the command's processes together (a cgroup where the machine has one) and of each (RLIMIT_DATA); 0: no limit
	Processes       int `yaml:"processes"`          // processes of the command together (a cgroup) and of the worker's uid (RLIMIT_NPROC); 0: no limit
	CPUSeconds      int `yaml:"cpu_seconds"`        // CPU time per process (RLIMIT_CPU); 0: no limit
	FileSizeMB      int `yaml:"file_size_mb"`       // largest file it may write (RLIMIT_FSIZE); 0: no limit
	OpenFiles       int `yaml:"open_files"`         // open files per process (RLIMIT_NOFILE); 0: no limit
	MaxCommitFileMB int `yaml:"max_commit_file_mb"` // largest file zerg commits from a worker
}

// Container says where container mode's containers come from
// (docs/container.md). Their limits are sandbox.*.
type Container struct {
	// Runtime is the engine: auto (podman, then docker), podman or docker.
	Runtime string `yaml:"runtime"`
	// Image is an image the engine has (zerg never pulls). Empty: the
	// image of the repository's devcontainer (.devcontainer/devcontainer.json
	// or .devcontainer.json), built from its Dockerfile when it names one.
	Image string `yaml:"image"`
}

// Tasks is tasks mode, where the user's own Claude Code session runs the
// workers as Task subagents (docs/modes.md).
type Tasks struct {
	// Lease is how long a handed-out task waits for `zerg tasks done`
	// before its attempt fails as stalled and the task is handed out again.
	Lease time.Duration `yaml:"lease"`
}

// Cluster sends a run's attempts to agents on other machines over NATS
// JetStream (docs/cluster.md). The run's mode stays the isolation every
// attempt needs: an agent that cannot give it refuses the attempt.
type Cluster struct {
	// URL is the server agents dial (nats://host:port or tls://host:port);
	// "" runs every attempt on this machine.
	URL string `yaml:"url"`
	// Embed makes the coordinator run the server itself (TLS, its file
	// store in .zerg/runs/.cluster), listening on Listen.
	Embed bool `yaml:"embed"`
	// Listen is host:port the embedded server listens on.
	Listen string `yaml:"listen"`
	// Creds is the coordinator's credentials file for a server it does not
	// embed ("" with embed).
	Creds string `yaml:"creds"`
	// AckWait is how long an agent may go silent before its attempt is
	// delivered to another agent; MaxDeliver bounds the deliveries of one
	// attempt (then it fails as infra).
	AckWait    time.Duration `yaml:"ack_wait"`
	MaxDeliver int           `yaml:"max_deliver"`
	// AgentKey is whose key an agent's workers use: AgentKeyCoordinator
	// (the coordinator's, through the tunnel and its gateway) or
	// AgentKeyLocal (the agent host's own ANTHROPIC_API_KEY).
	AgentKey string `yaml:"agent_key"`
}

// The values of cluster.agent_key.
const (
	AgentKeyCoordinator = "coordinator"
	AgentKeyLocal       = "local"
)

// Toolchains says which of the repository's toolchains zerg equips workers,
// their verification and the gates with (docs/toolchains.md).
type Toolchains struct {
	// Off names detected toolchains (go, node, python, rust, elixir, make,
	// mise) to leave alone: no caches, no install directories, no commands
	// added to the subprocess-mode policy.
	Off []string `yaml:"off"`
	// Paths are extra host directories of programs, put first on PATH and
	// visible read-only in sandbox mode (a toolchain zerg does not find).
	Paths []string `yaml:"paths"`
}

// Caches says which package and build caches workers get.
type Caches struct {
	// Off names caches to leave out: go-mod, go-build, npm, pip, uv, cargo.
	Off []string `yaml:"off"`
	// ReadOnly are extra host directories visible read-only in sandbox
	// mode (a cache zerg does not know).
	ReadOnly []string `yaml:"read_only"`
}

// WorkerPolicy extends the hook's command policy.
type WorkerPolicy struct {
	// AllowCommands are programs a worker may run in subprocess mode, with
	// any arguments, on top of those inferred from the repository.
	AllowCommands []string `yaml:"allow_commands"`
	// DenyCommands are programs a worker may never run, in either mode, on
	// top of zerg's own list of commands that reach outside.
	DenyCommands []string `yaml:"deny_commands"`
}

// Security holds worker confinement options.
type Security struct {
	// WorkerUser is the unprivileged account workers run as when zerg runs
	// as root; zerg creates it (useradd --system) when it is missing.
	WorkerUser string `yaml:"worker_user"`
	// ProtectedPaths are globs a worker's commit may never touch, on top of
	// zerg's own list (.git*, .zerg/, .claude/, CI configuration, hooks),
	// whatever a task's ownership says. Both modes.
	ProtectedPaths []string `yaml:"protected_paths"`
	// AllowProtected are globs of protected paths a task may change when
	// its files name them (not through a glob): CI workflows, a
	// devcontainer. zerg review and zerg merge put every such change before
	// a person. git's, zerg's and Claude Code's own files can never be
	// opened.
	AllowProtected []string `yaml:"allow_protected"`
	// RefusedWrites is what a write the worker's hook refused (a file the
	// task does not own, a protected one) does to its attempt:
	// RefusedWritesReport records it and shows it with the result,
	// RefusedWritesFail also fails the attempt, so that it is retried
	// with the refusal in its prompt.
	RefusedWrites string `yaml:"refused_writes"`
}

// The values of security.refused_writes.
const (
	RefusedWritesReport = "report"
	RefusedWritesFail   = "fail"
)

// Commits says whose name zerg's commits carry (docs/configuration.md):
// the task commits, the merges on the integration branch and the merge on
// your branch.
type Commits struct {
	// Author is CommitAuthorUser (the repository's user.name and
	// user.email, as git would use them; zerg's own identity where they
	// are not set) or CommitAuthorZerg. zerg is the committer either way,
	// unless Sign.
	Author string `yaml:"author"`
	// Signoff adds "Signed-off-by: <author>" to each commit (DCO).
	Signoff bool `yaml:"signoff"`
	// Sign signs each commit with your git signing setup (gpg.format,
	// user.signingKey, gpg.program; an agent or a key without a
	// passphrase: zerg never prompts). A signed commit names you as its
	// committer too, and carries a Zerg-Feature trailer instead.
	Sign bool `yaml:"sign"`
}

// The values of commits.author.
const (
	CommitAuthorUser = "user"
	CommitAuthorZerg = "zerg"
)

// DefaultWorkerUser is the default of security.worker_user.
const DefaultWorkerUser = security.DefaultWorkerUser

// SecurityRules says where the security rules come from.
type SecurityRules struct {
	Enabled bool   `yaml:"enabled"`
	URL     string `yaml:"url"`
	// Commit pins the rules to a full commit id, never a branch.
	Commit string `yaml:"commit"`
	// SHA256 is the expected checksum of the fetched rules; empty: not checked.
	SHA256 string `yaml:"sha256"`
}

// Checksum is the checksum the rules at commit must have: sha256 pins only
// the configured commit; another commit (zerg rules update --commit) has
// only the checksum built into zerg for it, if any.
func (r SecurityRules) Checksum(commit string) string {
	if commit == r.Commit {
		return security.ExpectedChecksum(commit, r.SHA256)
	}
	return security.ExpectedChecksum(commit, "")
}

// Context is the context-pack budget.
type Context struct {
	// TokenBudget bounds each worker's context pack (internal/contextpack),
	// the task-specific part of its prompt: the task, its files, its
	// dependencies' files and summaries, the spec sections most relevant to
	// it and the security rules of its languages (the rules are sure of up
	// to half of what the task and its dependencies leave). It also bounds
	// what zerg rules show prints (all of it).
	TokenBudget int `yaml:"token_budget"`
}

// Default rules source: the upstream repository and the commit zerg pins.
const (
	DefaultRulesURL    = "https://github.com/TikiTribe/claude-secure-coding-rules"
	DefaultRulesCommit = "f644d862f89f926537591d64439c067b1e066ffe"
)

// Default returns the configuration used for every option the file leaves out.
func Default() Config {
	return Config{
		Version:  SchemaVersion,
		Workers:  4,
		Mode:     ModeSandbox,
		Schedule: ScheduleLevel,
		Claude: Claude{
			Path:          "",
			APIKeyEnv:     "ANTHROPIC_API_KEY",
			OAuthTokenEnv: "CLAUDE_CODE_OAUTH_TOKEN",
		},
		Models: Models{Implement: "sonnet", Simple: "haiku"},
		Budget: Budget{TaskUSD: 3, MaxTurns: 50, OnExceed: OnExceedFinish, ConfirmAboveUSD: 25, MaxWorkersWithoutConfirm: 16},
		Retry: Retry{
			TaskRetries:         2,
			InfraBackoffInitial: 5 * time.Second,
			InfraBackoffMax:     5 * time.Minute,
			InfraMaxAttempts:    8,
			WaitForResetMax:     6 * time.Hour,
		},
		Breaker:      Breaker{Failures: 5, Cooldown: 60 * time.Second},
		Backpressure: Backpressure{Window: 20, MinSamples: 5, Yellow: 0.2, Red: 0.5},
		Heartbeat:    Heartbeat{StallTimeout: 120 * time.Second},
		Verification: Verification{Timeout: 10 * time.Minute},
		Design:       Design{MaxRounds: 3},
		Gates:        []Gate{},
		Env:          Env{Pass: []string{}, AllowDangerous: []string{}},
		Container:    Container{Runtime: "auto"},
		Tasks:        Tasks{Lease: 30 * time.Minute},
		Cluster:      Cluster{Listen: "0.0.0.0:4222", AckWait: 60 * time.Second, MaxDeliver: 5, AgentKey: AgentKeyCoordinator},
		Sandbox:      Sandbox{MemoryMB: 4096, Processes: 1024, CPUSeconds: 3600, FileSizeMB: 1024, OpenFiles: 4096, MaxCommitFileMB: 10},
		Security: Security{WorkerUser: DefaultWorkerUser, ProtectedPaths: []string{}, AllowProtected: []string{},
			RefusedWrites: RefusedWritesReport},
		Commits:      Commits{Author: CommitAuthorUser},
		Egress:       Egress{Allow: []string{}},
		Gateway:      Gateway{Betas: []string{}, ServerTools: []string{}},
		Disk:         Disk{MinFreeMB: 1024, WorkspaceMB: 4096},
		Toolchains:   Toolchains{Off: []string{}, Paths: []string{}},
		Caches:       Caches{Off: []string{}, ReadOnly: []string{}},
		WorkerPolicy: WorkerPolicy{AllowCommands: []string{}, DenyCommands: []string{}},
		SecurityRules: SecurityRules{
			Enabled: true,
			URL:     DefaultRulesURL,
			Commit:  DefaultRulesCommit,
		},
		Context: Context{TokenBudget: 4000},
	}
}
