package cli

import (
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/runstate"
)

// A run whose workers used a subscription token says so wherever it shows
// dollars; a run with an API key does not.
func TestSubscriptionCostWording(t *testing.T) {
	const word = "subscription: usage, not dollars"
	for _, sub := range []bool{true, false} {
		start, err := eventlog.NewEvent(runstate.EvRunStarted, "", 0, runstate.RunStarted{Feature: "f", Workers: 1, Subscription: sub})
		if err != nil {
			t.Fatal(err)
		}
		done, err := eventlog.NewEvent(runstate.EvAttemptFinished, "T1", 1, runstate.AttemptFinished{CostUSD: 0.25, Model: "sonnet"})
		if err != nil {
			t.Fatal(err)
		}
		r := runstate.Cost("f", []eventlog.Event{start, done})
		var b strings.Builder
		printCost(&b, r)
		if r.Subscription != sub || strings.Contains(b.String(), word) != sub {
			t.Errorf("subscription %v: report %v\n%s", sub, r.Subscription, b.String())
		}
		b.Reset()
		newApp(&b, &b).printReport(runstate.View{Feature: "f", State: runstate.RunDelivered, CostUSD: 0.25, Subscription: sub})
		if strings.Contains(b.String(), word) != sub {
			t.Errorf("subscription %v: rush report\n%s", sub, b.String())
		}
	}
}

// A tasks-mode run's cost and status say that zerg did not measure the
// session's spending and launched no workers; another mode's (the control)
// show the figures and the launch governor as they are.
func TestTasksModeCostNotMeasured(t *testing.T) {
	for _, mode := range []string{config.ModeTasks, config.ModeSandbox} {
		tasks := mode == config.ModeTasks
		start, err := eventlog.NewEvent(runstate.EvRunStarted, "", 0, runstate.RunStarted{Feature: "f", Workers: 1, Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		r := runstate.Cost("f", []eventlog.Event{start})
		var b strings.Builder
		printCost(&b, r)
		if (r.NotMeasured != "") != tasks || strings.Contains(b.String(), "not measured: tasks mode") != tasks {
			t.Errorf("mode %s: not_measured %q\n%s", mode, r.NotMeasured, b.String())
		}
		b.Reset()
		newApp(&b, &b).printStatus(runstate.View{Feature: "f", State: runstate.RunRunning, Mode: mode, Governor: &runstate.GovernorSnapshot{Limit: 1}})
		if strings.Contains(b.String(), "0 running") == tasks || strings.Contains(b.String(), "zerg launches none") != tasks {
			t.Errorf("mode %s: status\n%s", mode, b.String())
		}
	}
}
