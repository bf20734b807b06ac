package gitx

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// RevParse returns the commit id rev names.
func (r *Runner) RevParse(ctx context.Context, rev string) (string, error) {
	if strings.HasPrefix(rev, "-") {
		return "", fmt.Errorf("invalid revision %q", rev)
	}
	return trim(r.Run(ctx, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}"))
}

// BranchExists reports whether refs/heads/name exists.
func (r *Runner) BranchExists(ctx context.Context, name string) (bool, error) {
	if err := ValidateRef(name); err != nil {
		return false, err
	}
	_, err := r.Run(ctx, "show-ref", "--verify", "--quiet", "refs/heads/"+name)
	var ge *Error
	if errors.As(err, &ge) && ge.ExitCode == 1 {
		return false, nil
	}
	return err == nil, err
}

// SetBranch points branch at commit, creating it if needed. When old is not
// empty the update only happens if the branch is still at old (a
// compare-and-swap, so two writers cannot silently overwrite each other).
func (r *Repo) SetBranch(ctx context.Context, branch, commit, old string) error {
	if err := ValidateRef(branch); err != nil {
		return err
	}
	args := []string{"update-ref", "-m", "zerg", "refs/heads/" + branch, commit}
	if old != "" {
		args = append(args, old)
	}
	return r.Locked(func() error {
		_, err := r.Run(ctx, args...)
		return err
	})
}

// DeleteBranch removes a branch zerg owns.
func (r *Repo) DeleteBranch(ctx context.Context, branch string) error {
	if err := ValidateRef(branch); err != nil {
		return err
	}
	return r.Locked(func() error {
		_, err := r.Run(ctx, "update-ref", "-d", "refs/heads/"+branch)
		return err
	})
}

// AddWorktree creates a worktree at path on a new branch starting at start.
// The branch must not exist yet.
func (r *Repo) AddWorktree(ctx context.Context, path, branch, start string) error {
	if err := ValidateRef(branch); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return r.Locked(func() error {
		_, err := r.Run(ctx, "worktree", "add", "--quiet", "-b", branch, "--", path, start)
		return err
	})
}

// AddDetachedWorktree creates a worktree at path with a detached HEAD at start.
func (r *Repo) AddDetachedWorktree(ctx context.Context, path, start string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return r.Locked(func() error {
		_, err := r.Run(ctx, "worktree", "add", "--quiet", "--detach", "--", path, start)
		return err
	})
}

// ErrDirty is returned when zerg refuses to remove a workspace with uncommitted work.
var ErrDirty = errors.New("workspace has uncommitted changes")

// RemoveWorktree removes a clean worktree. A dirty one is never deleted:
// ErrDirty is returned and nothing is touched.
func (r *Repo) RemoveWorktree(ctx context.Context, path string) error {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return r.Locked(func() error {
			_, err := r.Run(ctx, "worktree", "prune")
			return err
		})
	}
	dirty, err := r.In(path).IsDirty(ctx)
	if err != nil {
		return err
	}
	if dirty {
		return fmt.Errorf("%s: %w; commit or save it, then run zerg cleanup again", path, ErrDirty)
	}
	return r.Locked(func() error {
		// Without --force git itself also refuses a dirty or locked worktree.
		_, err := r.Run(ctx, "worktree", "remove", "--", path)
		return err
	})
}

// PruneWorktrees drops git's records of worktrees whose directories are gone.
func (r *Repo) PruneWorktrees(ctx context.Context) error {
	return r.Locked(func() error {
		_, err := r.Run(ctx, "worktree", "prune")
		return err
	})
}

// DiscardWorktree removes one of zerg's own scratch worktrees (the merge
// workspace) even when commands left files in it: it holds no work, only a
// checkout of commits zerg already recorded.
func (r *Repo) DiscardWorktree(ctx context.Context, path string) error {
	return r.Locked(func() error {
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			_, err := r.Run(ctx, "worktree", "prune")
			return err
		}
		_, err := r.Run(ctx, "worktree", "remove", "--force", "--", path)
		return err
	})
}

// IsDirty reports whether the working tree has changes, untracked files included.
func (r *Runner) IsDirty(ctx context.Context) (bool, error) {
	out, err := r.Run(ctx, "status", "--porcelain=v1", "--untracked-files=all", "--ignored=no")
	if err != nil {
		return false, err
	}
	return strings.TrimSpace(out) != "", nil
}

