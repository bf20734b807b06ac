// Package cleanup decides what zerg cleanup may delete of a feature's run
// and deletes it: the feature's workspaces (git worktrees, and the private
// clones of sandbox, container and tasks mode), the workers' scratch
// state, zerg's branches of the feature and, with All, the run's log. What
// holds work nowhere else (a dirty workspace, a clone zerg did not commit,
// a commit zerg did not make, a delivery nobody merged) is kept and said
// why. Git goes through the Git port (gitx in use), ownership through the
// Owner port (security in use), so that the decisions are tested with
// fakes; the command parses its flags and prints the Report.
package cleanup

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

	"github.com/zergrush/zerg/internal/driver"
	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/fsx"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/pathx"
	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/runstate"
)

// Git is what cleanup reads and changes of the repository.
type Git interface {
	Worktrees(ctx context.Context) ([]gitx.Worktree, error)
	PruneWorktrees(ctx context.Context) error
	RemoveWorktree(ctx context.Context, path string) error
	DiscardWorktree(ctx context.Context, path string) error
	// TrustWorkspace trusts exactly the workspace at path for zerg's git
	// (gitx checks that its .git entry is still zerg's).
	TrustWorkspace(path string) error
	// IsDirty reports whether the worktree at path has uncommitted work.
	IsDirty(ctx context.Context, path string) (bool, error)
	RevParse(ctx context.Context, rev string) (string, error)
	ForeignCommits(ctx context.Context, tip, prefix, feature string, limit int) ([]gitx.ForeignCommit, error)
	Branches(ctx context.Context, prefix string) ([]string, error)
	BranchesMergedInto(ctx context.Context, rev, prefix string) ([]string, error)
	BranchesContaining(ctx context.Context, commit, prefix string) ([]string, error)
	DeleteBranch(ctx context.Context, branch string) error
}

// Repo is Git on a repository through gitx.
type Repo struct{ *gitx.Repo }

// IsDirty reports whether the worktree at path has uncommitted work.
func (r Repo) IsDirty(ctx context.Context, path string) (bool, error) {
	return r.In(path).IsDirty(ctx)
}

// Owner hands a workspace a worker user owned to the person running zerg.
type Owner interface {
	// HandBack hands a private clone back (security.HandBack).
	HandBack(ws string) error
	// HandBackWorktree hands a worktree's .git entry back.
	HandBackWorktree(ws string) error
	// InvokerOwns reports whether the person running zerg owns p.
	InvokerOwns(p string) bool
}

// Target is the run cleanup works on.
type Target struct {
	Feature string
	Paths   run.Paths
	// LogPath is the run directory as the report names it.
	LogPath string
	// State is the run's log replayed, nil when there is no log or it
	// could not be read (LogErr).
	State  *runstate.State
	LogErr error
}

// Options are zerg cleanup's flags.
type Options struct {
	All, Force, DryRun bool
	// NameCommits names commits zerg did not make in a kept line.
	NameCommits func([]gitx.ForeignCommit) string
}

// MaxNamedCommits bounds the commits a kept line names: ForeignCommits
// reads one more, to know there are more.
const MaxNamedCommits = 3

// Report is what cleanup did (or, in a dry run, would do): one line each
// for what it removed and what it kept, in order, and the failures that
// make the command exit 1 (kept things that should have gone).
type Report struct {
	Lines    []string
	Failures []string
}

func (r *Report) linef(format string, a ...any) { r.Lines = append(r.Lines, fmt.Sprintf(format, a...)) }

// What cleanup says of a kept workspace that a worker user owned: a dry
// run says it would hand it back, the real one that it did.
const (
	WouldHandBack = "cleanup would hand it to you"
	HandedBack    = "handed to you now: it is yours and git works there (the worker's .git/config and hooks are set aside as .git/config.worker and .git/hooks.worker)"
)

// Known reports whether the feature is known to the repository: its
// specs, or anything zerg left of it (its run directory, its workspaces'
// directory, a branch of its). A feature with none is a typo, not a clean
// state; a cleaned one keeps its specs.
func Known(ctx context.Context, g Git, p run.Paths) (bool, error) {
	for _, dir := range []string{p.SpecDir, p.RunDir, p.Workspaces} {
		if _, err := os.Lstat(dir); err == nil {
			return true, nil
		}
	}
	branches, err := g.Branches(ctx, run.BranchPrefix(p.Feature))
	if err != nil {
		return false, fmt.Errorf("list branches: %w", err)
	}
	return len(branches) > 0, nil
}

