package run

import (
	"github.com/zergrush/zerg/internal/cliprobe"
	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/runstate"
)

// WorkerModels are the models a run's workers use, as the projection p and
// cfg name them and as the launch check (cli, nil: none) saw the CLI
// resolve them: what the run's cost is priced by.
func WorkerModels(p runstate.Projection, cfg config.Config, cli *cliprobe.Report) []string {
	var models []string
	for _, t := range p.Tasks {
		models = append(models, t.Model)
	}
	models = append(models, cfg.Models.Fallback)
	if cli != nil {
		for _, m := range cli.Models {
			models = append(models, m.Resolved...)
		}
	}
	return models
}
