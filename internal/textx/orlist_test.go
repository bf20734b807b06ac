package textx

import (
	"strings"
	"testing"
)

func TestOrList(t *testing.T) {
	for _, c := range []struct {
		items []string
		want  string
	}{
		{nil, "nothing"},
		{[]string{}, "nothing"},
		{[]string{"a.go", "b.go"}, "a.go, b.go"},
	} {
		if got := strings.Join(OrList(c.items, "nothing"), ", "); got != c.want {
			t.Errorf("OrList(%q) = %q, want %q", c.items, got, c.want)
		}
	}
}
