// Package tui is the live terminal view of a run (bubbletea): zerg rush and
// zerg status --watch show it when stdout is a terminal. It only reads: a
// poll of run.Inspect (the event log, the heartbeat file) feeds it, so the
// coordinator never waits for it, and whatever it shows another reader of
// the log (zerg status --json) would show too. The decisions (ETA, bar
// fractions, column widths) are plain functions, tested without a terminal.
package tui
