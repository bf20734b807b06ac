package pathx

import "testing"

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
