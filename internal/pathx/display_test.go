package pathx

import (
	"path/filepath"
	"testing"
)

func TestAbsFrom(t *testing.T) {
	cwd := filepath.FromSlash("/home/u/repo")
	for p, want := range map[string]string{
		"a/b":          "/home/u/repo/a/b",
		"./a/../b":     "/home/u/repo/b",
		".":            "/home/u/repo",
		"/etc//x/../y": "/etc/y",
	} {
		if got := AbsFrom(cwd, filepath.FromSlash(p)); got != filepath.FromSlash(want) {
			t.Errorf("AbsFrom(%q) = %q, want %q", p, got, want)
		}
	}
}

func TestSlashRelOrAbsAndRelOr(t *testing.T) {
	base := filepath.FromSlash("/r")
	for _, c := range []struct{ p, slash, relOr string }{
		{"/r/a/b", "a/b", "a/b"},
		{"/r", ".", "."},
		{"/other/x", "/other/x", "/other/x"},
		{"/r/../rx", "/r/../rx", "/r/../rx"},
	} {
		p := filepath.FromSlash(c.p)
		if got := SlashRelOrAbs(base, p); got != c.slash {
			t.Errorf("SlashRelOrAbs(%q) = %q, want %q", c.p, got, c.slash)
		}
		if got := RelOr(base, p); got != filepath.FromSlash(c.relOr) {
			t.Errorf("RelOr(%q) = %q, want %q", c.p, got, c.relOr)
		}
	}
}
