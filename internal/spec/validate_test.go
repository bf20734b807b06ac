package spec

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/security"
)

// graphJSON wraps task objects into a graph document.
func graphJSON(tasks ...string) string {
	return `{"feature":"f","tasks":[` + strings.Join(tasks, ",") + `]}`
}

const okVerify = `"verification":{"command":"go test ./..."}`

func task(id string, level int, extra string) string {
	s := `{"id":"` + id + `","title":"t ` + id + `","level":` + itoa(level) + `,` + okVerify
	if extra != "" {
		s += "," + extra
	}
	return s + "}"
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestIssues has one case per error and warning kind: the code, the task and
// field it must name, and a phrase of the message.
func TestIssues(t *testing.T) {
	cases := []struct {
		name     string
		doc      string
		severity Severity
		code     string
		task     string // must appear in the issue's String()
		field    string
		phrase   string
	}{
		{"malformed json", `{"feature": "f", "tasks": [}`, Error, CodeJSON, "", "", "line 1, column 28"},
		{"empty file", ``, Error, CodeJSON, "", "", "empty"},
		{"trailing data", `{"feature":"f","tasks":[]} {}`, Error, CodeJSON, "", "", "extra data"},
		{"top level array", `[1,2]`, Error, CodeJSON, "", "", "top level is an array"},
		{"missing feature", `{"tasks":[` + task("A", 1, "") + `]}`, Error, CodeMissing, "", "feature", "missing"},
		{"feature not string", `{"feature":3,"tasks":[` + task("A", 1, "") + `]}`, Error, CodeType, "", "feature", "must be a string"},
		{"feature unsafe", `{"feature":"../x","tasks":[` + task("A", 1, "") + `]}`, Error, CodeBadValue, "", "feature", "not a usable feature name"},
		{"missing tasks", `{"feature":"f"}`, Error, CodeMissing, "", "tasks", "missing"},
		{"empty tasks", `{"feature":"f","tasks":[]}`, Error, CodeMissing, "", "tasks", "empty"},
		{"tasks not array", `{"feature":"f","tasks":{}}`, Error, CodeType, "", "tasks", "must be an array"},
		{"task not object", graphJSON(`"A"`), Error, CodeType, "#1", "tasks", "must be an object"},
		{"missing id", graphJSON(`{"title":"x","level":1}`), Error, CodeMissing, "#1", "id", "missing"},
		{"bad id", graphJSON(`{"id":"1abc","title":"x","level":1}`), Error, CodeBadID, "1abc", "id", "not a valid id"},
		{"id with space", graphJSON(`{"id":"a b","title":"x","level":1}`), Error, CodeBadID, "a b", "id", "not a valid id"},
		{"id too long", graphJSON(`{"id":"a` + strings.Repeat("b", 64) + `","title":"x","level":1}`), Error, CodeBadID, "", "id", "at most 64"},
		{"duplicate id", graphJSON(task("A", 1, ""), task("A", 1, "")), Error, CodeDuplicateID, "A", "id", "tasks 1 and 2"},
		{"id ends with .lock", graphJSON(task("A.lock", 1, "")), Error, CodeBadID, "A.lock", "id", `"A.lock" ends with '.lock'; ids become part of git branch names (zerg/<feature>/task/<id>/<n>), so they must be valid ref components: rename the task`},
		{"id with ..", graphJSON(task("B..c", 1, "")), Error, CodeBadID, "B..c", "id", `"B..c" contains '..'`},
		{"id ends with .", graphJSON(task("C.", 1, "")), Error, CodeBadID, "C.", "id", `"C." ends with '.'`},
		{"feature ends with .lock", `{"feature":"auth.lock","tasks":[` + task("A", 1, "") + `]}`, Error, CodeBadValue, "", "feature", `"auth.lock" ends with '.lock'; the feature becomes part of git branch names (zerg/<feature>/...), so it must be a valid ref component: rename the feature`},
		{"feature with ..", `{"feature":"a..b","tasks":[` + task("A", 1, "") + `]}`, Error, CodeBadValue, "", "feature", `"a..b" contains '..'`},
		{"feature ends with .", `{"feature":"v1.","tasks":[` + task("A", 1, "") + `]}`, Error, CodeBadValue, "", "feature", `"v1." ends with '.'`},
		{"missing title", graphJSON(`{"id":"A","level":1}`), Error, CodeMissing, "A", "title", "missing"},
		{"blank title", graphJSON(`{"id":"A","title":"  ","level":1}`), Error, CodeMissing, "A", "title", "empty"},
		{"OSC 52 in a title", graphJSON(`{"id":"A","title":"x\u001b]52;c;QUFB\u0007","level":1}`), Error, CodeBadValue, "A", "title", "control character (U+001B at byte 1)"},
		{"CR in a title", graphJSON(`{"id":"A","title":"FAILED\r0 blocking","level":1}`), Error, CodeBadValue, "A", "title", "U+000D at byte 6"},
		{"bidi in a title", graphJSON(`{"id":"A","title":"a\u202eb","level":1}`), Error, CodeBadValue, "A", "title", "U+202E"},
		{"escape in a path", graphJSON(task("A", 1, `"files":{"create":["a\u001b]2;x\u0007.go"]}`)), Error, CodeUnsafePath, "A", "files.create[0]", "control character"},
		{"missing level", graphJSON(`{"id":"A","title":"x"}`), Error, CodeMissing, "A", "level", "missing"},
		{"level zero", graphJSON(task("A", 0, "")), Error, CodeBadLevel, "A", "level", "0 is not a positive integer"},
		{"level negative", graphJSON(`{"id":"A","title":"x","level":-2}`), Error, CodeBadLevel, "A", "level", "-2 is not"},
		{"level fraction", graphJSON(`{"id":"A","title":"x","level":1.5}`), Error, CodeBadLevel, "A", "level", "1.5 is not"},
		{"level string", graphJSON(`{"id":"A","title":"x","level":"1"}`), Error, CodeBadLevel, "A", "level", `"1" is not`},
		{"unknown dependency", graphJSON(task("A", 2, `"dependencies":["Z"]`)), Error, CodeUnknownDep, "A", "dependencies[0]", `unknown task "Z"; name an existing task id`},
		{"mistyped dependency", graphJSON(task("L1-names", 1, ""), task("L2-greet", 2, `"dependencies":["L1-name"]`)), Error, CodeUnknownDep, "L2-greet", "dependencies[0]", `unknown task "L1-name"; did you mean "L1-names"?`},
		{"a check that cannot fail for want of ||", graphJSON(task("A", 1, `"files":{"modify":["a.py"]},"verification":{"command":"pytest -q || true"}`)), Warning, CodeCannotFail, "A", "verification.command", "`|| true` makes its status 0 whatever `pytest -q` does"},
		{"dependency same level", graphJSON(task("A", 1, ""), task("B", 1, `"dependencies":["A"]`)), Error, CodeDepLevel, "B", "dependencies", "B (level 1) depends on A (level 1), the same level"},
		{"dependency higher level", graphJSON(task("A", 3, ""), task("B", 2, `"dependencies":["A"]`)), Error, CodeDepLevel, "B", "dependencies", "a higher level"},
		{"self dependency", graphJSON(task("A", 1, `"dependencies":["A"]`)), Error, CodeCycle, "A", "dependencies[0]", "depends on itself"},
		{"cycle", graphJSON(task("A", 1, `"dependencies":["C"]`), task("B", 2, `"dependencies":["A"]`), task("C", 3, `"dependencies":["B"]`)), Error, CodeCycle, "A, C, B", "dependencies", "cycle A → C → B → A (→ = depends on)"},
		{"dependencies not array", graphJSON(task("A", 1, `"dependencies":"B"`)), Error, CodeType, "A", "dependencies", "array of strings"},
		{"dependency not string", graphJSON(task("A", 1, `"dependencies":[1]`)), Error, CodeType, "A", "dependencies[0]", "must be a string"},
		{"same-level ownership", graphJSON(task("A", 1, `"files":{"create":["x.go"]}`), task("B", 1, `"files":{"modify":["./x.go"]}`)), Error, CodeOwnership, "A, B", "files", "both own x.go at level 1"},
		{"directory ownership", graphJSON(task("A", 1, `"files":{"modify":["pkg/"]}`), task("B", 1, `"files":{"create":["pkg/a.go"]}`)), Error, CodeOwnership, "A, B", "files", "pkg/a.go"},
		{"glob ownership", graphJSON(task("A", 1, `"files":{"modify":["src/**/*.py"]}`), task("B", 1, `"files":{"create":["src/x/y.py"]}`)), Error, CodeOwnership, "A, B", "files", "src/x/y.py"},
		{"absolute path", graphJSON(task("A", 1, `"files":{"create":["/etc/passwd"]}`)), Error, CodeUnsafePath, "A", "files.create[0]", "is absolute"},
		{"dotdot path", graphJSON(task("A", 1, `"files":{"modify":["a/../../b"]}`)), Error, CodeUnsafePath, "A", "files.modify[0]", "contains '..'"},
		{"read outside", graphJSON(task("A", 1, `"files":{"read":["../secrets"]}`)), Error, CodeUnsafePath, "A", "files.read[0]", "contains '..'"},
		{"home path", graphJSON(task("A", 1, `"files":{"read":["~/.ssh/id_rsa"]}`)), Error, CodeUnsafePath, "A", "files.read[0]", "home directory"},
		{"drive path", graphJSON(task("A", 1, `"files":{"create":["C:\\x"]}`)), Error, CodeUnsafePath, "A", "files.create[0]", "drive letter"},
		{"git dir path", graphJSON(task("A", 1, `"files":{"create":[".git/hooks/pre-commit"]}`)), Error, CodeUnsafePath, "A", "files.create[0]", "inside .git"},
		{"empty path", graphJSON(task("A", 1, `"files":{"create":[""]}`)), Error, CodeUnsafePath, "A", "files.create[0]", "is empty"},
		{"files not object", graphJSON(task("A", 1, `"files":["a"]`)), Error, CodeType, "A", "files", "must be an object"},
		{"verification wrong type", graphJSON(`{"id":"A","title":"x","level":1,"verification":3}`), Error, CodeType, "A", "verification", "must be an object"},
		{"verification timeout", graphJSON(`{"id":"A","title":"x","level":1,"verification":{"command":"true","timeout_seconds":0}}`), Error, CodeBadValue, "A", "verification.timeout_seconds", "positive whole number"},
		{"estimate not number", graphJSON(task("A", 1, `"estimate_minutes":"5"`)), Error, CodeType, "A", "estimate_minutes", "not a number"},
		{"estimate negative", graphJSON(task("A", 1, `"estimate_minutes":-5`)), Error, CodeBadValue, "A", "estimate_minutes", "negative"},
		{"budget", graphJSON(task("A", 1, `"budget_usd":0`)), Error, CodeBadValue, "A", "budget_usd", "positive amount"},
		{"max turns", graphJSON(task("A", 1, `"max_turns":2.5`)), Error, CodeBadValue, "A", "max_turns", "positive integer"},
		{"model not string", graphJSON(task("A", 1, `"model":1`)), Error, CodeType, "A", "model", "must be a string"},

		{"no verification", graphJSON(`{"id":"A","title":"x","level":1}`), Warning, CodeNoVerify, "A", "verification", "no command"},
		{"unreachable", graphJSON(task("A", 1, ""), task("B", 2, "")), Warning, CodeUnreachable, "B", "dependencies", "nothing from level 1 leads to it"},
		{"consumers without test", graphJSON(task("A", 1, `"consumers":["B"]`), task("B", 2, `"dependencies":["A"]`)), Warning, CodeNoIntegTest, "A", "integration_test", "1 consumer"},
		{"unknown consumer", graphJSON(task("A", 1, `"consumers":["Q"],"integration_test":"t.py"`)), Warning, CodeUnknownRef, "A", "consumers[0]", `unknown task "Q"`},
		{"duplicate dependency", graphJSON(task("A", 1, ""), task("B", 2, `"dependencies":["A","A"]`)), Warning, CodeDuplicate, "B", "dependencies[1]", "listed twice"},
		{"create and modify", graphJSON(task("A", 1, `"files":{"create":["a"],"modify":["a"]}`)), Warning, CodeSelfConflict, "A", "files.modify[0]", "both create and modify"},
		{"glob overlap", graphJSON(task("A", 1, `"files":{"modify":["src/**"]}`), task("B", 1, `"files":{"modify":["src/a/*.go"]}`)), Warning, CodeGlobOverlap, "A, B", "files", "may both own files matching src/** and src/a/*.go at level 1"},
		{"a check that cannot fail", graphJSON(task("A", 1, `"files":{"create":["a.go"]},"verification":{"command":"true"}`)), Warning, CodeCannotFail, "A", "verification.command", "can never fail"},
		{"expect_changes not a boolean", graphJSON(task("A", 1, `"expect_changes":"no"`)), Error, CodeType, "A", "expect_changes", "true or false"},
		{"legacy files_owned", graphJSON(task("A", 1, `"files_owned":["a.py"]`)), Warning, CodeLegacy, "A", "files_owned", "read as files.modify"},
		{"legacy delete", graphJSON(task("A", 1, `"files":{"delete":["a.py"]}`)), Warning, CodeLegacy, "A", "files.delete", "files.modify"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := Check([]byte(c.doc), Options{})
			list := r.Errors
			if c.severity == Warning {
				list = r.Warnings
				if !r.Valid() {
					t.Fatalf("warning case must stay valid, errors: %v", r.Err())
				}
			}
			for _, is := range list {
				if is.Code != c.code {
					continue
				}
				s := is.String()
				if is.Field != c.field {
					t.Errorf("field %q, want %q (%s)", is.Field, c.field, s)
				}
				if c.task != "" && !strings.Contains(s, c.task) {
					t.Errorf("%q does not name task %q", s, c.task)
				}
				if !strings.Contains(s, c.phrase) {
					t.Errorf("%q does not say %q", s, c.phrase)
				}
				if strings.Contains(s, "\n") {
					t.Errorf("message spans lines: %q", s)
				}
				return
			}
			t.Fatalf("no %s %s; errors %v warnings %v", c.severity, c.code, r.Errors, r.Warnings)
		})
	}
}

