package textx

import (
	"strconv"
	"testing"
)

func TestListUpTo(t *testing.T) {
	var many []string
	for i := range 12 {
		many = append(many, "f"+strconv.Itoa(i))
	}
	for _, c := range []struct {
		items []string
		want  string
	}{
		{nil, ""},
		{[]string{"a"}, "a"},
		{many[:10], "f0, f1, f2, f3, f4, f5, f6, f7, f8, f9"},
		{many, "f0, f1, f2, f3, f4, f5, f6, f7, f8, f9 and 2 more"},
	} {
		if got := ListUpTo(c.items, 10); got != c.want {
			t.Errorf("ListUpTo(%d items) = %q, want %q", len(c.items), got, c.want)
		}
	}
}