// OpenLog takes the run's log, whose lock proves no coordinator is
// running: a run in progress is a run.Locked error. st is the log
// replayed, nil with logErr when it could not be read, and nil with no
// error when there is no log; release releases the lock.
func OpenLog(p run.Paths) (st *runstate.State, logErr error, release func(), err error) {
	release = func() {}
	if _, statErr := os.Stat(p.Events); statErr != nil {
		return nil, nil, release, nil
	}
	log, events, err := eventlog.Open(p.Events)
	if errors.Is(err, eventlog.ErrLocked) {
		return nil, nil, release, &run.Error{Kind: run.Locked, Feature: p.Feature, Path: p.Events,
			Err: fmt.Errorf("the run of %s is in progress; cleanup needs a stopped run", p.Feature)}
	}
	if err != nil {
		return nil, err, release, nil
	}
	return runstate.Replay(events), nil, func() { _ = log.Close() }, nil // opened to read
}

// Run removes what cleanup may remove of t's run (in a dry run, only
// decides) and reports it. An error stops it where it is; the report then
// holds what it did before.
func Run(ctx context.Context, g Git, own Owner, t Target, o Options) (*Report, error) {
	r := &Report{}
	err := clean(ctx, g, own, t, o, r)
	return r, err
}

func clean(ctx context.Context, g Git, own Owner, t Target, o Options, r *Report) error {
	st := t.State
	verb := map[bool]string{true: "would remove", false: "removed"}[o.DryRun]
	logPath := t.LogPath
	paths := t.Paths

	// Workspaces: git's own list, restricted to zerg's directory for this
	// feature. A kept one keeps its branch: deleting the branch checked out
	// in it would leave it on an unborn branch ("No commits yet").
	worktrees, err := g.Worktrees(ctx)
	if err != nil {
		return fmt.Errorf("list worktrees: %w", err)
	}
	inUse := map[string]string{} // branch → the worktree that keeps it
	var unsaved []string         // kept workspaces that may hold uncommitted work
	keptOther := 0
	removedAny := false
	for _, w := range worktrees {
		if w.Bare || !withinAny(w.Path, paths.Workspaces) {
			if w.Branch != "" {
				inUse[w.Branch] = w.Path
			}
			continue
		}
		why, work := cleanWorkspace(ctx, g, own, paths.Merge, w, o.DryRun)
		if why == "" {
			removedAny = true
			r.linef("%s workspace %s", verb, w.Path)
			continue
		}
		r.linef("kept     %s (%s)", w.Path, why)
		if work {
			unsaved = append(unsaved, w.Path)
		} else {
			keptOther++
		}
		if w.Branch != "" {
			inUse[w.Branch] = w.Path
		}
	}
	if removedAny && !o.DryRun {
		_ = g.PruneWorktrees(ctx)
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
	for _, root := range []string{paths.Workspaces, run.TasksWorkspaces(paths.Root, t.Feature)} {
		entries, err := os.ReadDir(root)
		if err != nil {
			continue
		}
		for _, e := range entries {
			p := filepath.Join(root, e.Name())
			if !e.IsDir() || strings.HasPrefix(e.Name(), "_") || registered[p] {
				if strings.HasSuffix(e.Name(), driver.KeptSuffix) && !o.DryRun {
					// A record of a workspace that is gone.
					if _, err := os.Stat(strings.TrimSuffix(p, driver.KeptSuffix)); errors.Is(err, os.ErrNotExist) {
						_ = os.Remove(p)
					}
				}
				continue
			}
			if fi, err := os.Lstat(filepath.Join(p, ".git")); err == nil && fi.IsDir() {
				keptClones++
				r.linef("kept     %s (%s)", p, keepClone(own, p, st, t.Feature, o.DryRun))
			}
		}
	}
	if keptClones > 0 {
		r.Failures = append(r.Failures, fmt.Sprintf("%d private workspace(s) (sandbox, container or tasks mode) kept because they hold work zerg did not commit", keptClones))
	}
	if n := len(unsaved); n > 0 {
		r.Failures = append(r.Failures, fmt.Sprintf("%d workspace(s) kept because they hold uncommitted work", n))
	}
	if keptOther > 0 {
		r.Failures = append(r.Failures, fmt.Sprintf("%d workspace(s) could not be removed", keptOther))
	}
	// Workers' private state (settings, HOME, CLAUDE_CONFIG_DIR) is zerg's
	// scratch: the records of each attempt are in the run directory.
	if _, err := os.Stat(paths.State); err == nil {
		if !o.DryRun {
			if err := os.RemoveAll(paths.State); err != nil {
				return fmt.Errorf("remove worker state %s: %w", paths.State, err)
			}
		}
		r.linef("%s worker state %s", verb, paths.State)
	}
	if !o.DryRun {
		// The feature's workspace directory, then its repository's, once
		// nothing is left in them: os.Remove never removes a non-empty one.
		if os.Remove(paths.Workspaces) == nil {
			_ = os.Remove(filepath.Dir(paths.Workspaces))
		}
		_ = os.Remove(run.TasksWorkspaces(paths.Root, t.Feature))
	}

	// What --all must not throw away: the log while a workspace may still
	// need it, a delivery nobody merged.
	integration := run.IntegrationBranch(t.Feature)
	integrationHead, err := g.RevParse(ctx, "refs/heads/"+integration)
	hasIntegration := err == nil
	var reasons []string
	if o.All {
		facts := allFacts{unsaved: unsaved, logErr: t.LogErr, delivered: st != nil && st.Finished != nil && st.Finished.Delivered}
		if hasIntegration {
			// A commit someone added to the integration branch (a fix on
			// top of a run that did not deliver) is theirs: deleting the
			// branch would leave it dangling, delivered or not.
			foreign, err := g.ForeignCommits(ctx, integrationHead, run.BranchPrefix(t.Feature), t.Feature, MaxNamedCommits+1)
			if err != nil {
				return fmt.Errorf("read the commits of %s: %w", integration, err)
			}
			if len(foreign) > 0 {
				facts.foreign = o.NameCommits(foreign)
			}
			if facts.delivered {
				merged, err := mergedOutsideZerg(ctx, g, integrationHead)
				if err != nil {
					return err
				}
				facts.unmergedDelivery = !merged
			}
		}
		reasons = allBlockers(t.Feature, logPath, facts)
	}
	blocked := len(reasons) > 0 && !o.Force
	all := o.All && !blocked

	// Branches: only zerg/<feature>/…
	prefix := run.BranchPrefix(t.Feature)
	branches, err := g.Branches(ctx, prefix)
	if err != nil {
		return fmt.Errorf("list branches: %w", err)
	}
	merged := map[string]bool{}
	if hasIntegration {
		list, err := g.BranchesMergedInto(ctx, integrationHead, prefix)
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
			r.linef("kept     branch %s (checked out in %s)", b, ws)
			keptBranches++
			continue
		}
		if all && b != integration && !merged[b] && !o.Force {
			// An attempt branch someone committed on is theirs too.
			tip, err := g.RevParse(ctx, "refs/heads/"+b)
			if err != nil {
				return fmt.Errorf("read branch %s: %w", b, err)
			}
			foreign, err := g.ForeignCommits(ctx, tip, prefix, t.Feature, MaxNamedCommits+1)
			if err != nil {
				return fmt.Errorf("read the commits of %s: %w", b, err)
			}
			if len(foreign) > 0 {
				r.linef("kept     branch %s (it holds %s that zerg did not make and no other branch holds; merge or cherry-pick it, or pass --force)", b, o.NameCommits(foreign))
				keptBranches++
				keptForeign++
				continue
			}
		}
		if !o.DryRun {
			if err := g.DeleteBranch(ctx, b); err != nil {
				return fmt.Errorf("delete branch %s: %w", b, err)
			}
		}
		r.linef("%s branch %s", verb, b)
	}
	if n := keptBranches - keptForeign; n > 0 {
		r.Failures = append(r.Failures, fmt.Sprintf("%d branch(es) kept because a worktree has them checked out", n))
	}
	if keptForeign > 0 {
		r.Failures = append(r.Failures, fmt.Sprintf("%d branch(es) kept because they hold commits zerg did not make", keptForeign))
	}

	if blocked {
		for _, reason := range reasons {
			r.linef("kept     %s", reason)
		}
		r.Failures = append(r.Failures, fmt.Sprintf("the run log and %s were kept (see above)", integration))
	} else if all {
		if !o.DryRun {
			if err := os.RemoveAll(paths.RunDir); err != nil {
				return fmt.Errorf("remove run log %s: %w", logPath, err)
			}
		}
		r.linef("%s run log %s", verb, logPath)
		// Build caches zerg kept per repository in earlier versions (each
		// attempt now has its own, removed with it): zerg's alone, always
		// safe to remove.
		caches := filepath.Join(filepath.Dir(paths.Workspaces), ".caches")
		if fi, err := os.Stat(caches); err == nil && fi.IsDir() {
			size := dirSize(caches)
			if !o.DryRun {
				if err := os.RemoveAll(caches); err != nil {
					return fmt.Errorf("remove build caches %s: %w", caches, err)
				}
				_ = os.Remove(filepath.Dir(paths.Workspaces))
			}
			r.linef("%s build caches %s (%d MiB)", verb, caches, size>>20)
		}
	}
	return nil
}

