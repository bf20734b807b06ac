package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/zergrush/zerg/internal/driver"
	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/fsx"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/pathx"
	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/security"
	"github.com/zergrush/zerg/internal/term"
	"github.com/zergrush/zerg/internal/textx"
)

func init() { register(newCleanupCmd) }

func newCleanupCmd(a *app) *cobra.Command {
	var o cleanupOpts
	cmd := &cobra.Command{
		Use:   "cleanup [FEATURE]",
		Short: "Remove the workspaces and branches zerg owns for a feature (never dirty ones)",
		Long: `Remove what zerg created for a feature and no longer needs: its clean
workspaces, and attempt branches already merged into the integration branch.
A workspace with uncommitted changes is never deleted (it is listed instead),
nor is a branch checked out in any worktree, and nothing outside zerg/FEATURE/
branches and zerg's workspace directory is touched. FEATURE may be left out
when the repository has a single run.

--all also removes the integration branch, every attempt branch (failed attempts'
preserved work included) and the run's log, so the feature can be run afresh.
It keeps the log and the integration branch, and exits 1, while a kept
workspace holds uncommitted work (the log is what zerg rush --resume saves it
from) or while the run delivered and its integration branch was never merged
into a branch of yours; --force removes them anyway (never a dirty workspace).`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: a.completeRuns,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.force && !o.all {
				return usageErrorf("--force only applies with --all")
			}
			feature := ""
			if len(args) == 1 {
				feature = args[0]
			}
			return runCleanup(cmd.Context(), a, feature, o)
		},
	}
	cmd.Flags().BoolVar(&o.all, "all", false, "also remove the integration branch, all attempt branches and the run log")
	cmd.Flags().BoolVar(&o.force, "force", false, "with --all, remove the run log and integration branch even if they hold unsaved or unmerged work")
	cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "list what would be removed and remove nothing")
	return cmd
}

type cleanupOpts struct {
	all, force, dryRun bool
}

