package cast

import (
	"testing"

	qt "github.com/frankban/quicktest"
)

func TestToOptionsE(t *testing.T) {
	c := qt.New(t)
	o, err := ToOptionsE(map[string]interface{}{"Workers": "8", "verbose": "yes", "name": "pool"})
	c.Assert(err, qt.IsNil)
	c.Assert(o, qt.DeepEquals, Options{Workers: 8, Verbose: true, Name: "pool"})

	o, err = ToOptionsE(map[interface{}]interface{}{"verbose": "off"})
	c.Assert(err, qt.IsNil)
	c.Assert(o, qt.DeepEquals, Options{Workers: 4})

	for _, bad := range []interface{}{
		map[string]interface{}{"workers": 0},
		map[string]interface{}{"workers": "lots"},
		map[string]interface{}{"verbose": "maybe"},
		map[string]interface{}{"colour": "red"},
		map[string]interface{}{"name": []int{1}},
		"workers=2",
	} {
		_, err := ToOptionsE(bad)
		c.Assert(err, qt.IsNotNil, qt.Commentf("%v", bad))
	}
}
