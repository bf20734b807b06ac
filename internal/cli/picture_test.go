package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// graph show and cost draw their pictures; a bad format, chart or flag
// mix is one line naming what to give, exit 2.
func TestPictureFormats(t *testing.T) {
	f := newFakeRun(t, "auth", true)
	graph := []byte(`{"feature": "auth", "tasks": [
		{"id": "T1", "title": "one", "level": 1, "files": {"create": ["a.txt"]}, "verification": {"command": "true"}},
		{"id": "T2", "title": "two", "level": 2, "dependencies": ["T1"], "files": {"create": ["b.txt"]}, "verification": {"command": "true"}}]}`)
	writeFile(t, filepath.Join(f.root, ".zerg", "specs", "auth", "task-graph.json"), graph)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"graph", "show", "auth", "--format", "svg"}, `data-task="T2"`},
		{[]string{"graph", "show", "auth", "--format", "dot"}, `"T1" -> "T2" [color="#c2185b"`},
		{[]string{"graph", "show", "auth", "--format", "png"}, "\x89PNG"},
		{[]string{"cost", "auth", "--format", "svg"}, "Spending over time"},
		{[]string{"cost", "auth", "--format", "svg", "--chart", "levels"}, "Cost per level"},
	} {
		code, out, errOut := runZerg(t, c.args...)
		if code != ExitOK || !strings.Contains(out, c.want) {
			t.Errorf("%v: exit %d, stdout has %q: %v; stderr %s", c.args, code, c.want, strings.Contains(out, c.want), errOut)
		}
	}
	for _, args := range [][]string{
		{"graph", "show", "auth", "--format", "pdf"},
		{"graph", "show", "auth", "--format", "svg", "--json"},
		{"graph", "show", "auth", "-o", "x.svg"},
		{"cost", "auth", "--format", "dot"},
		{"cost", "auth", "--format", "svg", "--chart", "pie"},
		{"dashboard", "--addr", "0.0.0.0:0", "--open=false"},
		{"dashboard", "--addr", "nonsense", "--open=false"},
	} {
		code, _, errOut := runZerg(t, args...)
		if code != ExitUsage || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line", args, code, errOut)
		}
	}
}