func runCleanup(ctx context.Context, a *app, feature string, o cleanupOpts) error {
	t, err := a.resolveRun(ctx, feature)
	if err != nil {
		return err
	}
	if err := gitx.ValidateRef(run.BranchPrefix(t.feature) + "x"); err != nil {
		return usageErrorf("%q is not a feature name zerg could have used", t.feature)
	}
	if known, err := hasTraces(ctx, t); err != nil {
		return err
	} else if !known {
		runs := run.Runs(t.root)
		if len(runs) == 0 {
			return usageErrorf("nothing of %s to clean up: no spec, run log, workspace or branch of zerg's by that name (this repository has no run)", t.feature)
		}
		return usageErrorf("nothing of %s to clean up: no spec, run log, workspace or branch of zerg's by that name (its runs: %s)", t.feature, strings.Join(runs, ", "))
	}
	// Holding the log's lock proves no coordinator is running.
	var st *run.State
	var logErr error
	if _, statErr := os.Stat(t.paths.Events); statErr == nil {
		log, events, err := eventlog.Open(t.paths.Events)
		if errors.Is(err, eventlog.ErrLocked) {
			return &run.Error{Kind: run.Locked, Feature: t.feature, Path: t.paths.Events,
				Err: fmt.Errorf("the run of %s is in progress; cleanup needs a stopped run", t.feature)}
		}
		if err == nil {
			defer log.Close()
			st = run.Replay(events)
		}
		logErr = err
	}
	repo := &gitx.Repo{Runner: gitx.New(t.root)}
	verb := map[bool]string{true: "would remove", false: "removed"}[o.dryRun]
	var failures []string
	logPath := rel(t.root, t.paths.RunDir)

	// Workspaces: git's own list, restricted to zerg's directory for this
	// feature. A kept one keeps its branch: deleting the branch checked out
	// in it would leave it on an unborn branch ("No commits yet").
	worktrees, err := repo.Worktrees(ctx)
	if err != nil {
		return fmt.Errorf("list worktrees: %w", err)
	}
	inUse := map[string]string{} // branch → the worktree that keeps it
	var unsaved []string         // kept workspaces that may hold uncommitted work
	keptOther := 0
	removedAny := false
	for _, w := range worktrees {
		if w.Bare || !withinAny(w.Path, t.paths.Workspaces) {
			if w.Branch != "" {
				inUse[w.Branch] = w.Path
			}
			continue
		}
		why, work := cleanWorkspace(ctx, repo, t.paths.Merge, w, o.dryRun)
		if why == "" {
			removedAny = true
			fmt.Fprintf(a.stdout, "%s workspace %s\n", verb, w.Path)
			continue
		}
		fmt.Fprintf(a.stdout, "kept     %s (%s)\n", w.Path, why)
		if work {
			unsaved = append(unsaved, w.Path)
		} else {
			keptOther++
		}
		if w.Branch != "" {
			inUse[w.Branch] = w.Path
		}
	}
	if removedAny && !o.dryRun {
		_ = repo.PruneWorktrees(ctx)
	}
	// Sandbox mode's workspaces are private clones, not worktrees. One is
	// left only when its work could not be committed (zerg refused it, or
	// could not read it): zerg handed it back to you and wrote down why
	// beside it. It holds work nowhere else, so zerg deletes none of it.
	// Tasks mode's are private clones too, inside the repository.
	keptClones := 0
	registered := map[string]bool{}
	for _, w := range worktrees {
		registered[filepath.Clean(w.Path)] = true
	}
	for _, root := range []string{t.paths.Workspaces, run.TasksWorkspaces(t.root, t.feature)} {
		entries, err := os.ReadDir(root)
		if err != nil {
			continue
		}
		for _, e := range entries {
			p := filepath.Join(root, e.Name())
			if !e.IsDir() || strings.HasPrefix(e.Name(), "_") || registered[p] {
				if strings.HasSuffix(e.Name(), driver.KeptSuffix) && !o.dryRun {
					// A record of a workspace that is gone.
					if _, err := os.Stat(strings.TrimSuffix(p, driver.KeptSuffix)); errors.Is(err, os.ErrNotExist) {
						_ = os.Remove(p)
					}
				}
				continue
			}
			if fi, err := os.Lstat(filepath.Join(p, ".git")); err == nil && fi.IsDir() {
				keptClones++
				fmt.Fprintf(a.stdout, "kept     %s (%s)\n", p, keepClone(p, st, t.feature, o.dryRun))
			}
		}
	}
	if keptClones > 0 {
		failures = append(failures, fmt.Sprintf("%d private workspace(s) (sandbox, container or tasks mode) kept because they hold work zerg did not commit", keptClones))
	}
	if n := len(unsaved); n > 0 {
		failures = append(failures, fmt.Sprintf("%d workspace(s) kept because they hold uncommitted work", n))
	}
	if keptOther > 0 {
		failures = append(failures, fmt.Sprintf("%d workspace(s) could not be removed", keptOther))
	}
	// Workers' private state (settings, HOME, CLAUDE_CONFIG_DIR) is zerg's
	// scratch: the records of each attempt are in the run directory.
	if _, err := os.Stat(t.paths.State); err == nil {
		if !o.dryRun {
			if err := os.RemoveAll(t.paths.State); err != nil {
				return fmt.Errorf("remove worker state %s: %w", t.paths.State, err)
			}
		}
		fmt.Fprintf(a.stdout, "%s worker state %s\n", verb, t.paths.State)
	}
	if !o.dryRun {
		// The feature's workspace directory, then its repository's, once
		// nothing is left in them: os.Remove never removes a non-empty one.
		if os.Remove(t.paths.Workspaces) == nil {
			_ = os.Remove(filepath.Dir(t.paths.Workspaces))
		}
		_ = os.Remove(run.TasksWorkspaces(t.root, t.feature))
	}

	// What --all must not throw away: the log while a workspace may still
	// need it, a delivery nobody merged.
	integration := run.IntegrationBranch(t.feature)
	integrationHead, err := repo.RevParse(ctx, "refs/heads/"+integration)
	hasIntegration := err == nil
	var reasons []string
	if o.all {
		for _, ws := range unsaved {
			save := "commit or copy it"
			if st == nil || st.Finished == nil || !st.Finished.Delivered {
				save += fmt.Sprintf(" (zerg rush %s --resume saves it to its branch)", t.feature)
			}
			reasons = append(reasons, fmt.Sprintf("run log %s: workspace %s has uncommitted work; %s, then run cleanup again, or pass --force", logPath, ws, save))
		}
		if logErr != nil {
			reasons = append(reasons, fmt.Sprintf("run log %s and branch %s: the log cannot be read (%v), so whether the run delivered is unknown; pass --force to remove them anyway", logPath, integration, logErr))
		}
		if hasIntegration {
			// A commit someone added to the integration branch (a fix on
			// top of a run that did not deliver) is theirs: deleting the
			// branch would leave it dangling, delivered or not.
			foreign, err := repo.ForeignCommits(ctx, integrationHead, run.BranchPrefix(t.feature), t.feature, maxNamedCommits+1)
			if err != nil {
				return fmt.Errorf("read the commits of %s: %w", integration, err)
			}
			if len(foreign) > 0 {
				reasons = append(reasons, fmt.Sprintf("branch %s and run log %s: the branch holds %s that zerg did not make and no other branch holds; merge or cherry-pick it into a branch of yours, or pass --force",
					integration, logPath, namedCommits(foreign)))
			}
		}
		if st != nil && st.Finished != nil && st.Finished.Delivered && hasIntegration {
			merged, err := mergedOutsideZerg(ctx, repo, integrationHead)
			if err != nil {
				return err
			}
			if !merged {
				reasons = append(reasons, fmt.Sprintf("branch %s and run log %s: the run delivered and the result was never merged; zerg merge %s --into BRANCH, or pass --force", integration, logPath, t.feature))
			}
		}
	}
	blocked := len(reasons) > 0 && !o.force
	all := o.all && !blocked

	// Branches: only zerg/<feature>/…
	prefix := run.BranchPrefix(t.feature)
	branches, err := repo.Branches(ctx, prefix)
	if err != nil {
		return fmt.Errorf("list branches: %w", err)
	}
	merged := map[string]bool{}
	if hasIntegration {
		list, err := repo.BranchesMergedInto(ctx, integrationHead, prefix)
		if err != nil {
			return fmt.Errorf("list merged branches: %w", err)
		}
		for _, b := range list {
			merged[b] = true
		}
	}
	keptBranches, keptForeign := 0, 0
	for _, b := range branches {
		if !all && (b == integration || !merged[b]) {
			continue
		}
		if ws, ok := inUse[b]; ok {
			fmt.Fprintf(a.stdout, "kept     branch %s (checked out in %s)\n", b, ws)
			keptBranches++
			continue
		}
		if all && b != integration && !merged[b] && !o.force {
			// An attempt branch someone committed on is theirs too.
			tip, err := repo.RevParse(ctx, "refs/heads/"+b)
			if err != nil {
				return fmt.Errorf("read branch %s: %w", b, err)
			}
			foreign, err := repo.ForeignCommits(ctx, tip, prefix, t.feature, maxNamedCommits+1)
			if err != nil {
				return fmt.Errorf("read the commits of %s: %w", b, err)
			}
			if len(foreign) > 0 {
				fmt.Fprintf(a.stdout, "kept     branch %s (it holds %s that zerg did not make and no other branch holds; merge or cherry-pick it, or pass --force)\n", b, namedCommits(foreign))
				keptBranches++
				keptForeign++
				continue
			}
		}
		if !o.dryRun {
			if err := repo.DeleteBranch(ctx, b); err != nil {
				return fmt.Errorf("delete branch %s: %w", b, err)
			}
		}
		fmt.Fprintf(a.stdout, "%s branch %s\n", verb, b)
	}
	if n := keptBranches - keptForeign; n > 0 {
		failures = append(failures, fmt.Sprintf("%d branch(es) kept because a worktree has them checked out", n))
	}
	if keptForeign > 0 {
		failures = append(failures, fmt.Sprintf("%d branch(es) kept because they hold commits zerg did not make", keptForeign))
	}

	if blocked {
		for _, r := range reasons {
			fmt.Fprintf(a.stdout, "kept     %s\n", r)
		}
		failures = append(failures, fmt.Sprintf("the run log and %s were kept (see above)", integration))
	} else if all {
		if !o.dryRun {
			if err := os.RemoveAll(t.paths.RunDir); err != nil {
				return fmt.Errorf("remove run log %s: %w", logPath, err)
			}
		}
		fmt.Fprintf(a.stdout, "%s run log %s\n", verb, logPath)
		// Build caches zerg kept per repository in earlier versions (each
		// attempt now has its own, removed with it): zerg's alone, always
		// safe to remove.
		caches := filepath.Join(filepath.Dir(t.paths.Workspaces), ".caches")
		if fi, err := os.Stat(caches); err == nil && fi.IsDir() {
			size := dirSize(caches)
			if !o.dryRun {
				if err := os.RemoveAll(caches); err != nil {
					return fmt.Errorf("remove build caches %s: %w", caches, err)
				}
				_ = os.Remove(filepath.Dir(t.paths.Workspaces))
			}
			fmt.Fprintf(a.stdout, "%s build caches %s (%d MiB)\n", verb, caches, size>>20)
		}
	}
	if len(failures) > 0 {
		return failedf("%s", strings.Join(failures, "; "))
	}
	return nil
}