// TestRefComponent covers every form git refuses in one ref component,
// including those the id and feature patterns already exclude, so the check
// stays right if a pattern is ever widened.
func TestRefComponent(t *testing.T) {
	for s, want := range map[string]string{
		"A":          "",
		"TASK-001":   "",
		"a.b.c":      "",
		"lock":       "",
		"A.locked":   "",
		"v1.2_x-y":   "",
		".hidden":    "starts with '.'",
		"-flag":      "starts with '-'",
		"a..b":       "contains '..'",
		"a@{1}":      "contains '@{'",
		"A.lock":     "ends with '.lock'",
		"A.":         "ends with '.'",
		"x.lock.":    "ends with '.'",
		"..":         "starts with '.'",
		"A.lock.tmp": "",
	} {
		if got := refComponentProblem(s); got != want {
			t.Errorf("refComponentProblem(%q) = %q, want %q", s, got, want)
		}
	}
}

// TestBadRefIDOneIssue: an id git refuses is one error for that task, and a
// task that depends on it still resolves (no extra unknown-dependency error).
func TestBadRefIDOneIssue(t *testing.T) {
	r := Check([]byte(graphJSON(task("A.lock", 1, ""), task("B", 2, `"dependencies":["A.lock"]`))), Options{})
	if len(r.Errors) != 1 || r.Errors[0].Code != CodeBadID || r.Errors[0].Task != "A.lock" || r.Errors[0].Field != "id" {
		t.Fatalf("want one bad-id error on A.lock, got %v", r.Errors)
	}
	if _, _, _, err := Relevel([]byte(graphJSON(task("A.lock", 2, ""))), KeepLevels, Options{}); !errors.Is(err, ErrCannotRelevel) {
		t.Fatalf("relevel of a bad id: %v, want ErrCannotRelevel", err)
	}
}

