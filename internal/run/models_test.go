package run

import (
	"slices"
	"testing"

	"github.com/zergrush/zerg/internal/cliprobe"
	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/runstate"
)

func TestWorkerModels(t *testing.T) {
	cfg := config.Default()
	cfg.Models.Fallback = "haiku"
	p := runstate.Projection{Tasks: []runstate.TaskProjection{{Model: "sonnet"}}}
	if got := WorkerModels(p, cfg, nil); !slices.Equal(got, []string{"sonnet", "haiku"}) {
		t.Errorf("without the launch check: %v", got)
	}
	cli := &cliprobe.Report{Models: []cliprobe.ModelReport{{Model: "sonnet", Resolved: []string{"claude-sonnet-5-5"}}}}
	if got := WorkerModels(p, cfg, cli); !slices.Equal(got, []string{"sonnet", "haiku", "claude-sonnet-5-5"}) {
		t.Errorf("with it: %v", got)
	}
}
