package spec

import (
	"strings"
	"testing"
)

func TestCannotFail(t *testing.T) {
	cases := []struct {
		cmd  string
		want string // a part of the reason; "" for a command that can fail
	}{
		{"true", "always exits 0"},
		{":", "always exits 0"},
		{"exit 0", "always exits 0"},
		{"echo done", "always exits 0"},
		{"pytest -q || true", "`|| true` makes its status 0 whatever `pytest -q` does"},
		{"python3 -m pytest -q tests/ || :", "`|| :`"},
		{"grep -c TODO README.md || true", "`|| true`"},
		{"cargo test --offline || exit 0", "`|| exit 0`"},
		{"npm test || echo failed", "`|| echo failed`"},
		{"go test ./...; true", "it ends with `true`"},
		{"go test ./... ; exit 0", "`exit 0` ends it"},
		{"make test; exit 0; echo never", "`exit 0` ends it"},
		{"(pytest || true)", "`|| true`"},
		{"{ pytest; } || true", "`|| true`"},
		{"pytest || true && echo ok", "always exits 0"},
		{"node --test | tee test.log", "its last command, `tee test.log`"},
		{"cargo test &", "in the background"},
		{"set -e; pytest; true", ""},
		{"set -o pipefail; node --test | tee log", ""},
		{"set -euo pipefail; node --test | tee log", ""},
		{"set +o pipefail; node --test | tee log", "its last command, `tee log`"},

		// Commands that can fail.
		{"pytest -q", ""},
		{"go test ./... && go vet ./...", ""},
		{"true && pytest", ""},
		{"echo '|| true' && pytest", ""},
		{"pytest; echo \"; true\" >/dev/null; pytest -k x", ""},
		{"! true", ""},
		{"test -f a.txt || exit 1", ""},
		{"grep -q x a.txt | sort -c", ""},
		{"exit", ""},
		{"pytest 'unterminated", ""}, // cannot be parsed: the shell says so when it runs
	}
	for _, c := range cases {
		got := CannotFail(c.cmd)
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("CannotFail(%q) = %q, want %q", c.cmd, got, c.want)
		}
	}
}
