package delivery

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/runstate"
)

type mergeBase struct {
	base string
	err  error
}

func (m mergeBase) MergeBase(context.Context, string, string) (string, error) { return m.base, m.err }

// TestReviewBaseWithoutARun: no recorded run, the merge base with HEAD; no
// merge base is bad input naming the branch.
func TestReviewBaseWithoutARun(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	if b, err := ReviewBase(ctx, mergeBase{base: "abc123\n"}, root, "auth", "head"); err != nil || b != "abc123" {
		t.Fatalf("merge base: %q %v", b, err)
	}
	for _, g := range []mergeBase{{base: " \n"}, {err: errors.New("exit status 1")}} {
		_, err := ReviewBase(ctx, g, root, "auth", "head")
		want := "no base for zerg/auth/integration: no recorded run and no common ancestor with HEAD"
		if err == nil || err.Error() != want || !errors.Is(err, run.BadInput) {
			t.Errorf("%+v: %v, want bad input %q", g, err, want)
		}
	}
}

// TestReviewBaseOfARecordedRun: the run's base wins over the merge base.
func TestReviewBaseOfARecordedRun(t *testing.T) {
	t.Setenv("ZERG_WORKSPACES", filepath.Join(t.TempDir(), "ws"))
	ctx := context.Background()
	root := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", root).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	p, err := run.PathsFor(ctx, root, "auth")
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(p.RunDir, 0o755)
	l, _, err := eventlog.Open(p.Events)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.AppendData(runstate.EvRunStarted, "", 0, runstate.RunStarted{Feature: "auth", Base: "recorded"}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if b, err := ReviewBase(ctx, mergeBase{base: "merge-base"}, root, "auth", "head"); err != nil || b != "recorded" {
		t.Fatalf("recorded run: %q %v", b, err)
	}
}