// TestIssuePath: Path is only ever a file path of the graph (the --json
// "path" key), never two patterns joined in prose.
func TestIssuePath(t *testing.T) {
	for _, c := range []struct {
		doc, code, path string
	}{
		{graphJSON(task("A", 1, `"files":{"create":["x.go"]}`), task("B", 1, `"files":{"modify":["./x.go"]}`)), CodeOwnership, "x.go"},
		{graphJSON(task("A", 1, `"files":{"create":["/etc/passwd"]}`)), CodeUnsafePath, "/etc/passwd"},
		{graphJSON(task("A", 1, `"files":{"modify":["src/**"]}`), task("B", 1, `"files":{"modify":["src/a/*.go"]}`)), CodeGlobOverlap, ""},
	} {
		r := Check([]byte(c.doc), Options{})
		found := false
		for _, is := range append(r.Errors, r.Warnings...) {
			if is.Code == c.code {
				found = true
				if is.Path != c.path {
					t.Errorf("%s: path %q, want %q", c.code, is.Path, c.path)
				}
			}
		}
		if !found {
			t.Errorf("no %s in %v %v", c.code, r.Errors, r.Warnings)
		}
	}
}

func TestAllErrorsReported(t *testing.T) {
	doc := graphJSON(
		`{"id":"A","title":"x","level":0}`,
		`{"id":"B","level":1,"dependencies":["Z"]}`,
		`{"id":"C","title":"y","level":1,"files":{"create":["/abs"]}}`,
	)
	r := Check([]byte(doc), Options{})
	codes := map[string]bool{}
	for _, e := range r.Errors {
		codes[e.Code] = true
	}
	for _, want := range []string{CodeBadLevel, CodeMissing, CodeUnknownDep, CodeUnsafePath} {
		if !codes[want] {
			t.Errorf("missing %s in %v", want, r.Errors)
		}
	}
}

