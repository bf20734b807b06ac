// Package spec loads, validates, describes and re-levels task graphs
// (task-graph.json, ZERG's format included): the contract between planning and
// the run.
package spec
