package delivery

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/zergrush/zerg/internal/run"
)

// MergeBaser is what ReviewBase asks of git: the merge base of two commits.
type MergeBaser interface {
	MergeBase(ctx context.Context, a, b string) (string, error)
}

// ReviewBase is the commit a feature's integration head is reviewed
// against, so that the review sees exactly what zerg merge would bring: the
// run's base when a run of the feature is recorded in the repository at
// root, else where the branch left HEAD (their merge base). When there is
// neither, there is nothing to review against: bad input (run.BadInput).
func ReviewBase(ctx context.Context, g MergeBaser, root, feature, head string) (string, error) {
	if slices.Contains(run.Runs(root), feature) {
		if p, err := run.PathsFor(ctx, root, feature); err == nil {
			if v, _, err := run.Inspect(p); err == nil && v.Base != "" {
				return v.Base, nil
			}
		}
	}
	b, err := g.MergeBase(ctx, "HEAD", head)
	if err != nil || strings.TrimSpace(b) == "" {
		return "", &run.Error{Kind: run.BadInput, Feature: feature,
			Err: fmt.Errorf("no base for %s: no recorded run and no common ancestor with HEAD", run.IntegrationBranch(feature))}
	}
	return strings.TrimSpace(b), nil
}
