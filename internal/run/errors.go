package run

import "fmt"

// Kind classifies a run error for the caller: the CLI maps each kind to its
// exit code and a hint naming the command that helps.
type Kind string

// Kinds are also sentinels: errors.Is(err, run.Locked) matches any *Error of
// that kind.
const (
	BadInput         Kind = "bad input"            // the graph, the config or a flag; nothing was written
	Exists           Kind = "run exists"           // a run of the feature exists and --resume was not given
	NoRun            Kind = "no run"               // --resume, but there is nothing to resume
	Delivered        Kind = "delivered"            // --resume of a run that delivered and has nothing new
	Locked           Kind = "locked"               // another coordinator holds the run's log
	GraphEdit        Kind = "graph edit"           // the graph changed in a way the run cannot take
	IntegrationMoved Kind = "integration moved"    // the integration branch is not where the log says
	ModeMismatch     Kind = "mode mismatch"        // resume in another mode than the run started in
	Setup            Kind = "setup"                // the machine is not ready (workspaces, worker user)
	StaleWorkspace   Kind = "stale workspace"      // a workspace of an earlier run holds work
	NotDelivered     Kind = "not delivered"        // a task or a gate failed; the report says which
	Fatal            Kind = "fatal worker error"   // no attempt can succeed (unknown model, bad request)
	Account          Kind = "account"              // the API refused the account (credit, usage limit, key): launching stopped
	Budget           Kind = "budget"               // budget.run_usd would be passed: launching stopped
	DiskFull         Kind = "disk full"            // free space below disk.min_free_mb: launching stopped
	Environment      Kind = "environment"          // every worker meets the same problem of the machine: launching stopped
	Interrupted      Kind = "interrupted"          // stopped by a signal or zerg stop
	Internal         Kind = "internal state error" // the state machine refused an event: a bug
)

func (k Kind) Error() string { return string(k) }

// Error is a run error with the data a person needs: which feature, task,
// file or branch, and what is wrong. It never holds a command line; hints
// are the CLI's business.
type Error struct {
	Kind    Kind
	Feature string
	Task    string
	Path    string
	Branch  string
	// ResumeAfter is when the run can go on (an account limit's reset),
	// "" when unknown or not a matter of time.
	ResumeAfter string
	Err         error // what is wrong
}

func (e *Error) Error() string {
	if e.Err == nil {
		return string(e.Kind)
	}
	return e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Is matches the error's kind.
func (e *Error) Is(target error) bool {
	k, ok := target.(Kind)
	return ok && k == e.Kind
}

func errorf(kind Kind, feature, format string, a ...any) *Error {
	return &Error{Kind: kind, Feature: feature, Err: fmt.Errorf(format, a...)}
}
