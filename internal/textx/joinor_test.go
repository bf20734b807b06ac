package textx

import "testing"

func TestJoinOr(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{"svg"}, "svg"},
		{[]string{"svg", "png"}, "svg or png"},
		{[]string{"dot", "svg", "png"}, "dot, svg or png"},
	} {
		if got := JoinOr(c.in); got != c.want {
			t.Errorf("JoinOr(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
