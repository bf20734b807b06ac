// Package diagnose says what broke, from what a command printed: parsers
// for Go, Python, JavaScript/TypeScript, Rust, shell and git turn the
// output into structured findings (file, line, kind, message, test), and a
// naive Bayes classifier, whose priors and likelihoods are estimated from a
// corpus of real outputs (testdata/corpus: real projects broken on purpose
// and run with their real toolchains), ranks the known failure patterns by
// calibrated confidence. zerg uses it wherever it gives a verdict: zerg
// check (an environment problem or the failure the feature will fix), the
// retry prompt, the run report, zerg logs, zerg diagnose, and the run's
// correlation of failures across workers. docs/diagnose.md has the design
// and the measured accuracy.
package diagnose

import "github.com/zergrush/zerg/internal/outcome"

// Class says whose problem a pattern is.
type Class string

const (
	// Task: the work is wrong or unfinished; a retry with the diagnosis
	// can fix it.
	Task Class = "task"
	// Environment: the machine lacks something (network, a tool, space, a
	// variable, a terminal): every worker meets it, no retry of the task
	// fixes it.
	Environment Class = "environment"
	// API: the model API or the worker's own process (rate limits, an
	// unreachable endpoint, a refused key, a crash).
	API Class = "api"
	// Unknown: none of the known patterns.
	Unknown Class = "unknown"
)

// Pattern is one known kind of failure.
type Pattern struct {
	ID    string
	Class Class
	// Fix is what to do about it, in one line.
	Fix string
}

// Pattern ids.
const (
	CompileError            = "compile_error"
	TypeError               = "type_error"
	UndefinedSymbol         = "undefined_symbol"
	ImportMissing           = "import_missing"
	DependencyMissing       = "dependency_missing"
	SyntaxError             = "syntax_error"
	TestAssertion           = "test_assertion"
	TestPanic               = "test_panic"
	TestTimeout             = "test_timeout"
	RaceDetected            = "race_detected"
	LintFailure             = "lint_failure"
	FormatFailure           = "format_failure"
	NetworkUnavailable      = "network_unavailable"
	OfflineCacheMiss        = "offline_cache_miss"
	PermissionDenied        = "permission_denied"
	DiskFull                = "disk_full"
	OutOfMemory             = "out_of_memory"
	CommandNotFound         = "command_not_found"
	ToolchainVersion        = "toolchain_version"
	EnvVarMissing           = "env_var_missing"
	TerminalDependentOutput = "terminal_dependent_output"
	FlakyTest               = "flaky_test"
	NoTestsRan              = "no_tests_ran"
	CheckCannotFail         = "check_cannot_fail"
	EmptyChange             = "empty_change"
	OwnershipViolation      = "ownership_violation"
	ProtectedPath           = "protected_path"
	SecretFound             = "secret_found"
	MergeConflict           = "merge_conflict"
	RateLimited             = "rate_limited"
	APIUnreachable          = "api_unreachable"
	AuthFailed              = "auth_failed"
	MaxTurns                = "max_turns"
	ContextExhausted        = "context_exhausted"
	WorkerCrash             = "worker_crash"
	UnknownPattern          = "unknown"
)

