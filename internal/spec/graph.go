package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/zergrush/zerg/internal/term"
)

// MaxGraphBytes bounds the size of a task-graph file. A 10,000-task graph with
// descriptions is a few MB; anything far larger is a mistake, and reading it
// whole would cost memory for nothing.
const MaxGraphBytes = 32 << 20

// Graph is a parsed task graph. Fields that zerg does not know are kept in Raw
// (the file's bytes) and ignored.
type Graph struct {
	Feature string
	Tasks   []*Task
	// Raw is the document as read; Relevel edits it in place so a fixed graph
	// differs from the user's file only in its level numbers.
	Raw []byte

	byID map[string]*Task
}

// Task is one unit of work in the graph.
type Task struct {
	Index              int // position in the tasks array
	ID                 string
	Title              string
	Description        string
	Level              int // 0 when missing or invalid
	Dependencies       []string
	Files              Files
	Verification       *Verification
	Model              string
	Context            string
	AcceptanceCriteria []string
	EstimateMinutes    float64
	HasEstimate        bool
	Consumers          []string
	IntegrationTest    string
	BudgetUSD          float64
	MaxTurns           int
	// NoChanges is "expect_changes": false: a task whose worker is meant
	// to change nothing (a check-only task). Otherwise an attempt that
	// changes nothing, leaves a file of files.create missing or one of
	// files.modify unchanged fails.
	NoChanges bool
}

// Files lists the repository-relative paths a task creates, modifies and reads.
// Create and Modify are owned: no other task that can run at the same time may
// own them.
type Files struct {
	Create []string
	Modify []string
	Read   []string
}

// Owned returns the created and modified paths.
func (f Files) Owned() []string {
	out := make([]string, 0, len(f.Create)+len(f.Modify))
	out = append(out, f.Create...)
	return append(out, f.Modify...)
}

// Verification is the command that proves a task done.
type Verification struct {
	Command        string
	TimeoutSeconds int
}

// Timeout is how long the verification may run: the task's own
// timeout_seconds, else def (the config's verification.timeout). The
// pipeline, the cluster's agents and zerg check all bound the command by it.
func (v *Verification) Timeout(def time.Duration) time.Duration {
	if v != nil && v.TimeoutSeconds > 0 {
		return time.Duration(v.TimeoutSeconds) * time.Second
	}
	return def
}

// Task returns the task with the given id, or nil.
func (g *Graph) Task(id string) *Task {
	if g.byID == nil {
		g.byID = make(map[string]*Task, len(g.Tasks))
		for _, t := range g.Tasks {
			if _, dup := g.byID[t.ID]; !dup && t.ID != "" {
				g.byID[t.ID] = t
			}
		}
	}
	return g.byID[id]
}

var idPattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]{0,63}$`)

// featurePattern keeps feature names usable as directory and git ref components.
var featurePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$`)

