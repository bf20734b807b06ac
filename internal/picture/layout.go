package picture

import (
	"slices"
	"strings"
)

// Node is one task as the picture needs it.
type Node struct {
	ID       string
	Title    string
	Level    int
	Deps     []string
	Status   string // a runstate.Status, or "" for a plan without a run
	Critical bool
}

// Box is a node placed: its top-left corner and size, in picture units
// (SVG user units, PNG points).
type Box struct {
	Node
	X, Y, W, H float64
	Column     int // index of its level among the graph's levels
}

// Edge joins a dependency's right side to its dependant's left side.
// Critical: both ends are on the critical path, consecutively.
type Edge struct {
	From, To       string
	X1, Y1, X2, Y2 float64
	Critical       bool
}

// Layout is a graph placed on a canvas.
type Layout struct {
	Levels []int // the levels, left to right
	Boxes  []Box
	Edges  []Edge
	W, H   float64
}

// Sizes of the drawing. A column is a level; each task is one box in its
// level's column, in id order, so the same graph always draws the same.
const (
	BoxW    = 170.0
	BoxH    = 44.0
	ColGap  = 70.0
	RowGap  = 18.0
	Margin  = 20.0
	HeadH   = 26.0 // room for the level headings
	maxText = 22   // characters of an id shown in a box
)

// Place lays out nodes: one column per level (ascending), boxes top to
// bottom in id order, an edge per known dependency. Dependencies on ids
// the graph lacks are left out (a view of a log without its graph).
func Place(nodes []Node) Layout {
	ns := slices.Clone(nodes)
	slices.SortStableFunc(ns, func(a, b Node) int {
		if a.Level != b.Level {
			return a.Level - b.Level
		}
		return strings.Compare(a.ID, b.ID)
	})
	var l Layout
	rows := 0
	at := map[string]*Box{}
	boxes := make([]Box, 0, len(ns))
	row := 0
	for _, n := range ns {
		if len(l.Levels) == 0 || l.Levels[len(l.Levels)-1] != n.Level {
			l.Levels = append(l.Levels, n.Level)
			row = 0
		}
		col := len(l.Levels) - 1
		boxes = append(boxes, Box{Node: n, Column: col, W: BoxW, H: BoxH,
			X: Margin + float64(col)*(BoxW+ColGap),
			Y: Margin + HeadH + float64(row)*(BoxH+RowGap)})
		row++
		rows = max(rows, row)
	}
	l.Boxes = boxes
	for i := range l.Boxes {
		at[l.Boxes[i].ID] = &l.Boxes[i]
	}
	onPath := critical(nodes)
	for _, b := range l.Boxes {
		deps := slices.Clone(b.Deps)
		slices.Sort(deps)
		for _, d := range deps {
			from, ok := at[d]
			if !ok {
				continue
			}
			l.Edges = append(l.Edges, Edge{From: d, To: b.ID,
				X1: from.X + from.W, Y1: from.Y + from.H/2, X2: b.X, Y2: b.Y + b.H/2,
				Critical: onPath[d] == b.ID})
		}
	}
	cols := max(len(l.Levels), 1)
	l.W = 2*Margin + float64(cols)*BoxW + float64(cols-1)*ColGap
	l.H = 2*Margin + HeadH + float64(max(rows, 1))*(BoxH+RowGap) - RowGap
	return l
}

// critical maps each critical task to the next one on the path: the
// critical nodes in level order, joined where one depends on the previous.
func critical(nodes []Node) map[string]string {
	var path []Node
	for _, n := range nodes {
		if n.Critical {
			path = append(path, n)
		}
	}
	slices.SortStableFunc(path, func(a, b Node) int { return a.Level - b.Level })
	next := map[string]string{}
	for i := 1; i < len(path); i++ {
		if slices.Contains(path[i].Deps, path[i-1].ID) {
			next[path[i-1].ID] = path[i].ID
		}
	}
	return next
}

// Label is a box's text: the id, cut to fit.
func Label(id string) string {
	r := []rune(id)
	if len(r) <= maxText {
		return id
	}
	return string(r[:maxText-1]) + "…"
}