func TestValidGraphIsClean(t *testing.T) {
	doc := graphJSON(
		task("A", 1, `"files":{"create":["a.go"],"read":["README.md"]}`),
		task("B", 1, `"files":{"create":["b.go"]}`),
		task("C", 2, `"dependencies":["A","B"],"files":{"modify":["a.go","b.go"]},"model":"haiku","budget_usd":1.5,"max_turns":20`),
	)
	r := Check([]byte(doc), Options{})
	if !r.Valid() || len(r.Warnings) > 0 {
		t.Fatalf("errors %v warnings %v", r.Errors, r.Warnings)
	}
	c := r.Graph.Task("C")
	if c.Level != 2 || len(c.Dependencies) != 2 || c.Model != "haiku" || c.BudgetUSD != 1.5 || c.MaxTurns != 20 || c.Files.Modify[1] != "b.go" {
		t.Fatalf("fields not decoded: %+v", c)
	}
}

func TestExtraFieldsKept(t *testing.T) {
	doc := `{"feature":"f","version":"2.0","levels":{"1":{"name":"x"}},"tasks":[{"id":"A","title":"t","level":1,"phase":"p","skills_required":["go"],` + okVerify + `}]}`
	r := Check([]byte(doc), Options{})
	if !r.Valid() {
		t.Fatal(r.Err())
	}
	if string(r.Graph.Raw) != doc {
		t.Fatal("raw document not kept")
	}
}

