package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/zergrush/zerg/internal/cleanup"
	"github.com/zergrush/zerg/internal/driver"
	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/runstate"
)

// attemptWorkspace adds a workspace for task's first attempt under the
// run's workspace directory, on its attempt branch at the integration head
// (so the branch counts as merged into the integration branch).
func (f *fakeRun) attemptWorkspace(t *testing.T, task string) (ws, branch string) {
	t.Helper()
	ws = filepath.Join(f.paths.Workspaces, task+"-1")
	branch = run.AttemptBranch(f.feature, task, 1)
	if err := f.repo.AddWorktree(context.Background(), ws, branch, f.head); err != nil {
		t.Fatal(err)
	}
	return ws, branch
}

// cleanupTwice runs cleanup with args as a dry run, then for real, and
// checks the dry run announced exactly what the real run did, kept lines
// included. It returns the real run's exit code and output.
func cleanupTwice(t *testing.T, args ...string) (int, string) {
	t.Helper()
	dryCode, dry, _ := runZerg(t, append(append([]string{"cleanup"}, args...), "--dry-run")...)
	code, out, errs := runZerg(t, append([]string{"cleanup"}, args...)...)
	// A workspace a worker user owned is handed back by the real run only.
	want := strings.NewReplacer("would remove", "removed", "; "+cleanup.WouldHandBack+")", "; "+cleanup.HandedBack+")",
		cleanup.WouldHandBack+":", "it is yours and git works there:").Replace(dry)
	if out != want || code != dryCode {
		t.Fatalf("cleanup %v: the dry run (exit %d) said\n%s\nthe real run (exit %d) did\n%s%s", args, dryCode, dry, code, out, errs)
	}
	return code, out
}

