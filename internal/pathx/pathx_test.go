package pathx

import (
	"path/filepath"
	"testing"
)

func TestWithinAndBelow(t *testing.T) {
	for _, c := range []struct {
		dir, p        string
		within, below bool
	}{
		{"/ws", "/ws", true, false},
		{"/ws", "/ws/a/b", true, true},
		{"/ws/", "/ws/a", true, true},
		{"/ws", "/ws/../etc", false, false},
		{"/ws", "/wsx", false, false},
		{"/ws", "/ws/..foo", true, true}, // a name, not a way out
		{"/ws", "/", false, false},
		{"/", "/etc", true, true},
		{"a", "a/b", true, true},
		{"a", "b", false, false},
		{"/ws", "ws/a", false, false}, // one absolute, one relative: never inside
		{".", "..", false, false},
	} {
		if got := Within(c.dir, c.p); got != c.within {
			t.Errorf("Within(%q, %q) = %v", c.dir, c.p, got)
		}
		if got := Below(c.dir, c.p); got != c.below {
			t.Errorf("Below(%q, %q) = %v", c.dir, c.p, got)
		}
	}
}

func TestRel(t *testing.T) {
	for _, c := range []struct {
		dir, p, rel string
		ok          bool
	}{
		{"/ws", "/ws", ".", true},
		{"/ws", "/ws/a/b", "a/b", true},
		{"/ws", "/ws/..x", "..x", true}, // a name, not a way out
		{"/ws", "/ws/../x", "", false},
		{"/ws", "/wsx/a", "", false},
		{"a", "a/b", "b", true},
		{"/ws", "a", "", false},
	} {
		if rel, ok := Rel(c.dir, c.p); rel != c.rel || ok != c.ok {
			t.Errorf("Rel(%q, %q) = %q, %v; want %q, %v", c.dir, c.p, rel, ok, c.rel, c.ok)
		}
	}
}

func TestRelOrAbs(t *testing.T) {
	for _, tt := range []struct{ base, p, want string }{
		{"/repo", "/repo/.git/hooks/pre-commit", ".git/hooks/pre-commit"},
		{"/repo", "/elsewhere/hooks/pre-commit", "/elsewhere/hooks/pre-commit"},
		{"/repo", "/repo", "."},
	} {
		if got := RelOrAbs(tt.base, tt.p); got != tt.want {
			t.Errorf("RelOrAbs(%q, %q) = %q, want %q", tt.base, tt.p, got, tt.want)
		}
	}
}

func TestShort(t *testing.T) {
	for _, c := range []struct{ dir, p, want string }{
		{"/r", "/r/a/b", filepath.Join("a", "b")},
		{"/r", "/r", "."},
		{"/r", "/elsewhere/x", "/elsewhere/x"},
		{"/r", "rel/x", "rel/x"},
	} {
		if got := Short(c.dir, c.p); got != c.want {
			t.Errorf("Short(%q, %q) = %q, want %q", c.dir, c.p, got, c.want)
		}
	}
}
