package run

import (
	"context"

	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/gitx"
)

// CommitPolicy is how zerg's commits for feature are written in the
// repository at root (config commits.*, docs/configuration.md): authored
// by the repository's user.name and user.email (zerg where they are not
// set) or by zerg, committed by zerg, or by the person whose key signs
// them; each carries the feature's Zerg-Feature trailer, which is how
// cleanup tells them from a person's own.
func CommitPolicy(ctx context.Context, root string, c config.Commits, feature string) gitx.CommitPolicy {
	p := gitx.ZergCommits()
	p.Signoff, p.Sign, p.Feature = c.Signoff, c.Sign, feature
	repo := gitx.New(root)
	me, ok := repo.ConfiguredIdentity(ctx)
	if ok && c.Author != config.CommitAuthorZerg {
		p.Author = me
	}
	if c.Sign {
		p.Signing = repo.SigningConfig(ctx)
		if ok {
			p.Committer = me
		}
	}
	return p
}

// repo is the user's repository with the run's commit policy.
func (o Options) repo() *gitx.Repo {
	r := gitx.New(o.Root)
	if o.commits != nil {
		r = r.WithCommits(*o.commits)
	}
	return &gitx.Repo{Runner: r}
}