// DirtyFiles lists the paths of the working tree that differ from HEAD:
// changed in the index or the working tree, deleted, or untracked (each
// file, not its directory), relative to the top level, ignored files left
// out.
func (r *Runner) DirtyFiles(ctx context.Context) ([]string, error) {
	out, err := r.Run(ctx, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignored=no", "--no-renames")
	if err != nil {
		return nil, err
	}
	var files []string
	for e := range strings.SplitSeq(out, "\x00") {
		if len(e) > 3 { // "XY path"
			files = append(files, e[3:])
		}
	}
	return files, nil
}

// HasTrackedChanges reports whether tracked files differ from HEAD, in the
// index or the working tree. Untracked files do not count: they do not block
// a merge (git refuses by itself to overwrite one).
func (r *Runner) HasTrackedChanges(ctx context.Context) (bool, error) {
	out, err := r.Run(ctx, "status", "--porcelain=v1", "--untracked-files=no", "--ignored=no")
	if err != nil {
		return false, err
	}
	return strings.TrimSpace(out) != "", nil
}

// Change is one path in a diff.
type Change struct {
	Status string // A, M, D, R, C, T
	Path   string // the new path
	From   string // the old path of a rename or copy
}

// ChangedFiles lists every change in the working tree relative to base,
// untracked files included, so nothing a worker wrote escapes the ownership
// check. It stages everything in the workspace's own index.
func (r *Runner) ChangedFiles(ctx context.Context, base string) ([]Change, error) {
	if _, err := r.Run(ctx, "add", "--all", "--", "."); err != nil {
		return nil, err
	}
	out, err := r.Run(ctx, "diff", "--cached", "--name-status", "-z", "--no-renames", base, "--")
	if err != nil {
		return nil, err
	}
	return parseNameStatusZ(out), nil
}

func parseNameStatusZ(out string) []Change {
	fields := strings.Split(strings.TrimSuffix(out, "\x00"), "\x00")
	var changes []Change
	for i := 0; i+1 < len(fields); {
		st := fields[i]
		if st == "" {
			i++
			continue
		}
		c := Change{Status: st[:1]}
		if (c.Status == "R" || c.Status == "C") && i+2 < len(fields) {
			c.From, c.Path = fields[i+1], fields[i+2]
			i += 3
		} else {
			c.Path = fields[i+1]
			i += 2
		}
		changes = append(changes, c)
	}
	return changes
}

// Commit records everything staged in the working tree as one commit with the
// given message and trailers ("Task-Id: T1"), and returns its id. An empty
// change is still committed (--allow-empty) so every finished task has a
// commit to merge.
func (r *Runner) Commit(ctx context.Context, message string, trailers map[string]string) (string, error) {
	args := append([]string{"commit", "--quiet", "--no-verify", "--allow-empty", "--file=-"}, r.signArgs()...)
	if _, err := r.RunInput(ctx, []byte(commitMessage(message, r.zergTrailers(trailers))), args...); err != nil {
		return "", err
	}
	return r.RevParse(ctx, "HEAD")
}

// commitMessage is a commit message with its trailers, sorted by key.
func commitMessage(message string, trailers map[string]string) string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(message))
	if len(trailers) > 0 {
		b.WriteString("\n\n")
		keys := make([]string, 0, len(trailers))
		for k := range trailers {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "%s: %s\n", k, trailers[k])
		}
	}
	return b.String()
}

// MergeConflict is a merge that stopped on conflicting paths; it was
// undone, so the working tree is as it was.
type MergeConflict struct {
	Branch string
	Paths  []string
	Err    error // git's own failure
}

func (e *MergeConflict) Error() string {
	return fmt.Sprintf("merging %s conflicts on %s: %v", e.Branch, strings.Join(e.Paths, ", "), e.Err)
}

func (e *MergeConflict) Unwrap() error { return e.Err }

// Merge merges branch into the current HEAD of the working tree with a merge
// commit. On a conflict the merge is aborted and a *MergeConflict naming the
// conflicting paths is returned.
func (r *Runner) Merge(ctx context.Context, branch, message string) (string, error) {
	if err := ValidateRef(branch); err != nil {
		return "", err
	}
	args := append([]string{"merge", "--no-ff", "--no-verify", "--no-edit", "-m", commitMessage(message, r.zergTrailers(nil))}, r.signArgs()...)
	_, err := r.Run(ctx, append(args, "--end-of-options", branch)...)
	if err != nil {
		conflicts, _ := r.Run(ctx, "diff", "--name-only", "-z", "--diff-filter=U")
		_, _ = r.Run(ctx, "merge", "--abort")
		if c := splitZ(conflicts); len(c) > 0 {
			return "", &MergeConflict{Branch: branch, Paths: c, Err: err}
		}
		return "", err
	}
	return r.RevParse(ctx, "HEAD")
}

// SquashMerge records what branch changes since its merge base with HEAD
// as one commit on top of HEAD (git merge --squash, then a commit with
// message), and returns it; HEAD itself when it already holds the change. On a conflict the working tree is reset to
// HEAD and a *MergeConflict is returned: use it in a worktree of zerg's,
// never one with a person's uncommitted work.
func (r *Runner) SquashMerge(ctx context.Context, branch, message string) (string, error) {
	if err := ValidateRef(branch); err != nil {
		return "", err
	}
	if _, err := r.Run(ctx, "merge", "--squash", "--no-verify", "--end-of-options", branch); err != nil {
		conflicts, _ := r.Run(ctx, "diff", "--name-only", "-z", "--diff-filter=U")
		_, _ = r.Run(ctx, "reset", "--hard", "--quiet", "HEAD")
		if c := splitZ(conflicts); len(c) > 0 {
			return "", &MergeConflict{Branch: branch, Paths: c, Err: err}
		}
		return "", err
	}
	// Nothing staged: HEAD already holds the change (an earlier squash).
	if _, err := r.Run(ctx, "diff", "--cached", "--quiet"); err == nil {
		return r.RevParse(ctx, "HEAD")
	} else if ge, ok := err.(*Error); !ok || ge.ExitCode != 1 {
		return "", err
	}
	if _, err := r.RunInput(ctx, []byte(commitMessage(message, nil)), "commit", "--quiet", "--no-verify", "--file=-"); err != nil {
		return "", err
	}
	return r.RevParse(ctx, "HEAD")
}

func splitZ(s string) []string {
	var out []string
	for _, p := range strings.Split(s, "\x00") {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// FastForward moves the branch checked out in the working tree forward to
// branch, updating the files; it fails, changing nothing, when that is not
// a fast-forward.
func (r *Runner) FastForward(ctx context.Context, branch string) error {
	if err := ValidateRef(branch); err != nil {
		return err
	}
	_, err := r.Run(ctx, "merge", "--ff-only", "--no-verify", "--no-edit", "--end-of-options", branch)
	return err
}

// TrailerValue returns the value of a trailer in commit's message.
func (r *Runner) TrailerValue(ctx context.Context, commit, key string) (string, error) {
	return trim(r.Run(ctx, "log", "-1", "--format=%(trailers:key="+key+",valueonly)", commit, "--"))
}
