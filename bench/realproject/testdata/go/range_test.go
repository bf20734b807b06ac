package cast

import (
	"testing"

	qt "github.com/frankban/quicktest"
)

func TestToIntInRangeE(t *testing.T) {
	c := qt.New(t)
	tests := []struct {
		in     interface{}
		lo, hi int
		want   int
		ok     bool
	}{
		{8, 1, 64, 8, true},
		{"12", 1, 64, 12, true},
		{int64(64), 1, 64, 64, true},
		{1.0, 1, 64, 1, true},
		{0, 1, 64, 0, false},
		{"65", 1, 64, 0, false},
		{"many", 1, 64, 0, false},
		{-3, -5, 5, -3, true},
	}
	for _, tt := range tests {
		got, err := ToIntInRangeE(tt.in, tt.lo, tt.hi)
		if tt.ok {
			c.Assert(err, qt.IsNil, qt.Commentf("%v", tt.in))
		} else {
			c.Assert(err, qt.IsNotNil, qt.Commentf("%v", tt.in))
		}
		c.Assert(got, qt.Equals, tt.want)
	}
	c.Assert(ToIntInRange("3", 1, 2), qt.Equals, 0)
	c.Assert(ToIntInRange("2", 1, 2), qt.Equals, 2)
}