func TestSymlinkEscape(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "inside"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "inside"), filepath.Join(root, "ok")); err != nil {
		t.Fatal(err)
	}
	doc := graphJSON(task("A", 1, `"files":{"create":["link/x.go","ok/y.go","new/z.go"]}`))
	r := Check([]byte(doc), Options{RepoRoot: root})
	if len(r.Errors) != 1 || r.Errors[0].Code != CodeUnsafePath || !strings.Contains(r.Errors[0].String(), "symlink link") {
		t.Fatalf("want one symlink error for link/x.go, got %v", r.Errors)
	}
}

func TestReadFileLimits(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadFile(dir); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("directory: %v", err)
	}
	if _, err := ReadFile(filepath.Join(dir, "nope.json")); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing: %v", err)
	}
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, make([]byte, MaxGraphBytes+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(big); err == nil || !strings.Contains(err.Error(), "limit is 32 MiB") {
		t.Errorf("big: %v", err)
	}
}

// TestProtectedPathsCannotBeOwned: with Options.Protected, a created or
// modified file it protects (or one standing where a directory of
// protected paths is) is an error naming the task, the field and the
// pattern, and so is a directory or glob that is protected itself; a
// directory that only holds protected paths is a warning, a read path and
// a glob that merely overlaps are nothing; without the option nothing is
// checked.
func TestProtectedPathsCannotBeOwned(t *testing.T) {
	prot, err := security.NewProtectedPaths(append(security.DefaultProtected(), "db/*/schema.sql"))
	if err != nil {
		t.Fatal(err)
	}
	doc := []byte(graphJSON(
		task("A", 1, `"files":{"create":["src/a.go",".github/workflows/ci.yml"],"read":[".github/workflows/ci.yml"]}`),
		task("B", 3, `"dependencies":["C"],"files":{"modify":["./.github/"]}`),
		task("C", 2, `"dependencies":["A"],"files":{"create":[".zerg/",".github"]}`),
		task("D", 2, `"dependencies":["A"],"files":{"create":["db/*","src/**","**/*.go"]}`)))
	r := Check(doc, Options{Protected: prot})
	var errs, warns []string
	for _, is := range r.Errors {
		errs = append(errs, is.String())
	}
	for _, is := range r.Warnings {
		if is.Code == CodeProtected {
			warns = append(warns, is.String())
		}
	}
	wantErrs := []string{
		`task A: files.create[1]: ".github/workflows/ci.yml" is protected by ".github/workflows/**"`,
		`task C: files.create[0]: ".zerg/" is protected by ".zerg/**"`,
		`task C: files.create[1]: ".github" is protected by ".github/workflows/**"`,
	}
	if len(errs) != len(wantErrs) {
		t.Fatalf("errors:\n%s\nwant %d", strings.Join(errs, "\n"), len(wantErrs))
	}
	for i, want := range wantErrs {
		if !strings.HasPrefix(errs[i], want) {
			t.Errorf("error %d: %s, want %s…", i, errs[i], want)
		}
	}
	if len(warns) != 1 || !strings.HasPrefix(warns[0], `task B: files.modify[0]: "./.github/" holds paths protected by ".github/workflows/**"`) {
		t.Errorf("warnings: %q", warns)
	}
	if r := Check(doc, Options{}); !r.Valid() {
		t.Errorf("without Protected: %v", r.Errors)
	}
}

// TestFeatureNameProblem: the rule every command applies to a feature name
// (run.PathsFor) accepts what a graph's "feature" may be and refuses
// anything that would reach outside .zerg/specs/<feature> or read as a flag.
func TestFeatureNameProblem(t *testing.T) {
	for _, ok := range []string{"auth", "user-auth_2", "v1.2", "2fa", "A"} {
		if why := FeatureNameProblem(ok); why != "" {
			t.Errorf("%q refused: %s", ok, why)
		}
	}
	for bad, want := range map[string]string{
		"":       "is empty",
		"../x":   "contains a path separator",
		"a/b":    "contains a path separator",
		`a\b`:    "contains a path separator",
		"..":     "is a directory reference",
		".":      "is a directory reference",
		".x":     "starts with '.'",
		"-x":     "starts with '-'",
		"a..b":   "contains '..'",
		"x.lock": "ends with '.lock'",
		"a b":    "is not a plain name",
		"_x":     "is not a plain name",
	} {
		if why := FeatureNameProblem(bad); !strings.HasPrefix(why, want) {
			t.Errorf("FeatureNameProblem(%q) = %q, want %q", bad, why, want)
		}
	}
}
