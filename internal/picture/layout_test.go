package picture

import (
	"bytes"
	"strings"
	"testing"
)

func demoNodes() []Node {
	return []Node{
		{ID: "L2-b", Level: 2, Deps: []string{"L1-a"}, Status: "running", Critical: true},
		{ID: "L1-a", Level: 1, Status: "merged", Critical: true},
		{ID: "L1-c", Level: 1, Status: "failed"},
		{ID: "L3-d", Level: 3, Deps: []string{"L2-b", "L1-c", "gone"}, Status: "pending", Critical: true},
	}
}

func box(t *testing.T, l Layout, id string) Box {
	t.Helper()
	for _, b := range l.Boxes {
		if b.ID == id {
			return b
		}
	}
	t.Fatalf("no box %s", id)
	return Box{}
}

// Levels are columns left to right, whatever order the nodes come in;
// within a column, boxes go down in id order.
func TestPlaceLevelsAreColumns(t *testing.T) {
	l := Place(demoNodes())
	if got := l.Levels; len(got) != 3 || got[0] != 1 || got[2] != 3 {
		t.Fatalf("levels %v", got)
	}
	a, c, b, d := box(t, l, "L1-a"), box(t, l, "L1-c"), box(t, l, "L2-b"), box(t, l, "L3-d")
	if a.X != c.X || !(a.X < b.X && b.X < d.X) {
		t.Errorf("columns: a %v c %v b %v d %v", a.X, c.X, b.X, d.X)
	}
	if !(a.Y < c.Y) {
		t.Errorf("L1-a should be above L1-c: %v %v", a.Y, c.Y)
	}
	for _, bx := range l.Boxes {
		if bx.X+bx.W > l.W || bx.Y+bx.H > l.H {
			t.Errorf("%s outside the canvas %vx%v", bx.ID, l.W, l.H)
		}
	}
}

// An edge per known dependency, from the dependency's right side to the
// dependant's left; a dependency the graph lacks draws nothing.
func TestPlaceEdges(t *testing.T) {
	l := Place(demoNodes())
	if len(l.Edges) != 3 {
		t.Fatalf("edges %+v", l.Edges)
	}
	for _, e := range l.Edges {
		if e.X1 >= e.X2 {
			t.Errorf("edge %s→%s goes backwards", e.From, e.To)
		}
		if e.From == "gone" {
			t.Errorf("edge from an unknown task")
		}
	}
}

// The critical path marks the edges between consecutive critical tasks,
// not an edge from a task off the path.
func TestPlaceCriticalEdges(t *testing.T) {
	crit := map[string]bool{}
	for _, e := range Place(demoNodes()).Edges {
		crit[e.From+">"+e.To] = e.Critical
	}
	want := map[string]bool{"L1-a>L2-b": true, "L2-b>L3-d": true, "L1-c>L3-d": false}
	for k, v := range want {
		if crit[k] != v {
			t.Errorf("edge %s critical=%v, want %v", k, crit[k], v)
		}
	}
}

func TestSVGCarriesStatusAndEscapes(t *testing.T) {
	ns := demoNodes()
	ns[0].Title = `<script>alert("x")</script>`
	s := string(SVG(Place(ns)))
	for _, want := range []string{`data-task="L2-b" data-status="running"`, `class="task critical"`, `fill="` + Fill("merged") + `"`, `class="edge critical"`} {
		if !strings.Contains(s, want) {
			t.Errorf("SVG lacks %s", want)
		}
	}
	if strings.Contains(s, "<script>") {
		t.Error("a title went into the SVG unescaped")
	}
}

func TestDOTRanksLevels(t *testing.T) {
	d := string(DOT("demo", Place(demoNodes())))
	for _, want := range []string{"rankdir=LR", `"cluster_level_1"`, `"L1-a" -> "L2-b" [color="#c2185b"`, `"L1-c" -> "L3-d";`} {
		if !strings.Contains(d, want) {
			t.Errorf("DOT lacks %s:\n%s", want, d)
		}
	}
}

func TestPNGIsAnImage(t *testing.T) {
	b, err := PNG(Place(demoNodes()))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatalf("not a PNG: % x", b[:8])
	}
}

func TestEmptyGraphDraws(t *testing.T) {
	l := Place(nil)
	if l.W <= 0 || l.H <= 0 || len(l.Boxes) != 0 {
		t.Fatalf("%+v", l)
	}
	if !strings.Contains(string(SVG(l)), "</svg>") {
		t.Fatal("no SVG")
	}
}
