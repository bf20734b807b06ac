// Package picture draws a run: its task graph (levels as columns,
// dependencies as edges, status as colour, the critical path marked) as SVG,
// DOT or PNG, and its cost as charts. zerg graph show, zerg cost and the
// dashboard all draw through it, so the picture in a PR, in docs and in the
// browser is one and the same. PNG is drawn in Go (gonum/plot's canvas): no
// browser, no graphviz.
package picture
