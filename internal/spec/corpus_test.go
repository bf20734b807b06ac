package spec

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// corpusDir holds 50 real task graphs written for ZERG and their expected
// verdicts (EXPECTED.md); LICENSE there says where they come from.
const corpusDir = "testdata/corpus"

type expectation struct {
	file, verdict, firstError string
}

// readExpected parses the verdict table of EXPECTED.md.
func readExpected(t *testing.T, path string) []expectation {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("corpus not found: %v", err)
	}
	defer f.Close()
	var out []expectation
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "|")
		if len(cols) < 4 || !strings.HasSuffix(strings.TrimSpace(cols[1]), ".json") {
			continue
		}
		out = append(out, expectation{
			file:       strings.TrimSpace(cols[1]),
			verdict:    strings.TrimSpace(cols[2]),
			firstError: strings.TrimSpace(cols[3]),
		})
	}
	return out
}

// TestCorpusVerdicts validates every real ZERG graph of the corpus and expects
// exactly the verdict of EXPECTED.md; for invalid graphs, some error must name
// the same tasks (and the path, for ownership conflicts).
func TestCorpusVerdicts(t *testing.T) {
	dir := corpusDir
	exps := readExpected(t, filepath.Join(dir, "EXPECTED.md"))
	if len(exps) != 50 {
		t.Fatalf("EXPECTED.md lists %d graphs, want 50", len(exps))
	}
	idRe := regexp.MustCompile(`[A-Za-z][A-Za-z0-9_.-]*-[A-Za-z0-9_.-]+`)
	pathRe := regexp.MustCompile(`[\w./-]+\.[a-z]+`)
	for _, e := range exps {
		t.Run(strings.TrimSuffix(e.file, ".task-graph.json"), func(t *testing.T) {
			r, err := Load(filepath.Join(dir, e.file), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := map[bool]string{true: "VALID", false: "INVALID"}[r.Valid()]; got != e.verdict {
				t.Fatalf("verdict %s, want %s; errors:\n%v", got, e.verdict, r.Err())
			}
			if r.Valid() {
				return
			}
			var ids []string
			for _, m := range idRe.FindAllString(e.firstError, -1) {
				if r.Graph.Task(m) != nil {
					ids = append(ids, m)
				}
			}
			if len(ids) == 0 {
				t.Fatalf("no task id found in expected error %q", e.firstError)
			}
			wantPath := ""
			if strings.Contains(e.firstError, "owned by") {
				wantPath = pathRe.FindString(e.firstError)
			}
			for _, is := range r.Errors {
				s := is.String()
				ok := strings.Contains(s, wantPath)
				for _, id := range ids {
					ok = ok && strings.Contains(s, id)
				}
				if ok {
					return
				}
			}
			t.Fatalf("no error names %v %s; errors:\n%v", ids, wantPath, r.Err())
		})
	}
}