// FeatureNameProblem says why name cannot name a feature, or "" when it
// can. A feature becomes directories (.zerg/specs/<feature>,
// .zerg/runs/<feature>, its workspaces) and a component of branch names, so
// it must be a plain name: "../x", "a/b", ".x" or "-x" would reach outside
// those directories or read as a flag. The rule is the graph's "feature"
// rule, so a name every command accepts is one a graph may carry.
func FeatureNameProblem(name string) string {
	switch {
	case name == "":
		return "is empty"
	case strings.ContainsAny(name, `/\`):
		return "contains a path separator"
	case name == "." || name == "..":
		return "is a directory reference"
	}
	if why := refComponentProblem(name); why != "" {
		return why
	}
	if !featurePattern.MatchString(name) {
		return "is not a plain name (letters, digits, '_', '.' and '-', starting with a letter or digit, at most 100)"
	}
	return ""
}

// refComponentProblem says why s, which already matches idPattern or
// featurePattern, is not usable as one component of a git ref name, or "".
// Task ids and the feature go into branch names (zerg/<feature>/task/<id>/<n>)
// and directory names; the patterns allow the characters but not these
// sequences, which git check-ref-format refuses. Git refuses a trailing '.'
// only at the end of the whole name; it is refused here in any component
// because a component may end a name and some file systems drop it.
func refComponentProblem(s string) string {
	switch {
	case strings.HasPrefix(s, "."):
		return "starts with '.'"
	case strings.HasPrefix(s, "-"):
		return "starts with '-'"
	case strings.Contains(s, ".."):
		return "contains '..'"
	case strings.Contains(s, "@{"):
		return "contains '@{'"
	case strings.HasSuffix(s, ".lock"):
		return "ends with '.lock'"
	case strings.HasSuffix(s, "."):
		return "ends with '.'"
	}
	return ""
}

// ErrTooLarge is returned for files over MaxGraphBytes.
var ErrTooLarge = errors.New("task graph too large")

// ReadFile reads a task-graph file with the checks every command needs: it
// must exist, be a regular file and be at most MaxGraphBytes.
func ReadFile(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s: no such file; pass the path of a task-graph.json or a feature name", path)
		}
		return nil, fmt.Errorf("%s: %w", path, unwrapPathError(err))
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("%s: is a directory; pass the task-graph.json file inside it", path)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file; pass a task-graph.json file", path)
	}
	if fi.Size() > MaxGraphBytes {
		return nil, fmt.Errorf("%s: %w: %.1f MiB, the limit is %d MiB; split the feature into smaller graphs",
			path, ErrTooLarge, float64(fi.Size())/(1<<20), MaxGraphBytes>>20)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, unwrapPathError(err))
	}
	defer f.Close()
	// The file may grow between Stat and Read; never read past the limit.
	data, err := io.ReadAll(io.LimitReader(f, MaxGraphBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, unwrapPathError(err))
	}
	if len(data) > MaxGraphBytes {
		return nil, fmt.Errorf("%s: %w: over %d MiB; split the feature into smaller graphs", path, ErrTooLarge, MaxGraphBytes>>20)
	}
	return data, nil
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Parse decodes a task graph. It never fails on content: every problem it finds
// is returned as an Issue, so a caller sees all of them at once. The graph is
// nil only when the document is not a JSON object at all.
func Parse(data []byte) (*Graph, []Issue) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, []Issue{jsonIssue(data, err)}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, []Issue{{Severity: Error, Code: CodeJSON, Message: "invalid JSON: extra data after the top-level object; the file must hold one JSON object"}}
	}
	top, ok := doc.(map[string]any)
	if !ok {
		return nil, []Issue{{Severity: Error, Code: CodeJSON, Message: fmt.Sprintf("invalid task graph: the top level is %s, not an object with \"feature\" and \"tasks\"", jsonKind(doc))}}
	}
	g := &Graph{Raw: data}
	var issues []Issue
	add := func(i Issue) { issues = append(issues, i) }

	switch f := top["feature"].(type) {
	case nil:
		add(Issue{Severity: Error, Code: CodeMissing, Field: "feature", Message: `missing; name the feature, e.g. "feature": "user-auth"`})
	case string:
		g.Feature = f
		if !featurePattern.MatchString(f) {
			add(Issue{Severity: Error, Code: CodeBadValue, Field: "feature",
				Message: fmt.Sprintf("%q is not a usable feature name; use letters, digits, '_', '.' and '-' (it becomes a directory and branch name)", f)})
		} else if why := refComponentProblem(f); why != "" {
			add(Issue{Severity: Error, Code: CodeBadValue, Field: "feature",
				Message: fmt.Sprintf("%q %s; the feature becomes part of git branch names (zerg/<feature>/...), so it must be a valid ref component: rename the feature", f, why)})
		}
	default:
		add(Issue{Severity: Error, Code: CodeType, Field: "feature", Message: fmt.Sprintf("is %s; it must be a string", jsonKind(f))})
	}

	switch ts := top["tasks"].(type) {
	case nil:
		add(Issue{Severity: Error, Code: CodeMissing, Field: "tasks", Message: "missing; a graph needs a non-empty \"tasks\" array"})
	case []any:
		if len(ts) == 0 {
			add(Issue{Severity: Error, Code: CodeMissing, Field: "tasks", Message: "is empty; a graph needs at least one task"})
		}
		g.Tasks = make([]*Task, 0, len(ts))
		for i, raw := range ts {
			t, tIssues := parseTask(i, raw)
			issues = append(issues, tIssues...)
			if t != nil {
				g.Tasks = append(g.Tasks, t)
			}
		}
	default:
		add(Issue{Severity: Error, Code: CodeType, Field: "tasks", Message: fmt.Sprintf("is %s; it must be an array of task objects", jsonKind(ts))})
	}
	return g, issues
}

// taskRef names a task in messages before its id is known to be usable.
func taskRef(index int, id string) string {
	if id != "" && len(id) <= 80 {
		return id
	}
	return fmt.Sprintf("#%d", index+1)
}

func parseTask(index int, raw any) (*Task, []Issue) {
	obj, ok := raw.(map[string]any)
	if !ok {
		return nil, []Issue{{Severity: Error, Code: CodeType, Task: taskRef(index, ""), Field: "tasks",
			Message: fmt.Sprintf("task %d is %s; every task must be an object", index+1, jsonKind(raw))}}
	}
	t := &Task{Index: index}
	var issues []Issue
	idStr, _ := obj["id"].(string)
	ref := taskRef(index, idStr)
	add := func(code, field, format string, a ...any) {
		issues = append(issues, Issue{Severity: Error, Code: code, Task: ref, Field: field, Message: fmt.Sprintf(format, a...)})
	}
	warn := func(code, field, format string, a ...any) {
		issues = append(issues, Issue{Severity: Warning, Code: code, Task: ref, Field: field, Message: fmt.Sprintf(format, a...)})
	}

	switch v := obj["id"].(type) {
	case nil:
		add(CodeMissing, "id", "missing; every task needs a unique id")
	case string:
		t.ID = v
		if !idPattern.MatchString(v) {
			add(CodeBadID, "id", "%q is not a valid id; start with a letter, then letters, digits, '_', '.' or '-', at most 64 characters", clip(v))
		} else if why := refComponentProblem(v); why != "" {
			add(CodeBadID, "id", "%q %s; ids become part of git branch names (zerg/<feature>/task/<id>/<n>), so they must be valid ref components: rename the task (and the dependencies that name it)", v, why)
		}
	default:
		add(CodeType, "id", "is %s; it must be a string", jsonKind(v))
	}

	switch v := obj["title"].(type) {
	case nil:
		add(CodeMissing, "title", "missing; give the task a short title")
	case string:
		t.Title = v
		if strings.TrimSpace(v) == "" {
			add(CodeMissing, "title", "is empty; give the task a short title")
		} else if r, at := term.FirstControl(v); at >= 0 {
			// Titles are printed on one line by every command that lists
			// tasks: an escape sequence, "\r" or a newline there would act
			// on the terminal or forge a line.
			add(CodeBadValue, "title", "holds a control character (U+%04X at byte %d); write the title as one line of plain text", r, at)
		}
	default:
		add(CodeType, "title", "is %s; it must be a string", jsonKind(v))
	}

	switch v := obj["level"].(type) {
	case nil:
		add(CodeMissing, "level", "missing; levels are positive integers starting at 1 ('zerg graph relevel' computes them)")
	case json.Number:
		f, err := v.Float64()
		if err != nil || f != math.Trunc(f) || f < 1 || f > 1e6 {
			add(CodeBadLevel, "level", "%s is not a positive integer; levels start at 1", v)
		} else {
			t.Level = int(f)
		}
	default:
		add(CodeBadLevel, "level", "%s is not a positive integer; levels start at 1", jsonShort(v))
	}

	t.Description = optString(obj, "description", &issues, ref)
	t.Model = optString(obj, "model", &issues, ref)
	t.Context = optString(obj, "context", &issues, ref)
	t.IntegrationTest = optString(obj, "integration_test", &issues, ref)
	t.Dependencies = optStrings(obj, "dependencies", &issues, ref)
	t.AcceptanceCriteria = optStrings(obj, "acceptance_criteria", &issues, ref)
	t.Consumers = optStrings(obj, "consumers", &issues, ref)
	if n, ok := optNumber(obj, "estimate_minutes", &issues, ref); ok {
		t.EstimateMinutes, t.HasEstimate = n, true
		if n < 0 {
			add(CodeBadValue, "estimate_minutes", "%v is negative; give minutes as a number ≥ 0", n)
			t.EstimateMinutes = 0
		}
	}
	if n, ok := optNumber(obj, "budget_usd", &issues, ref); ok {
		t.BudgetUSD = n
		if n <= 0 {
			add(CodeBadValue, "budget_usd", "%v must be a positive amount in USD", n)
		}
	}
	switch v := obj["expect_changes"].(type) {
	case nil:
	case bool:
		t.NoChanges = !v
	default:
		add(CodeType, "expect_changes", "is %s; it must be true or false (false: a check-only task whose worker changes nothing)", jsonKind(v))
	}
	if n, ok := optNumber(obj, "max_turns", &issues, ref); ok {
		if n != math.Trunc(n) || n < 1 {
			add(CodeBadValue, "max_turns", "%v must be a positive integer", n)
		} else {
			t.MaxTurns = int(n)
		}
	}

	switch v := obj["files"].(type) {
	case nil:
		// ZERG's early graphs used files_owned/files_read; read them so such a task
		// still owns what it writes.
		if _, ok := obj["files_owned"]; ok {
			t.Files.Modify = optStrings(obj, "files_owned", &issues, ref)
			t.Files.Read = optStrings(obj, "files_read", &issues, ref)
			warn(CodeLegacy, "files_owned", "old ZERG field, read as files.modify; write \"files\": {\"create\", \"modify\", \"read\"} instead")
		}
	case map[string]any:
		t.Files.Create = optStrings(v, "create", &issues, ref, "files.")
		t.Files.Modify = optStrings(v, "modify", &issues, ref, "files.")
		t.Files.Read = optStrings(v, "read", &issues, ref, "files.")
		if d := optStrings(v, "delete", &issues, ref, "files."); len(d) > 0 {
			warn(CodeLegacy, "files.delete", "is not an ownership field; list the %d deleted path(s) in files.modify so the task may remove them", len(d))
		}
	default:
		add(CodeType, "files", "is %s; it must be an object with create, modify and read arrays", jsonKind(v))
	}

	switch v := obj["verification"].(type) {
	case nil:
	case map[string]any:
		ver := &Verification{}
		ver.Command = optString(v, "command", &issues, ref, "verification.")
		if n, ok := optNumber(v, "timeout_seconds", &issues, ref, "verification."); ok {
			if n != math.Trunc(n) || n < 1 {
				add(CodeBadValue, "verification.timeout_seconds", "%v must be a positive whole number of seconds", n)
			} else {
				ver.TimeoutSeconds = int(n)
			}
		}
		t.Verification = ver
	case string:
		// A bare command string is unambiguous; accept it.
		t.Verification = &Verification{Command: v}
	default:
		add(CodeType, "verification", "is %s; it must be an object with a \"command\"", jsonKind(v))
	}
	return t, issues
}

func optString(obj map[string]any, key string, issues *[]Issue, ref string, prefix ...string) string {
	switch v := obj[key].(type) {
	case nil:
		return ""
	case string:
		return v
	default:
		*issues = append(*issues, Issue{Severity: Error, Code: CodeType, Task: ref, Field: strings.Join(prefix, "") + key,
			Message: fmt.Sprintf("is %s; it must be a string", jsonKind(v))})
		return ""
	}
}

func optStrings(obj map[string]any, key string, issues *[]Issue, ref string, prefix ...string) []string {
	field := strings.Join(prefix, "") + key
	switch v := obj[key].(type) {
	case nil:
		return nil
	case []any:
		out := make([]string, 0, len(v))
		for i, e := range v {
			s, ok := e.(string)
			if !ok {
				*issues = append(*issues, Issue{Severity: Error, Code: CodeType, Task: ref, Field: fmt.Sprintf("%s[%d]", field, i),
					Message: fmt.Sprintf("is %s; it must be a string", jsonKind(e))})
				continue
			}
			out = append(out, s)
		}
		return out
	default:
		*issues = append(*issues, Issue{Severity: Error, Code: CodeType, Task: ref, Field: field,
			Message: fmt.Sprintf("is %s; it must be an array of strings", jsonKind(v))})
		return nil
	}
}

func optNumber(obj map[string]any, key string, issues *[]Issue, ref string, prefix ...string) (float64, bool) {
	switch v := obj[key].(type) {
	case nil:
		return 0, false
	case json.Number:
		f, err := v.Float64()
		if err != nil || math.IsInf(f, 0) {
			break
		}
		return f, true
	}
	*issues = append(*issues, Issue{Severity: Error, Code: CodeType, Task: ref, Field: strings.Join(prefix, "") + key,
		Message: fmt.Sprintf("%s is not a number", jsonShort(obj[key]))})
	return 0, false
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case json.Number, float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// jsonShort renders a value for a message, shortened.
func jsonShort(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return jsonKind(v)
	}
	return clip(string(b))
}

func clip(s string) string {
	const max = 60
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}

// jsonIssue turns a decoding error into a message with line and column.
func jsonIssue(data []byte, err error) Issue {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	var off int64 = -1
	msg := err.Error()
	switch {
	case errors.As(err, &se):
		off, msg = se.Offset, se.Error()
	case errors.As(err, &te):
		off = te.Offset
	case errors.Is(err, io.EOF):
		return Issue{Severity: Error, Code: CodeJSON, Message: "invalid JSON: the file is empty; a task graph is an object with \"feature\" and \"tasks\""}
	case errors.Is(err, io.ErrUnexpectedEOF):
		off, msg = int64(len(data)), "unexpected end of file"
	}
	if off >= 0 {
		line, col := lineCol(data, off)
		return Issue{Severity: Error, Code: CodeJSON, Line: line, Message: fmt.Sprintf("invalid JSON at line %d, column %d: %s", line, col, msg)}
	}
	return Issue{Severity: Error, Code: CodeJSON, Message: "invalid JSON: " + msg}
}

func lineCol(data []byte, off int64) (line, col int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(off) - (bytes.LastIndexByte(before, '\n') + 1)
	if col < 1 {
		col = 1
	}
	return line, col
}

// VerificationCommand is the command that verifies the task, "" when it has
// none.
func (t *Task) VerificationCommand() string {
	if t.Verification != nil && t.Verification.Command != "" {
		return t.Verification.Command
	}
	return ""
}