// maxNamedCommits bounds the commits a kept line names.
const maxNamedCommits = 3

// namedCommits names commits zerg did not make for a kept line: "1 commit
// (abc1234 "fix" by Ada)", the first maxNamedCommits of them.
func namedCommits(list []gitx.ForeignCommit) string {
	var names []string
	for i, c := range list {
		if i == maxNamedCommits {
			names = append(names, "…")
			break
		}
		names = append(names, fmt.Sprintf("%s %q by %s", shortID(c.Commit), truncate(textx.OneLine(term.Clean(c.Subject)), 60), term.Clean(c.Committer.Name)))
	}
	n := pluralf(len(list), "%d commit", "%d commits")
	if len(list) > maxNamedCommits {
		n = fmt.Sprintf("more than %d commits", maxNamedCommits)
	}
	return fmt.Sprintf("%s (%s)", n, strings.Join(names, ", "))
}

// hasTraces reports whether the feature is known to the repository: its
// specs, or anything zerg left of it (its run directory, its workspaces'
// directory, a branch of its). A feature with none is a typo, not a clean
// state; a cleaned one keeps its specs.
func hasTraces(ctx context.Context, t *runTarget) (bool, error) {
	for _, dir := range []string{t.paths.SpecDir, t.paths.RunDir, t.paths.Workspaces} {
		if _, err := os.Lstat(dir); err == nil {
			return true, nil
		}
	}
	branches, err := gitx.New(t.root).Branches(ctx, run.BranchPrefix(t.feature))
	if err != nil {
		return false, fmt.Errorf("list branches: %w", err)
	}
	return len(branches) > 0, nil
}

