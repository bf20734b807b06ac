package picture

import (
	"bytes"
	"fmt"
	"strconv"
)

// DOT writes the graph as Graphviz text: one rank per level, left to right,
// the same colours and critical path as SVG. Strings are quoted with
// strconv.Quote, whose escapes DOT reads the same way for the characters
// ids and statuses can hold.
func DOT(name string, l Layout) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "digraph %s {\n", strconv.Quote(name))
	b.WriteString("  rankdir=LR;\n  node [shape=box, style=\"rounded,filled\", fontname=\"sans-serif\"];\n")
	byLevel := map[int][]Box{}
	for _, bx := range l.Boxes {
		byLevel[bx.Level] = append(byLevel[bx.Level], bx)
	}
	for _, lv := range l.Levels {
		fmt.Fprintf(&b, "  subgraph \"cluster_level_%d\" {\n    label=\"level %d\";\n    rank=same;\n", lv, lv)
		for _, bx := range byLevel[lv] {
			label := bx.ID
			if bx.Status != "" {
				label += "\\n" + bx.Status
			}
			attrs := fmt.Sprintf("label=%s, fillcolor=%s", strconv.Quote(label), strconv.Quote(Fill(bx.Status)))
			if bx.Critical {
				attrs += fmt.Sprintf(", color=%s, penwidth=3", strconv.Quote(CriticalStroke))
			}
			fmt.Fprintf(&b, "    %s [%s];\n", strconv.Quote(bx.ID), attrs)
		}
		b.WriteString("  }\n")
	}
	for _, e := range l.Edges {
		attrs := ""
		if e.Critical {
			attrs = fmt.Sprintf(" [color=%s, penwidth=2.5]", strconv.Quote(CriticalStroke))
		}
		fmt.Fprintf(&b, "  %s -> %s%s;\n", strconv.Quote(e.From), strconv.Quote(e.To), attrs)
	}
	b.WriteString("}\n")
	return b.Bytes()
}