// allFacts are what decides whether --all may remove the run's log and
// its integration branch.
type allFacts struct {
	unsaved []string // kept workspaces that may hold uncommitted work
	logErr  error    // the log could not be read
	// foreign names the commits on the integration branch that zerg did
	// not make and no other branch holds, "" for none.
	foreign          string
	delivered        bool // the run delivered
	unmergedDelivery bool // it delivered and its head is in no branch of the user's
}

// allBlockers is why --all keeps the run's log and its integration branch,
// one kept line each; none when it may remove them.
func allBlockers(feature, logPath string, f allFacts) []string {
	integration := run.IntegrationBranch(feature)
	var reasons []string
	for _, ws := range f.unsaved {
		save := "commit or copy it"
		if !f.delivered {
			save += fmt.Sprintf(" (zerg rush %s --resume saves it to its branch)", feature)
		}
		reasons = append(reasons, fmt.Sprintf("run log %s: workspace %s has uncommitted work; %s, then run cleanup again, or pass --force", logPath, ws, save))
	}
	if f.logErr != nil {
		reasons = append(reasons, fmt.Sprintf("run log %s and branch %s: the log cannot be read (%v), so whether the run delivered is unknown; pass --force to remove them anyway", logPath, integration, f.logErr))
	}
	if f.foreign != "" {
		reasons = append(reasons, fmt.Sprintf("branch %s and run log %s: the branch holds %s that zerg did not make and no other branch holds; merge or cherry-pick it into a branch of yours, or pass --force",
			integration, logPath, f.foreign))
	}
	if f.unmergedDelivery {
		reasons = append(reasons, fmt.Sprintf("branch %s and run log %s: the run delivered and the result was never merged; zerg merge %s --into BRANCH, or pass --force", integration, logPath, feature))
	}
	return reasons
}

