// Package run is the coordinator of `zerg rush`: the only writer of run
// state. It schedules a task graph's attempts on N workers level by level,
// merges each level into the integration branch through the quality gates,
// and records every transition in the run's event log, from which status,
// reports and --resume are rebuilt by replay.
package run
