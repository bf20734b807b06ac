package bash

import (
	"reflect"
	"strings"
	"testing"
)

// TestOptTable: each group of a table lands where parse looks for it, and a
// kind the table does not know is refused when the table is built, not read
// as flags.
func TestOptTable(t *testing.T) {
	defer delete(cmdSpecs, "zz-test")
	optTable("zz-test", `strict; flag: -ab --all quiet; path: -f --file; write: -o; text: -e --regexp;
		text=: -i --in-place; dir: -C; deny it runs
		a program: -E --eval`)
	want := &optSpec{
		strict: true,
		flags:  "ab",
		values: map[byte]shortVal{'f': {kind: optPath}, 'o': {kind: optWrite}, 'e': {kind: optText},
			'i': {kind: optText, optional: true}, 'C': {kind: optDir}},
		deny: map[byte]string{'E': "it runs a program"},
		long: map[string]longOpt{"all": {kind: optFlag}, "quiet": {kind: optFlag}, "file": {kind: optPath, arg: 1},
			"regexp": {kind: optText, arg: 1}, "in-place": {kind: optText, arg: 2},
			"eval": {kind: optDeny, arg: 2, why: "it runs a program"}},
	}
	if got := cmdSpecs["zz-test"]; !reflect.DeepEqual(got, want) {
		t.Fatalf("optTable:\n got %+v\nwant %+v", got, want)
	}
	inv, err := cmdSpecs["zz-test"].parse("zz-test", strings.Fields("-af x -ix --file=y -C d op"), make([]bool, 7))
	if err != nil || !inv.has("-a", "-f", "-i", "--file", "-C") || inv.values("-f")[0] != "x" || inv.values("-i")[0] != "x" ||
		inv.values("-C")[0] != "d" || len(inv.operands) != 1 {
		t.Fatalf("parse: %+v, %v", inv, err)
	}
	if _, err := cmdSpecs["zz-test"].parse("zz-test", []string{"--ev"}, []bool{false}); err == nil || !strings.Contains(err.Error(), "it runs a program") {
		t.Fatalf("a prefix of a refused option: %v", err)
	}
	func() {
		defer func() {
			if r := recover(); r == nil || !strings.Contains(r.(string), `unknown kind "flags"`) {
				t.Fatalf("a misspelt kind: %v", r)
			}
		}()
		optTable("zz-test", "flags: -x")
	}()
}
