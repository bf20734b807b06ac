package rush

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/run"
)

// TestRedTeamCleanupKeepsWhatZergDidNotMake: the red team's "cleanup
// deletes a user's commit". A run that did not deliver (L1-names never
// passes), then a commit of the person's on its integration branch (a fix
// on top of the run's work), then zerg cleanup --all without --force: the
// branch and the run log are kept, exit 1, and the line names the commit
// and says why. The control, on the same repository: once a branch of the
// person's holds the commit, nothing would be lost, and cleanup --all
// removes the integration branch.
func TestRedTeamCleanupKeepsWhatZergDidNotMake(t *testing.T) {
	t.Parallel()
	p := newProject(t, func(dir string) {
		editFile(t, scenarioPath(dir), func(s string) string {
			return strings.Replace(s, `content: "Ada\nGrace\nLinus\n"`, `content: ""`, 1)
		})
		editFile(t, filepath.Join(dir, ".zerg", "config.yaml"), func(s string) string {
			return strings.Replace(s, "task_retries: 2", "task_retries: 0", 1)
		})
	})
	if r := p.zerg("rush", "demo", "--rehearse"); r.code != 1 || !strings.Contains(r.stdout, "demo: NOT DELIVERED") {
		t.Fatalf("rush: exit %d, want a run that did not deliver\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	integration := run.IntegrationBranch("demo")
	// The person's fix, committed on the integration branch in a worktree
	// of their own (as `git switch` there would).
	mine := filepath.Join(t.TempDir(), "mine")
	p.git("worktree", "add", "-q", mine, integration)
	if err := os.WriteFile(filepath.Join(mine, "FIX.md"), []byte("my fix\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", mine, "-c", "user.name=Ada", "-c", "user.email=ada@example.org"}, args...)...)
		cmd.Env = append(p.env(), "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("add", "FIX.md")
	git("commit", "-q", "-m", "my fix on the integration branch")
	fix := git("rev-parse", "HEAD")
	git("switch", "-q", "--detach")

	c := p.zerg("cleanup", "demo", "--all")
	want := "kept     branch " + integration + " and run log .zerg/runs/demo: the branch holds 1 commit (" + fix[:10] + ` "my fix on the integration branch" by Ada) that zerg did not make`
	if c.code != 1 || !strings.Contains(c.stdout, want) {
		t.Errorf("cleanup --all: exit %d, want 1 and %q\n%s%s", c.code, want, c.stdout, c.stderr)
	}
	if got := p.git("rev-parse", "--verify", "-q", "refs/heads/"+integration); got != fix {
		t.Fatalf("the integration branch is at %q, not the person's commit %s: cleanup --all lost it", got, fix)
	}
	if _, err := os.Stat(filepath.Join(p.dir, ".zerg", "runs", "demo", "events.jsonl")); err != nil {
		t.Errorf("the run log went with the branch kept: %v", err)
	}

	// The control: the commit is on a branch of the person's now.
	p.git("branch", "my-fix", fix)
	c = p.zerg("cleanup", "demo", "--all")
	if c.code != 0 || !strings.Contains(c.stdout, "removed branch "+integration) {
		t.Errorf("control: cleanup --all: exit %d, want the integration branch removed\n%s%s", c.code, c.stdout, c.stderr)
	}
	if got := p.git("rev-parse", "my-fix"); got != fix {
		t.Errorf("the person's branch moved: %s", got)
	}
}
