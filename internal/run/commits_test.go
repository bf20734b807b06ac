package run

import (
	"context"
	"os/exec"
	"slices"
	"testing"

	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/gitx"
)

// TestCommitPolicy: commits.* as the repository's config fills it in.
func TestCommitPolicy(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	t.Setenv("HOME", t.TempDir()) // no global config of the machine's
	for _, args := range [][]string{{"init", "-q"}, {"config", "user.name", "Ada"}, {"config", "user.email", "ada@example.org"}, {"config", "gpg.format", "ssh"}} {
		if out, err := exec.Command("git", append([]string{"-C", root}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	ada := gitx.Identity{Name: "Ada", Email: "ada@example.org"}
	for _, c := range []struct {
		cfg               config.Commits
		author, committer gitx.Identity
		signing           bool
	}{
		{config.Commits{Author: config.CommitAuthorUser}, ada, gitx.ZergIdentity, false},
		{config.Commits{Author: config.CommitAuthorZerg}, gitx.ZergIdentity, gitx.ZergIdentity, false},
		{config.Commits{Author: config.CommitAuthorUser, Sign: true, Signoff: true}, ada, ada, true},
	} {
		p := CommitPolicy(ctx, root, c.cfg, "auth")
		if p.Author != c.author || p.Committer != c.committer || p.Feature != "auth" || p.Signoff != c.cfg.Signoff || p.Sign != c.cfg.Sign ||
			slices.Contains(p.Signing, "gpg.format=ssh") != c.signing {
			t.Errorf("%+v: %+v", c.cfg, p)
		}
	}
	// Nobody configured: zerg authors.
	bare := t.TempDir()
	exec.Command("git", "-C", bare, "init", "-q").Run()
	if p := CommitPolicy(ctx, bare, config.Commits{Author: config.CommitAuthorUser}, "auth"); p.Author != gitx.ZergIdentity {
		t.Errorf("no user.name: %+v", p)
	}
}