// Patterns are every pattern the classifier knows, in a stable order.
var Patterns = []Pattern{
	{CompileError, Task, "fix the compile error at the place the compiler names"},
	{TypeError, Task, "make the types agree where the compiler or type checker says they do not"},
	{UndefinedSymbol, Task, "define the missing name, or use the one that exists (check its spelling and package)"},
	{ImportMissing, Task, "import a module that exists in the project or the standard library, or create it"},
	{DependencyMissing, Task, "use only dependencies the project declares and has installed, or add it to the manifest and its cache"},
	{SyntaxError, Task, "fix the syntax at the line the parser names"},
	{TestAssertion, Task, "make the code give what the failing test expects (the test names the case, the expected and the actual value)"},
	{TestPanic, Task, "fix the crash the test ran into (the stack names the line)"},
	{TestTimeout, Task, "find what hangs or is slow (a deadlock, a loop, a missing timeout) or raise the test's timeout"},
	{RaceDetected, Task, "guard the shared data the race detector names (a mutex, a channel, or no sharing)"},
	{LintFailure, Task, "fix what the linter reports"},
	{FormatFailure, Task, "run the formatter (gofmt -w, prettier --write, cargo fmt, black) on the files it lists"},
	{NetworkUnavailable, Environment, "workers have no network: put what the command fetches in a cache, or allow its host in egress.allow"},
	{OfflineCacheMiss, Environment, "the package is not in the cache workers get: fetch it once on this machine (go mod download, npm ci, cargo fetch), then retry"},
	{PermissionDenied, Environment, "the command may not read or write that path: change its mode or owner, or keep the command to the workspace"},
	{DiskFull, Environment, "the disk is full: free space (zerg cleanup removes what zerg no longer needs)"},
	{OutOfMemory, Task, "the command ran out of memory: use less, or raise sandbox.memory_mb"},
	{CommandNotFound, Environment, "the program (or the module python -m runs) is not where workers run it: install it on this machine, into the interpreter the command runs, or add its directory to toolchains.paths"},
	{ToolchainVersion, Environment, "the toolchain is older than the project needs: install the version it names"},
	{EnvVarMissing, Environment, "set the variable the command needs, and pass it to workers with env.pass"},
	{TerminalDependentOutput, Environment, "the command behaves differently without a terminal (colours, widths, TERM): make the test independent of the terminal, or set what it needs"},
	{FlakyTest, Task, "the test passes and fails on the same code: remove its dependence on timing, order or randomness"},
	{NoTestsRan, Task, "the command ran no test: check the test names, the -run filter or the test files' location"},
	{CheckCannotFail, Task, "the verification passes before the work is done: make it test what the task creates"},
	{EmptyChange, Task, "the worker did not do the work: write the files the task creates and modifies"},
	{OwnershipViolation, Task, "change only the files the task owns"},
	{ProtectedPath, Task, "leave zerg's, git's, CI and hook files alone"},
	{SecretFound, Task, "never put credentials in files: read them from the environment or the configuration"},
	{MergeConflict, Task, "two changes touch the same lines: a task changed files another task owns"},
	{RateLimited, API, "the API is rate limiting the account: wait for the reset, or run fewer workers"},
	{APIUnreachable, API, "the model API cannot be reached: check claude.base_url, the network and any proxy"},
	{AuthFailed, API, "the key or token was refused: set a valid one"},
	{MaxTurns, Task, "the worker used all its turns: split the task, or raise budget.max_turns"},
	{ContextExhausted, Task, "the conversation outgrew the model's context: split the task, or keep large outputs out of it"},
	{WorkerCrash, API, "the worker's process died: see its stderr; a broken binary or a kill"},
	{UnknownPattern, Unknown, "read the output: no known pattern fits"},
}

// ByID returns the pattern with id, and whether there is one.
func ByID(id string) (Pattern, bool) {
	for _, p := range Patterns {
		if p.ID == id {
			return p, true
		}
	}
	return Pattern{}, false
}

// FromReason is the pattern of an attempt's reason when zerg itself gave
// the verdict (an ownership check, the commit scan, the API's answer, the
// CLI's own stop): no output to read, the reason says it. "" for reasons
// whose output must be read (verification_failed) and for reasons no
// pattern covers.
func FromReason(reason string) string {
	switch reason {
	case outcome.ReasonEmptyChange, outcome.ReasonMissingFile, outcome.ReasonUnchangedFile:
		return EmptyChange
	case outcome.ReasonOwnership, outcome.ReasonWriteRefused:
		return OwnershipViolation
	case outcome.ReasonForbiddenChange:
		return ProtectedPath
	case outcome.ReasonSecretFound:
		return SecretFound
	case outcome.ReasonMaxTurns:
		return MaxTurns
	case outcome.ReasonContextTooLong, outcome.ReasonTooLarge, outcome.ReasonMaxOutputTokens:
		return ContextExhausted
	case outcome.ReasonRateLimit, outcome.ReasonOverloaded, outcome.ReasonUsageLimit:
		return RateLimited
	case outcome.ReasonAPIUnreachable, outcome.ReasonConnection, outcome.ReasonTimeout:
		return APIUnreachable
	case outcome.ReasonAuth, outcome.ReasonCredit:
		return AuthFailed
	case outcome.ReasonNoResult, outcome.ReasonKilled, outcome.ReasonStartFailed, outcome.ReasonStalled, outcome.ReasonUnknownResult, outcome.ReasonMalformed:
		return WorkerCrash
	case outcome.ReasonOutOfMemory:
		return OutOfMemory
	case outcome.ReasonDiskFull:
		return DiskFull
	case "conflict":
		return MergeConflict
	}
	return ""
}
