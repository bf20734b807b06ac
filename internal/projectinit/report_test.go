package projectinit

import (
	"encoding/json"
	"testing"
)

func TestReport(t *testing.T) {
	r := NewReport("/repo")
	if b, _ := json.Marshal(r); string(b) != `{"root":"/repo","created":[],"existing":[],"updated":[]}` {
		t.Errorf("empty report: %s", b)
	}
	for _, o := range []Outcome{created("a", ""), exists("b", ""), {Kind: Updated, Path: "c"}} {
		l := r.List(o.Kind)
		*l = append(*l, o.Path)
	}
	if len(r.Created) != 1 || r.Created[0] != "a" || len(r.Existing) != 1 || r.Existing[0] != "b" || len(r.Updated) != 1 || r.Updated[0] != "c" {
		t.Errorf("lists: %+v", r)
	}
	if !r.Changed() {
		t.Error("a created path is a change")
	}
	if r := (Report{Existing: []string{"b"}}); r.Changed() {
		t.Error("only existing paths: no change")
	}
}
