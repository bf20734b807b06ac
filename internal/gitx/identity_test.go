package gitx

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommitPolicy: zerg's commits (a commit, a merge, a commit-tree) name
// the policy's author and committer, carry the feature's trailer and the
// author's sign-off, and, signed, verify with the user's SSH key; the
// default policy makes zerg author and committer and signs nothing, even
// with commit.gpgSign set in the repository's config.
func TestCommitPolicy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	mustRun(t, r.Runner, "config", "commit.gpgSign", "true")
	head, _ := r.RevParse(ctx, "HEAD")
	show := func(rev string) string {
		return mustRun(t, r.Runner, "log", "-1", "--format=%an <%ae>|%cn <%ce>|%G?|%B", rev)
	}
	if got := show(head); !strings.HasPrefix(got, "zerg <zerg@localhost>|zerg <zerg@localhost>|N|") {
		t.Errorf("default policy: %q", got)
	}

	mustRun(t, r.Runner, "config", "user.name", "Ada Lovelace")
	mustRun(t, r.Runner, "config", "user.email", "ada@example.org")
	me, ok := r.ConfiguredIdentity(ctx)
	if !ok || me != (Identity{Name: "Ada Lovelace", Email: "ada@example.org"}) {
		t.Fatalf("configured identity %+v %v", me, ok)
	}
	u := r.WithCommits(CommitPolicy{Author: me, Committer: ZergIdentity, Signoff: true, Feature: "auth"})
	write(t, filepath.Join(r.Dir, "a.txt"), "a\n")
	mustRun(t, u, "add", "a.txt")
	c, err := u.Commit(ctx, "T1: add a", map[string]string{"Task-Id": "T1"})
	if err != nil {
		t.Fatal(err)
	}
	got := show(c)
	for _, want := range []string{"Ada Lovelace <ada@example.org>|zerg <zerg@localhost>|N|", "Task-Id: T1", "Zerg-Feature: auth", "Signed-off-by: Ada Lovelace <ada@example.org>"} {
		if !strings.Contains(got, want) {
			t.Errorf("commit lacks %q:\n%s", want, got)
		}
	}
	mustRun(t, r.Runner, "branch", "side", head)
	mustRun(t, r.Runner, "checkout", "-q", "side")
	write(t, filepath.Join(r.Dir, "b.txt"), "b\n")
	mustRun(t, r.Runner, "add", "b.txt")
	if _, err := u.Commit(ctx, "side", nil); err != nil {
		t.Fatal(err)
	}
	mustRun(t, r.Runner, "checkout", "-q", "main")
	m, err := u.Merge(ctx, "side", "Merge side")
	if err != nil {
		t.Fatal(err)
	}
	if got := show(m); !strings.HasPrefix(got, "Ada Lovelace <ada@example.org>|zerg <zerg@localhost>|N|Merge side") || !strings.Contains(got, "Zerg-Feature: auth") || !strings.Contains(got, "Signed-off-by: Ada") {
		t.Errorf("merge: %q", got)
	}

	// Signed with an SSH key, as the user's config says.
	key := filepath.Join(t.TempDir(), "key")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v %s", err, out)
	}
	pub, _ := os.ReadFile(key + ".pub")
	allowed := filepath.Join(t.TempDir(), "allowed")
	write(t, allowed, "ada@example.org "+string(pub))
	for k, v := range map[string]string{"gpg.format": "ssh", "user.signingKey": key, "gpg.ssh.allowedSignersFile": allowed} {
		mustRun(t, r.Runner, "config", k, v)
	}
	s := r.WithCommits(CommitPolicy{Author: me, Committer: me, Sign: true, Feature: "auth"})
	tree, _ := s.RevParseTree(ctx, m)
	signed, err := s.CommitTree(ctx, tree, m, "T2: signed", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(ctx, "verify-commit", signed); err != nil {
		t.Errorf("the signed commit does not verify: %v", err)
	}
	if got := show(signed); !strings.HasPrefix(got, "Ada Lovelace <ada@example.org>|Ada Lovelace <ada@example.org>|G|") {
		t.Errorf("signed commit: %q", got)
	}
	// The control: the same commit with the default policy is unsigned
	// although the config asks to sign.
	plain, err := r.CommitTree(ctx, tree, m, "T2: plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(ctx, "verify-commit", plain); err == nil {
		t.Error("a commit of the default policy is signed")
	}
}

// TestForeignCommits: the commits only a zerg/FEATURE/ branch holds that
// zerg did not make are found: a person's commit on the integration
// branch, not zerg's (committed by zerg, or signed by the person with the
// feature's trailer), nor one another branch holds.
func TestForeignCommits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	base, _ := r.RevParse(ctx, "HEAD")
	mustRun(t, r.Runner, "checkout", "-q", "-b", "zerg/auth/integration")
	commit := func(rn *Runner, file, msg string, trailers map[string]string) string {
		write(t, filepath.Join(r.Dir, file), file+"\n")
		mustRun(t, rn, "add", file)
		c, err := rn.Commit(ctx, msg, trailers)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	ada := Identity{Name: "Ada", Email: "ada@example.org"}
	commit(r.Runner, "t1.txt", "T1: zerg's", map[string]string{"Zerg-Feature": "auth"})
	commit(r.WithCommits(CommitPolicy{Author: ada, Committer: ada, Feature: "auth"}), "t2.txt", "T2: signed by ada", nil)
	tip := commit(r.WithCommits(CommitPolicy{Author: ada, Committer: ada}), "fix.txt", "my fix", nil)
	got, err := r.ForeignCommits(ctx, tip, "zerg/auth/", "auth", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Commit != tip || got[0].Subject != "my fix" || got[0].Committer != ada {
		t.Fatalf("foreign commits %+v", got)
	}
	// Another feature's trailer is not this feature's.
	if other, _ := r.ForeignCommits(ctx, tip, "zerg/auth/", "billing", 10); len(other) != 2 {
		t.Errorf("for another feature: %+v", other)
	}
	// Held by a branch of the person's: nothing would be lost.
	mustRun(t, r.Runner, "branch", "mine", tip)
	if held, _ := r.ForeignCommits(ctx, tip, "zerg/auth/", "auth", 10); len(held) != 0 {
		t.Errorf("a commit another branch holds: %+v", held)
	}
	if none, _ := r.ForeignCommits(ctx, base, "zerg/auth/", "auth", 10); len(none) != 0 {
		t.Errorf("at the base: %+v", none)
	}
}
