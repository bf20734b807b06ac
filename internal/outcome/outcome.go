// Package outcome is the vocabulary of how an attempt ended: one typed
// class and one set of reasons, used from the driver that ran the worker to
// the coordinator's retry policy, the event log and the report.
package outcome

// Class is how an attempt ended, for the retry policy (docs/resilience.md).
type Class string

const (
	// Success: the worker ran to completion and zerg committed its work.
	// Before zerg's checks it only means the worker said it finished.
	Success Class = "success"
	// Task: the attempt failed for a reason tied to its task (verification,
	// ownership, max turns, budget, refusal, output or context too large);
	// counted against the task's retries.
	Task Class = "task"
	// Infra: upstream or process trouble (rate limit, overload, 5xx,
	// connection, stall, a kill); retried with backoff, not counted.
	Infra Class = "infra"
	// Fatal: retrying cannot help any task (a model that does not exist, a
	// CLI usage error); the run stops with the message.
	Fatal Class = "fatal"
	// Account: the account cannot pay for or is not allowed any request
	// (credit, a usage limit, a revoked key): no new worker starts until a
	// person acts or the limit resets.
	Account Class = "account"
)

// Reasons: a short machine-readable word next to the class. What the
// worker's CLI reported, what a driver's gateway saw, and zerg's own
// verdicts on the result.
const (
	// The CLI's own word (its result event and exit).
	ReasonCompleted       = "completed"
	ReasonMaxTurns        = "max_turns"
	ReasonMaxBudget       = "max_budget"
	ReasonStructuredOut   = "structured_output_retries"
	ReasonRefusal         = "refusal"
	ReasonMaxOutputTokens = "max_output_tokens"
	ReasonContextTooLong  = "context_too_long"
	ReasonTooLarge        = "request_too_large"
	ReasonAuth            = "auth"
	ReasonModelNotFound   = "model_not_found"
	ReasonBadRequest      = "bad_request"
	ReasonBilling         = "billing" // kept for old logs; credit is what the API says now
	ReasonCredit          = "credit"
	ReasonUsageLimit      = "usage_limit"
	ReasonUsage           = "cli_usage"
	ReasonRateLimit       = "rate_limit"
	ReasonOverloaded      = "overloaded"
	ReasonServerError     = "server_error"
	ReasonForbidden       = "forbidden"
	ReasonConnection      = "connection"
	ReasonTimeout         = "timeout"
	ReasonMalformed       = "malformed"
	ReasonAPIError        = "api_error"
	ReasonStalled         = "stalled"
	ReasonStopped         = "stopped"
	ReasonKilled          = "killed"
	ReasonNoResult        = "no_result"
	ReasonAborted         = "aborted"
	ReasonUnknownResult   = "unknown_result"
	ReasonStartFailed     = "start_failed"
	ReasonUnknown         = "unknown"

	// What a driver's gateway saw (drivers with one: sandbox).
	ReasonGatewayRefused = "gateway_refused" // code in the isolation sent a request the gateway refused
	ReasonCLIRefused     = "cli_refused"     // the gateway refused the CLI's own request (before any answer of the model): the run's settings, not the task
	ReasonRunBudget      = "run_budget"      // the gateway refused a request: budget.run_usd is spent
	ReasonAPIUnreachable = "api_unreachable" // the gateway could not reach the API (connection, DNS, TLS)
	ReasonForgedResult   = "forged_result"   // the worker claimed an API failure the gateway never saw
	ReasonOutOfMemory    = "out_of_memory"   // the kernel killed a process for the group's memory limit

	// zerg's verdicts on what the worker produced.
	ReasonVerificationFailed = "verification_failed"
	ReasonOwnership          = "ownership"
	ReasonWriteRefused       = "write_refused" // the hook refused a write (security.refused_writes: fail)
	ReasonSecretFound        = "secret_found"
	ReasonForbiddenChange    = "forbidden_change"
	ReasonWorkspace          = "workspace" // the result could not be committed or read
	ReasonEmptyChange        = "empty_change"
	ReasonMissingFile        = "missing_file"
	ReasonUnchangedFile      = "unchanged_file"
	ReasonAuditFailed        = "audit_failed"
	ReasonWorkspaceTooLarge  = "workspace_too_large"
	ReasonDiskFull           = "disk_full"

	// The coordinator's.
	ReasonCancelled   = "cancelled"   // the run was stopped during the attempt
	ReasonAbandoned   = "abandoned"   // the coordinator died during the attempt
	ReasonZerg        = "zerg_error"  // zerg's own failure (git, disk)
	ReasonEnvironment = "environment" // the same failure in tasks that share nothing but the machine
	ReasonNoAgent     = "no_agent"    // cluster mode: no joined agent can run the run's attempts
)