// cleanWorkspace removes one of the feature's workspaces (in a dry run, only
// decides) and returns why it was kept instead, "" when it goes; work says
// the kept workspace may hold uncommitted work.
func cleanWorkspace(ctx context.Context, repo *gitx.Repo, mergeWS string, w gitx.Worktree, dryRun bool) (why string, work bool) {
	if w.Prunable {
		// Its directory is gone: only git's record of it remains.
		if !dryRun {
			if err := repo.RemoveWorktree(ctx, w.Path); err != nil {
				return err.Error(), false
			}
		}
		return "", false
	}
	// Workspaces may belong to the worker user; trust exactly this one
	// (gitx checks that its .git entry is still zerg's).
	if err := repo.TrustWorkspace(w.Path); err != nil {
		return err.Error(), true
	}
	if samePath(w.Path, mergeWS) {
		// The merge workspace is zerg's scratch, a checkout of commits
		// already recorded; what gates left in it is no one's work, and the
		// next merge discards it too.
		if !dryRun {
			if err := repo.DiscardWorktree(ctx, w.Path); err != nil {
				return err.Error(), false
			}
		}
		return "", false
	}
	dirty, err := repo.In(w.Path).IsDirty(ctx)
	switch {
	case err != nil:
		return fmt.Sprintf("cannot check it for uncommitted work: %v", err), true
	case dirty:
		// A worker user owned it: the person's own git would refuse it
		// ("dubious ownership"). Its .git is still zerg's (the trusted
		// call above would have failed otherwise), so it can be theirs.
		whose := "it is yours and git works there"
		if dryRun {
			if !security.InvokerOwns(w.Path) {
				whose = wouldHandBack
			}
		} else if err := security.HandBackWorktree(w.Path); err != nil {
			whose = fmt.Sprintf("it could not be handed to you (%v), so your git may refuse it", err)
		}
		return "uncommitted changes; " + whose + ": commit or copy them, then run cleanup again", true
	case w.Locked:
		return "locked with git worktree lock: unlock it, then run cleanup again", false
	}
	if !dryRun {
		if err := repo.RemoveWorktree(ctx, w.Path); err != nil {
			return err.Error(), errors.Is(err, gitx.ErrDirty)
		}
	}
	return "", false
}

