package cast

import (
	"testing"

	qt "github.com/frankban/quicktest"
)

func TestToBoolWordE(t *testing.T) {
	c := qt.New(t)
	for _, in := range []interface{}{"yes", "Y", " on ", "true", 1, true} {
		got, err := ToBoolWordE(in)
		c.Assert(err, qt.IsNil, qt.Commentf("%q", in))
		c.Assert(got, qt.IsTrue, qt.Commentf("%q", in))
	}
	for _, in := range []interface{}{"no", "N", "OFF", "false", 0, false, nil} {
		got, err := ToBoolWordE(in)
		c.Assert(err, qt.IsNil, qt.Commentf("%q", in))
		c.Assert(got, qt.IsFalse, qt.Commentf("%q", in))
	}
	_, err := ToBoolWordE("maybe")
	c.Assert(err, qt.IsNotNil)
	c.Assert(ToBoolWord("maybe"), qt.IsFalse)
}