// cleanWorkspace removes one of the feature's workspaces (in a dry run, only
// decides) and returns why it was kept instead, "" when it goes; work says
// the kept workspace may hold uncommitted work.
func cleanWorkspace(ctx context.Context, g Git, own Owner, mergeWS string, w gitx.Worktree, dryRun bool) (why string, work bool) {
	if w.Prunable {
		// Its directory is gone: only git's record of it remains.
		if !dryRun {
			if err := g.RemoveWorktree(ctx, w.Path); err != nil {
				return err.Error(), false
			}
		}
		return "", false
	}
	// Workspaces may belong to the worker user; trust exactly this one
	// (gitx checks that its .git entry is still zerg's).
	if err := g.TrustWorkspace(w.Path); err != nil {
		return err.Error(), true
	}
	if samePath(w.Path, mergeWS) {
		// The merge workspace is zerg's scratch, a checkout of commits
		// already recorded; what gates left in it is no one's work, and the
		// next merge discards it too.
		if !dryRun {
			if err := g.DiscardWorktree(ctx, w.Path); err != nil {
				return err.Error(), false
			}
		}
		return "", false
	}
	dirty, err := g.IsDirty(ctx, w.Path)
	switch {
	case err != nil:
		return fmt.Sprintf("cannot check it for uncommitted work: %v", err), true
	case dirty:
		// A worker user owned it: the person's own git would refuse it
		// ("dubious ownership"). Its .git is still zerg's (the trusted
		// call above would have failed otherwise), so it can be theirs.
		whose := "it is yours and git works there"
		if dryRun {
			if !own.InvokerOwns(w.Path) {
				whose = WouldHandBack
			}
		} else if err := own.HandBackWorktree(w.Path); err != nil {
			whose = fmt.Sprintf("it could not be handed to you (%v), so your git may refuse it", err)
		}
		return "uncommitted changes; " + whose + ": commit or copy them, then run cleanup again", true
	case w.Locked:
		return "locked with git worktree lock: unlock it, then run cleanup again", false
	}
	if !dryRun {
		if err := g.RemoveWorktree(ctx, w.Path); err != nil {
			return err.Error(), errors.Is(err, gitx.ErrDirty)
		}
	}
	return "", false
}

// mergedOutsideZerg reports whether commit is in the history of a branch
// that is not zerg's: the user merged the delivery somewhere.
func mergedOutsideZerg(ctx context.Context, g Git, commit string) (bool, error) {
	list, err := g.BranchesContaining(ctx, commit, "")
	if err != nil {
		return false, fmt.Errorf("find branches containing %s: %w", gitx.ShortHash(commit), err)
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
func keepClone(own Owner, ws string, st *runstate.State, feature string, dryRun bool) string {
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
		return why + "; " + WouldHandBack
	}
	if err := own.HandBack(ws); err != nil {
		return fmt.Sprintf("%s; it still belongs to the worker user and could not be handed to you (%v), so your git refuses it: delete it as root, or run cleanup as root", why, err)
	}
	if b, err := json.Marshal(k); err == nil {
		_ = fsx.WritePrivate(ws+driver.KeptSuffix, b)
	}
	return why + "; " + HandedBack
}

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
func openAttemptAt(st *runstate.State, ws string) (task string, n int, ok bool) {
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
