// Package runstate is the read model of a run: the events of its log, the
// State a replay of them gives (with the transition table every event is
// checked against), the View that status, the TUI, the dashboard and every
// --json show, the heartbeat file, and what the run is expected to cost and
// did cost. It reads; internal/run, the coordinator, is the only writer of
// the log, and this package does not import it.
package runstate
