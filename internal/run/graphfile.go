package run

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/zergrush/zerg/internal/pathx"
)

// GraphFile is the task graph a command of feature works on: graph, the
// --graph flag (made absolute against cwd, so that a run records where it
// is), or the feature's own (p.Graph) when it is not given. One that is not
// there is bad input.
func (p Paths) GraphFile(cwd, graph, feature string) (string, error) {
	if graph == "" {
		graph = p.Graph
	} else if !filepath.IsAbs(graph) {
		graph = filepath.Join(cwd, graph)
	}
	if _, err := os.Stat(graph); err != nil {
		shown := graph
		if r, ok := pathx.Rel(cwd, graph); ok {
			shown = r
		}
		return "", &Error{Kind: BadInput, Feature: feature,
			Err: fmt.Errorf("%s: no task graph for feature %q; write one (see docs/task-graph.md) or pass --graph FILE", shown, feature)}
	}
	return graph, nil
}
