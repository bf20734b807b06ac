package spec

import (
	"fmt"
	"strings"
)

// Severity says whether an issue stops the graph from running.
type Severity string

const (
	Error   Severity = "error"
	Warning Severity = "warning"
)

// Issue codes, stable for --json consumers and tests.
const (
	CodeJSON         = "invalid-json"
	CodeMissing      = "missing"
	CodeType         = "wrong-type"
	CodeBadValue     = "bad-value"
	CodeBadID        = "bad-id"
	CodeDuplicateID  = "duplicate-id"
	CodeBadLevel     = "bad-level"
	CodeUnknownDep   = "unknown-dependency"
	CodeDepLevel     = "dependency-level"
	CodeCycle        = "cycle"
	CodeOwnership    = "ownership-conflict"
	CodeUnsafePath   = "unsafe-path"
	CodeNoVerify     = "no-verification"
	CodeUnreachable  = "unreachable"
	CodeNoIntegTest  = "consumers-without-integration-test"
	CodeUnknownRef   = "unknown-consumer"
	CodeDuplicate    = "duplicate-entry"
	CodeGlobOverlap  = "glob-overlap"
	CodeLegacy       = "legacy-field"
	CodeSelfConflict = "create-and-modify"
	CodeProtected    = "protected-path"
	// CodeCannotFail: a verification that can never fail, of a task that
	// creates files: it checks nothing the task delivers.
	CodeCannotFail = "check-cannot-fail"
)

// Issue is one problem found in a graph. Message never repeats the task or
// field: String puts them in front.
type Issue struct {
	Severity Severity `json:"severity"`
	Code     string   `json:"code"`
	Task     string   `json:"task,omitempty"`  // the task the issue is about ("#3" when it has no usable id)
	Tasks    []string `json:"tasks,omitempty"` // every task involved, when more than one
	Field    string   `json:"field,omitempty"`
	Path     string   `json:"path,omitempty"` // the file path involved, if any
	Line     int      `json:"line,omitempty"` // for JSON syntax errors
	Message  string   `json:"message"`
}

// String renders the issue as one line: "task T1: level: 0 is not …".
func (i Issue) String() string {
	var b strings.Builder
	switch {
	case len(i.Tasks) > 1:
		b.WriteString("tasks ")
		b.WriteString(strings.Join(i.Tasks, ", "))
		b.WriteString(": ")
	case i.Task != "":
		fmt.Fprintf(&b, "task %s: ", i.Task)
	}
	if i.Field != "" {
		b.WriteString(i.Field)
		b.WriteString(": ")
	}
	b.WriteString(i.Message)
	return b.String()
}