// mergedOutsideZerg reports whether commit is in the history of a branch
// that is not zerg's: the user merged the delivery somewhere.
func mergedOutsideZerg(ctx context.Context, repo *gitx.Repo, commit string) (bool, error) {
	list, err := repo.BranchesContaining(ctx, commit, "")
	if err != nil {
		return false, fmt.Errorf("find branches containing %s: %w", shortID(commit), err)
	}
	for _, b := range list {
		if !strings.HasPrefix(b, "zerg/") {
			return true, nil
		}
	}
	return false, nil
}

// withinAny reports whether p is inside dir, comparing real paths too: git
// lists worktrees by their resolved path.
func withinAny(p, dir string) bool {
	if pathx.Below(dir, p) {
		return true
	}
	real, err := filepath.EvalSymlinks(dir)
	return err == nil && pathx.Below(real, p)
}

// samePath reports whether p and q name the same existing file, symlinks
// resolved.
func samePath(p, q string) bool {
	if filepath.Clean(p) == filepath.Clean(q) {
		return true
	}
	rp, err1 := filepath.EvalSymlinks(p)
	rq, err2 := filepath.EvalSymlinks(q)
	return err1 == nil && err2 == nil && rp == rq
}

// keepClone is why zerg keeps a private workspace (sandbox, container or
// tasks mode) and whose it is. One zerg kept during the run was handed
// back then, with a record of why beside it. One without a record is an
// attempt a dead coordinator left (or one zerg could not hand back): it
// still belongs to the worker user that ran it, and git refuses it to
// anyone else ("dubious ownership"), so cleanup hands it back now, as
// the run would have (security.HandBack), and records that it did. A dry
// run only says it would.
func keepClone(ws string, st *run.State, feature string, dryRun bool) string {
	if k, ok := readKept(ws); ok {
		why := fmt.Sprintf("attempt %d of %s, not committed: %s", k.Attempt, k.Task, k.Reason)
		if k.Reason == "" {
			why = "a sandboxed attempt's workspace whose work zerg did not commit"
		}
		return why + "; it is yours and git works there: look at it, then delete it yourself"
	}
	k := driver.Kept{Reason: "its work was not committed", Time: time.Now().UTC()}
	why := "a private workspace whose work zerg did not commit"
	if task, n, ok := openAttemptAt(st, ws); ok {
		k.Task, k.Attempt = task, n
		k.Reason = "interrupted: its coordinator stopped before zerg committed its work"
		why = fmt.Sprintf("attempt %d of %s, %s; zerg rush %s --resume commits it", n, task, k.Reason, feature)
	}
	if dryRun {
		return why + "; " + wouldHandBack
	}
	if err := security.HandBack(ws); err != nil {
		return fmt.Sprintf("%s; it still belongs to the worker user and could not be handed to you (%v), so your git refuses it: delete it as root, or run cleanup as root", why, err)
	}
	if b, err := json.Marshal(k); err == nil {
		_ = fsx.WritePrivate(ws+driver.KeptSuffix, b)
	}
	return why + "; " + handedBack
}

// What cleanup says of a kept workspace that a worker user owned: a dry
// run says it would hand it back, the real one that it did.
const (
	wouldHandBack = "cleanup would hand it to you"
	handedBack    = "handed to you now: it is yours and git works there (the worker's .git/config and hooks are set aside as .git/config.worker and .git/hooks.worker)"
)

// readKept reads the record zerg wrote beside a workspace it handed back.
func readKept(ws string) (driver.Kept, bool) {
	var k driver.Kept
	data, err := os.ReadFile(ws + driver.KeptSuffix)
	if err != nil || json.Unmarshal(data, &k) != nil {
		return driver.Kept{}, false
	}
	return k, true
}

// openAttemptAt names the attempt the log leaves open in workspace ws.
func openAttemptAt(st *run.State, ws string) (task string, n int, ok bool) {
	if st == nil {
		return "", 0, false
	}
	for id, o := range st.OpenAttempts() {
		if samePath(o.Workspace, ws) {
			return id, o.Number, true
		}
	}
	return "", 0, false
}

// dirSize is the bytes the files under dir take.
func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