// TestCleanupKeepsCheckedOutBranches: a dirty workspace is kept with the
// branch checked out in it, and still works afterwards; so is any branch
// checked out in another worktree. Clean workspaces and their merged
// branches go.
func TestCleanupKeepsCheckedOutBranches(t *testing.T) {
	f := newFakeRun(t, "auth", false)
	ctx := context.Background()
	dirtyWS, dirtyBranch := f.attemptWorkspace(t, "T1")
	writeFile(t, filepath.Join(dirtyWS, "work.txt"), []byte("precious\n"))
	cleanWS, cleanBranch := f.attemptWorkspace(t, "T2")
	// The user's own worktree, outside zerg's directory, on an attempt branch.
	userWS := filepath.Join(t.TempDir(), "mine")
	userBranch := run.AttemptBranch("auth", "T3", 1)
	if err := f.repo.AddWorktree(ctx, userWS, userBranch, f.head); err != nil {
		t.Fatal(err)
	}

	code, out := cleanupTwice(t) // no feature: the only run
	if code != ExitFailed {
		t.Fatalf("exit %d, want %d:\n%s", code, ExitFailed, out)
	}
	for _, want := range []string{
		"kept     " + dirtyWS + " (uncommitted changes",
		"kept     branch " + dirtyBranch + " (checked out in " + dirtyWS + ")",
		"kept     branch " + userBranch + " (checked out in " + userWS + ")",
		"removed workspace " + cleanWS,
		"removed branch " + cleanBranch,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, b := range []string{dirtyBranch, userBranch, run.IntegrationBranch("auth")} {
		if f.branchAt(t, b) == "" {
			t.Errorf("branch %s deleted", b)
		}
	}
	if f.branchAt(t, cleanBranch) != "" || exists(cleanWS) {
		t.Error("the clean workspace or its merged branch is still there")
	}
	// The kept workspace still works: on its branch, with its work.
	w := f.repo.In(dirtyWS)
	status := gitRun(t, w, "status")
	if !strings.Contains(status, "On branch "+dirtyBranch) || strings.Contains(status, "No commits yet") || !strings.Contains(status, "work.txt") {
		t.Fatalf("git status in the kept workspace:\n%s", status)
	}
	if b, err := os.ReadFile(filepath.Join(dirtyWS, "work.txt")); err != nil || string(b) != "precious\n" {
		t.Fatalf("dirty work: %q %v", b, err)
	}
	if !exists(userWS) || !exists(f.paths.RunDir) {
		t.Fatal("the user's worktree or the run log was removed")
	}
}

// TestCleanupAllKeepsLogForUnsavedWork: --all keeps the run log (and the
// integration branch) while a kept workspace holds uncommitted work;
// --force removes them, never the workspace.
func TestCleanupAllKeepsLogForUnsavedWork(t *testing.T) {
	f := newFakeRun(t, "auth", false)
	dirtyWS, dirtyBranch := f.attemptWorkspace(t, "T1")
	writeFile(t, filepath.Join(dirtyWS, "work.txt"), []byte("precious\n"))
	integration := run.IntegrationBranch("auth")

	code, out := cleanupTwice(t, "auth", "--all")
	if code != ExitFailed {
		t.Fatalf("exit %d, want %d:\n%s", code, ExitFailed, out)
	}
	want := "kept     run log .zerg/runs/auth: workspace " + dirtyWS + " has uncommitted work"
	if !strings.Contains(out, want) || !strings.Contains(out, "--resume") || !strings.Contains(out, "--force") {
		t.Fatalf("output lacks %q with what to do:\n%s", want, out)
	}
	if !exists(f.paths.Events) || f.branchAt(t, integration) == "" || f.branchAt(t, dirtyBranch) == "" {
		t.Fatal("--all removed the log, the integration branch or the dirty workspace's branch")
	}

	code, out, _ = runZerg(t, "cleanup", "auth", "--all", "--force")
	if code != ExitFailed { // the dirty workspace is still kept
		t.Fatalf("--force: exit %d:\n%s", code, out)
	}
	if exists(f.paths.RunDir) || f.branchAt(t, integration) != "" {
		t.Fatalf("--force kept the log or the integration branch:\n%s", out)
	}
	if f.branchAt(t, dirtyBranch) == "" || !exists(filepath.Join(dirtyWS, "work.txt")) {
		t.Fatal("--force removed the dirty workspace or its branch")
	}
}

// TestCleanupAllUnmergedDelivery: a delivery nobody merged keeps the log and
// the integration branch under --all; merged into main, or with --force,
// they go.
func TestCleanupAllUnmergedDelivery(t *testing.T) {
	integration := run.IntegrationBranch("auth")
	t.Run("kept until merged", func(t *testing.T) {
		f := newFakeRun(t, "auth", true)
		// A zerg branch containing the head does not count as merged.
		f.attemptWorkspace(t, "T1")
		code, out := cleanupTwice(t, "auth", "--all")
		if code != ExitFailed {
			t.Fatalf("exit %d, want %d:\n%s", code, ExitFailed, out)
		}
		want := "kept     branch " + integration + " and run log .zerg/runs/auth: the run delivered and the result was never merged; zerg merge auth --into BRANCH, or pass --force"
		if !strings.Contains(out, want) {
			t.Fatalf("output lacks %q:\n%s", want, out)
		}
		if !exists(f.paths.Events) || f.branchAt(t, integration) != f.head {
			t.Fatal("the unmerged delivery was removed")
		}
		if code, _, errs := runZerg(t, "merge", "--into", "main"); code != ExitOK {
			t.Fatalf("merge: %d %q", code, errs)
		}
		code, out = cleanupTwice(t, "auth", "--all")
		if code != ExitOK || !strings.Contains(out, "removed run log .zerg/runs/auth") {
			t.Fatalf("after the merge: exit %d:\n%s", code, out)
		}
		if exists(f.paths.RunDir) || f.branchAt(t, integration) != "" {
			t.Fatal("the merged delivery's log or branch is still there")
		}
		if f.branchAt(t, "main") != f.head {
			t.Fatal("main changed")
		}
	})
	t.Run("force", func(t *testing.T) {
		f := newFakeRun(t, "auth", true)
		code, out, errs := runZerg(t, "cleanup", "--all", "--force")
		if code != ExitOK || !strings.Contains(out, "removed branch "+integration) || !strings.Contains(out, "removed run log") {
			t.Fatalf("exit %d:\n%s%s", code, out, errs)
		}
		if exists(f.paths.RunDir) || f.branchAt(t, integration) != "" {
			t.Fatal("--force kept the log or the integration branch")
		}
	})
}

func TestCleanupRefusals(t *testing.T) {
	f := newFakeRun(t, "auth", false)
	if code, _, errs := runZerg(t, "cleanup", "--force"); code != ExitUsage {
		t.Fatalf("--force without --all: exit %d %q", code, errs)
	}
	// A coordinator holds the log's lock: nothing is touched.
	log, _, err := eventlog.Open(f.paths.Events)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	code, _, errs := runZerg(t, "cleanup", "--all", "--force")
	if code != ExitLocked || !strings.Contains(errs, "in progress") {
		t.Fatalf("locked log: exit %d %q", code, errs)
	}
	if !exists(f.paths.Events) || f.branchAt(t, run.IntegrationBranch("auth")) == "" {
		t.Fatal("cleanup touched a running run")
	}
}

// A feature the repository knows nothing of is a typo: cleanup says so
// (exit 2) instead of reporting a clean state; a feature whose run was
// cleaned up keeps its specs and cleans up to nothing, quietly.
func TestCleanupUnknownFeature(t *testing.T) {
	f := newFakeRun(t, "auth", false)
	code, _, errs := runZerg(t, "cleanup", "nope")
	if code != ExitUsage || !strings.Contains(errs, "nothing of nope to clean up") || !strings.Contains(errs, "auth") {
		t.Fatalf("cleanup nope: exit %d %q", code, errs)
	}
	if err := os.MkdirAll(f.paths.SpecDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runZerg(t, "cleanup", "auth", "--all", "--force"); code != 0 {
		t.Fatalf("cleanup auth --all --force: exit %d %q", code, errs)
	}
	if code, _, errs := runZerg(t, "cleanup", "auth"); code != 0 {
		t.Fatalf("cleanup of a cleaned feature: exit %d %q", code, errs)
	}
}

// TestCleanupMergeWorkspaceAndSymlinkedRoot: the merge workspace is zerg's
// scratch and goes even with files left in it; workspaces are found when
// ZERG_WORKSPACES is a symlink (git lists worktrees by their real path).
func TestCleanupMergeWorkspaceAndSymlinkedRoot(t *testing.T) {
	f := newFakeRun(t, "auth", false)
	ctx := context.Background()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(t.TempDir(), link); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ZERG_WORKSPACES", link)
	var err error
	if f.paths, err = run.PathsFor(ctx, f.root, "auth"); err != nil {
		t.Fatal(err)
	}
	if err := f.repo.AddDetachedWorktree(ctx, f.paths.Merge, f.head); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(f.paths.Merge, "build.out"), []byte("gate output\n"))
	ws, branch := f.attemptWorkspace(t, "T1")

	code, out := cleanupTwice(t, "auth", "--all")
	if code != ExitOK {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if exists(f.paths.Merge) || exists(ws) || f.branchAt(t, branch) != "" || exists(f.paths.RunDir) {
		t.Fatalf("left behind:\n%s", out)
	}
	if list, _ := f.repo.Worktrees(ctx); len(list) != 1 {
		t.Fatalf("worktrees left: %+v", list)
	}
}

// A sandboxed attempt's private clone that zerg refused to commit is listed
// and kept, never deleted, even with --all --force.
func TestCleanupKeepsRefusedSandboxWorkspaces(t *testing.T) {
	f := newFakeRun(t, "auth", false)
	ws := filepath.Join(f.paths.Workspaces, "T9-1")
	if err := os.MkdirAll(filepath.Join(ws, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(ws, "secret.txt"), []byte("refused\n"))
	// The record the driver writes beside a workspace it kept and handed
	// back (driver.sandboxed.Keep).
	writeFile(t, ws+driver.KeptSuffix, []byte(`{"task":"T9","attempt":1,"reason":"zerg refused to commit it: secret.txt (secret)"}`))
	code, out := cleanupTwice(t, "--all", "--force")
	if !strings.Contains(out, "kept     "+ws+" (attempt 1 of T9, not committed: zerg refused to commit it: secret.txt (secret); it is yours and git works there") {
		t.Errorf("exit %d, the refused workspace is not listed:\n%s", code, out)
	}
	if !exists(filepath.Join(ws, "secret.txt")) {
		t.Error("cleanup deleted a refused sandbox workspace")
	}
}

// TestCleanupHandsBackAnInterruptedAttemptsClone: the private clone of an
// attempt whose coordinator died still belongs to the worker user that ran
// it, and the person's git refuses it ("dubious ownership"). Cleanup hands
// it back as the run would have (theirs, the worker's .git/config set
// aside) before it says it is theirs, and says which attempt it is and
// that --resume commits it. The dry run changes nothing.
func TestCleanupHandsBackAnInterruptedAttemptsClone(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give the workspace to another user, as a worker user holds it")
	}
	f := newFakeRun(t, "auth", false)
	ws := filepath.Join(f.paths.Workspaces, "T1-1")
	if err := os.MkdirAll(filepath.Join(ws, ".git", "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(ws, ".git", "config"), []byte("[core]\n\tfsmonitor = /tmp/planted\n"))
	writeFile(t, filepath.Join(ws, "work.txt"), []byte("half done\n"))
	log, _, err := eventlog.Open(f.paths.Events)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := log.AppendData(runstate.EvLevelStarted, "", 0, runstate.LevelStarted{Level: 1, Base: f.base, Tasks: []string{"T1"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := log.AppendData(runstate.EvAttemptStarted, "T1", 1, runstate.AttemptStarted{Level: 1, Base: f.base, Workspace: ws}); err != nil {
		t.Fatal(err)
	}
	log.Close()
	const worker = 65534 // nobody: the worker user the attempt ran as
	if err := filepath.WalkDir(ws, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, worker, worker)
	}); err != nil {
		t.Fatal(err)
	}
	ownerOf := func(p string) int {
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		return int(fi.Sys().(*syscall.Stat_t).Uid)
	}

	_, dry, _ := runZerg(t, "cleanup", "--dry-run")
	if !strings.Contains(dry, "kept     "+ws+" (attempt 1 of T1, interrupted") || !strings.Contains(dry, cleanup.WouldHandBack) {
		t.Errorf("dry run:\n%s", dry)
	}
	if ownerOf(ws) != worker || exists(ws+driver.KeptSuffix) {
		t.Fatal("the dry run handed the workspace back")
	}
	code, out := cleanupTwice(t)
	if code != ExitFailed || !strings.Contains(out, "kept     "+ws+" (attempt 1 of T1, interrupted: its coordinator stopped before zerg committed its work; zerg rush auth --resume commits it; "+cleanup.HandedBack+")") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, p := range []string{ws, filepath.Join(ws, "work.txt"), filepath.Join(ws, ".git")} {
		if ownerOf(p) != os.Getuid() {
			t.Errorf("%s still belongs to uid %d after cleanup said it is yours", p, ownerOf(p))
		}
	}
	if cfg, _ := os.ReadFile(filepath.Join(ws, ".git", "config")); strings.Contains(string(cfg), "fsmonitor") {
		t.Error("the worker's .git/config was not set aside: the person's git would run its fsmonitor")
	}
	if !exists(filepath.Join(ws, ".git", "config.worker")) || !exists(filepath.Join(ws, "work.txt")) {
		t.Error("the worker's config or work is gone")
	}
	// Once handed back, a second cleanup keeps it as it is, and says why
	// from the record it wrote.
	if _, again, _ := runZerg(t, "cleanup"); !strings.Contains(again, "kept     "+ws+" (attempt 1 of T1, not committed: interrupted") || !exists(filepath.Join(ws, ".git", "config.worker")) {
		t.Errorf("second cleanup:\n%s", again)
	}
}

// TestCleanupKeepsCommitsZergDidNotMake: a commit a person added to the
// integration branch of a run that did not deliver, or to an attempt
// branch, is theirs: cleanup --all keeps the branch (and the log, without
// which the kept integration branch would block the next rush) and says
// why, naming the commit; --force removes it. The control: once another
// branch holds the commit, nothing would be lost and --all removes it.
func TestCleanupKeepsCommitsZergDidNotMake(t *testing.T) {
	f := newFakeRun(t, "auth", false)
	ctx := context.Background()
	ada := gitx.Identity{Name: "Ada", Email: "ada@example.org"}
	mine := f.repo.WithCommits(gitx.CommitPolicy{Author: ada, Committer: ada})
	commitAs := func(r *gitx.Runner, branch, file string) string {
		ws := filepath.Join(t.TempDir(), "scratch")
		gitRun(t, f.repo.Runner, "worktree", "add", "--quiet", ws, branch)
		writeFile(t, filepath.Join(ws, file), []byte("mine\n"))
		w := r.In(ws)
		gitRun(t, w, "add", "--all")
		c, err := w.Commit(ctx, "my fix of "+file, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.repo.RemoveWorktree(ctx, ws); err != nil {
			t.Fatal(err)
		}
		return c
	}
	integration := run.IntegrationBranch("auth")
	fix := commitAs(mine, integration, "fix.txt")
	attempt := run.AttemptBranch("auth", "T1", 1)
	gitRun(t, f.repo.Runner, "branch", attempt, f.base)
	onAttempt := commitAs(mine, attempt, "attempt.txt")

	code, out := cleanupTwice(t, "--all")
	if code != ExitFailed {
		t.Fatalf("exit %d, want %d:\n%s", code, ExitFailed, out)
	}
	if want := "kept     branch " + integration + " and run log .zerg/runs/auth: the branch holds 1 commit (" + fix[:10] + ` "my fix of fix.txt" by Ada) that zerg did not make`; !strings.Contains(out, want) {
		t.Errorf("cleanup --all lacks %q:\n%s", want, out)
	}
	if f.branchAt(t, integration) != fix || f.branchAt(t, attempt) != onAttempt || !exists(f.paths.Events) {
		t.Fatalf("cleanup --all removed what holds a person's commit:\n%s", out)
	}

	// The control: held by a branch of the person's, nothing is lost.
	gitRun(t, f.repo.Runner, "branch", "mine", fix)
	code, out = runZergOut(t, "cleanup", "auth", "--all")
	if !strings.Contains(out, "removed branch "+integration) || strings.Contains(out, "kept     branch "+integration) {
		t.Errorf("exit %d: with the commit on another branch, the integration branch should go:\n%s", code, out)
	}
	if want := "kept     branch " + attempt + " (it holds 1 commit (" + onAttempt[:10] + ` "my fix of attempt.txt" by Ada) that zerg did not make`; code != ExitFailed || !strings.Contains(out, want) || f.branchAt(t, attempt) != onAttempt {
		t.Errorf("exit %d: the attempt branch holding a commit of the person's is not kept as %q:\n%s", code, want, out)
	}
	if code, out := runZergOut(t, "cleanup", "auth", "--all", "--force"); code != ExitOK || f.branchAt(t, attempt) != "" {
		t.Errorf("--force: exit %d\n%s", code, out)
	}
}

func runZergOut(t *testing.T, args ...string) (int, string) {
	t.Helper()
	code, out, errs := runZerg(t, args...)
	return code, out + errs
}
