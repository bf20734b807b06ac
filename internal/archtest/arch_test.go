// Package archtest holds the tests that keep one answer to a question in
// one place: they read the source tree and fail when a second definition
// appears outside its home. (The mode registry's own guard is in
// internal/driver: TestModeKnowledgeStaysInTheDrivers.)
package archtest

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// A hand-written "is P inside D": a relative path compared with "..", a
// prefix with a separator glued on, or a name or its subtree. pathx
// answers that (lexically, with a name like ..x inside).
var containment = regexp.MustCompile(`filepath\.Rel\(.*(\.\.|IsLocal)|IsLocal\(rel\)|HasPrefix\([^,]+, *[^,"]+\+ *("/"|string\((filepath|os)\.(Separator|PathSeparator)\))\)|HasPrefix\((rel|r), *"\.\.|== "\.git" \|\| strings\.HasPrefix\([^,]+, *"\.git/"\)`)

// The attempt directory's file names, which attempt.Record owns.
var recordName = regexp.MustCompile(`"(prompt\.md|stream\.jsonl|diff\.patch|verify\.log|quarantine|context\.json|diagnosis\.json|refused\.json|attempts)"|Join\([^)]*"claude"\)`)

func TestContainmentIsPathxs(t *testing.T) {
	if got := scan(t, root(t), containment, "internal/pathx/"); len(got) > 0 {
		t.Errorf("containment written by hand outside internal/pathx (use pathx.Within, Below or Rel):\n%s", strings.Join(got, "\n"))
	}
}

func TestAttemptRecordNamesAreTheRecords(t *testing.T) {
	if got := scan(t, root(t), recordName, "internal/attempt/record.go"); len(got) > 0 {
		t.Errorf("an attempt record's file name outside attempt.Record:\n%s", strings.Join(got, "\n"))
	}
}

// TestTheScansFind is the control: a tree with one of each finds both,
// and the homes are left out.
func TestTheScansFind(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, src string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("internal/x/x.go", "package x\n\nfunc in(d, p string) bool {\n\trel, err := filepath.Rel(d, p)\n\treturn err == nil && !strings.HasPrefix(rel, \"..\")\n}\n\nvar f = \"stream.jsonl\"\n")
	write("internal/pathx/pathx.go", "package pathx\n\nfunc Within(d, p string) bool { rel, _ := filepath.Rel(d, p); return !strings.HasPrefix(rel, \"..\") }\n")
	write("internal/x/x_test.go", "package x\n\nvar g = \"stream.jsonl\"\n")
	if got := scan(t, dir, containment, "internal/pathx/"); len(got) != 1 || !strings.HasPrefix(got[0], "internal/x/x.go:") {
		t.Errorf("containment scan found %q, want the one line of internal/x/x.go", got)
	}
	if got := scan(t, dir, recordName, "internal/attempt/record.go"); len(got) != 1 {
		t.Errorf("record-name scan found %q, want one line", got)
	}
}

// root is the module's root: two levels up from this package.
func root(t *testing.T) string {
	r, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(r, "go.mod")); err != nil {
		t.Fatalf("no go.mod at %s", r)
	}
	return r
}

// scan lists file:line: text of each line of the non-test Go files under
// root's internal/ and cmd/ that re matches, except under home (a path
// prefix relative to root) and in struct tags.
func scan(t *testing.T, root string, re *regexp.Regexp, home string) []string {
	var out []string
	for _, top := range []string{"internal", "cmd"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if os.IsNotExist(err) {
					return nil
				}
				return err
			}
			rel, _ := filepath.Rel(root, p)
			rel = filepath.ToSlash(rel)
			if d.IsDir() || !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || strings.HasPrefix(rel, home) {
				return nil
			}
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			defer f.Close()
			sc := bufio.NewScanner(f)
			sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
			for n := 1; sc.Scan(); n++ {
				if l := sc.Text(); re.MatchString(l) && !strings.Contains(l, "json:\"") {
					out = append(out, rel+":"+strconv.Itoa(n)+": "+strings.TrimSpace(l))
				}
			}
			return sc.Err()
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}
