package gitx

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Private workspaces for sandboxed attempts. A worktree shares the user's
// refs and objects with whoever works in it; a sandboxed worker instead gets
// a repository of its own that holds the base commit and nothing else, and
// hands its result back as a bundle that zerg checks in a quarantine before
// any of it enters the user's repository.

// CloneCommit makes dst a new repository whose only commit is commit (a
// depth-1 fetch from r), checked out on branch "work". Nothing else of r
// (other branches, stashes, older objects) is in it.
func (r *Repo) CloneCommit(ctx context.Context, dst, commit string) error {
	if !isHex(commit) {
		return fmt.Errorf("clone %s: %q is not a full commit id", dst, commit)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	w := r.In(dst)
	steps := [][]string{
		{"init", "--quiet", "--initial-branch=work"},
		// Protocol v2 lets a fetch ask for any object by its id, so the
		// commit needs no ref of its own in r (no write to r, no wait for
		// its lock, two git processes fewer on the way to every worker's
		// and gate's workspace); v2 is forced, as a user's
		// protocol.version could name an older one that refuses.
		{"-c", "protocol.file.allow=always", "-c", "protocol.version=2", "fetch", "--quiet", "--no-tags", "--depth=1", "--", r.Dir, commit},
		{"reset", "--quiet", "--hard", commit},
	}
	for _, args := range steps {
		if _, err := w.Run(ctx, args...); err != nil {
			return fmt.Errorf("clone %s: %w", dst, err)
		}
	}
	return nil
}

// Quarantine is a bare repository that borrows the user's objects
// (read-only, through alternates) and receives a worker's bundle, so that
// what the worker produced can be checked before anything of it is written
// to the user's object store.
type Quarantine struct {
	*Runner
	main *Repo
}

// NewQuarantine creates a quarantine repository in dir for r.
func (r *Repo) NewQuarantine(ctx context.Context, dir string) (*Quarantine, error) {
	common, err := r.CommonDir(ctx)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	q := r.In(dir)
	if _, err := q.Run(ctx, "init", "--quiet", "--bare"); err != nil {
		return nil, fmt.Errorf("create quarantine %s: %w", dir, err)
	}
	alt := filepath.Join(dir, "objects", "info", "alternates")
	if err := os.WriteFile(alt, []byte(filepath.Join(common, "objects")+"\n"), 0o600); err != nil {
		return nil, err
	}
	return &Quarantine{Runner: q, main: r}, nil
}

// FetchBundle fetches the HEAD of a bundle a worker made into the
// quarantine, checking every object; it returns the commit. The fetch
// refuses what git bundle verify would (not a bundle, a prerequisite the
// repository lacks) and checks the objects besides, so no separate
// verification runs first.
func (q *Quarantine) FetchBundle(ctx context.Context, bundle string) (string, error) {
	if _, err := q.Run(ctx, "-c", "transfer.fsckObjects=true", "-c", "protocol.file.allow=always",
		"fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--", bundle, "+HEAD:refs/zerg/result"); err != nil {
		return "", fmt.Errorf("fetch bundle %s: %w", bundle, err)
	}
	return q.RevParse(ctx, "refs/zerg/result")
}

// Import records a commit made by zerg with the tree of the worker's
// commit on top of parent, with zerg's message and trailers, and copies it
// into the user's repository as branch (created, or moved there). Only that
// commit and its tree travel: the worker's own commit object (its message
// could carry anything) and any other object its bundle smuggled stay in
// the quarantine. It returns the new commit.
func (q *Quarantine) Import(ctx context.Context, commit, parent, message string, trailers map[string]string, branch string) (string, error) {
	if err := ValidateRef(branch); err != nil {
		return "", err
	}
	tree, err := q.RevParseTree(ctx, commit)
	if err != nil {
		return "", err
	}
	made, err := q.CommitTree(ctx, tree, parent, message, trailers)
	if err != nil {
		return "", err
	}
	// Straight onto the branch: a temporary ref, its removal and then the
	// branch's own update were three git processes under the lock, on
	// the way from every worker's result to its merge. --update-head-ok:
	// a worktree may have the branch checked out (subprocess mode's
	// attempt), which update-ref, as before, would move all the same.
	if err := q.main.Locked(func() error {
		_, err := q.main.Run(ctx, "-c", "transfer.fsckObjects=true", "-c", "protocol.file.allow=always",
			"fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--update-head-ok", "--", q.Dir, "+"+made+":refs/heads/"+branch)
		return err
	}); err != nil {
		return "", fmt.Errorf("import %s: %w", ShortHash(commit), err)
	}
	return made, nil
}

// RevParseTree is the tree of a commit.
func (r *Runner) RevParseTree(ctx context.Context, commit string) (string, error) {
	if strings.HasPrefix(commit, "-") {
		return "", fmt.Errorf("invalid revision %q", commit)
	}
	return trim(r.Run(ctx, "rev-parse", "--verify", "--quiet", "--end-of-options", commit+"^{tree}"))
}

// Parents lists a commit's parents.
func (r *Runner) Parents(ctx context.Context, commit string) ([]string, error) {
	if strings.HasPrefix(commit, "-") {
		return nil, fmt.Errorf("invalid revision %q", commit)
	}
	out, err := r.Run(ctx, "rev-list", "--parents", "-n", "1", "--end-of-options", commit)
	if err != nil {
		return nil, err
	}
	f := strings.Fields(out)
	if len(f) == 0 {
		return nil, fmt.Errorf("no commit %s", commit)
	}
	return f[1:], nil
}

// CommitTree records tree as a commit on top of parent under the runner's
// commit policy, with the given message and trailers, without touching any
// working tree.
func (r *Runner) CommitTree(ctx context.Context, tree, parent, message string, trailers map[string]string) (string, error) {
	args := append([]string{"commit-tree", tree, "-p", parent, "-F", "-"}, r.signArgs()...)
	return r.commitTree(ctx, tree, parent, commitMessage(message, r.zergTrailers(trailers)), args)
}

func (r *Runner) commitTree(ctx context.Context, tree, parent, message string, args []string) (string, error) {
	if !isHex(tree) || !isHex(parent) {
		return "", fmt.Errorf("commit-tree: %q or %q is not a full object id", tree, parent)
	}
	return trim(r.RunInput(ctx, []byte(message), args...))
}

// DiffCommits is the patch between two commits, in the fixed format of
// zerg's other diffs.
func (r *Runner) DiffCommits(ctx context.Context, a, b string) (string, error) {
	if !isHex(a) || !isHex(b) {
		return "", fmt.Errorf("diff: %q or %q is not a full object id", a, b)
	}
	return r.Run(ctx, "diff", "--no-color", "--no-ext-diff", "--no-textconv", "--binary", "--src-prefix=a/", "--dst-prefix=b/", a, b, "--")
}

// Snapshot commits the working tree of w (a worktree of the repository)
// on top of base into the quarantine, the way the worker's own `git add -A
// && git commit` would, without touching the worktree's index or HEAD and
// without writing to the repository's object store: a fresh private index
// (the worktree's own is the worker's to tamper with: skip-worktree bits
// would hide changes) and the quarantine's object directory. What is
// refused is removed with the quarantine and never reaches the repository.
func (q *Quarantine) Snapshot(ctx context.Context, w *Runner, base string) (string, error) {
	common, err := q.main.CommonDir(ctx)
	if err != nil {
		return "", err
	}
	index := filepath.Join(q.Dir, "snapshot-index")
	_ = os.Remove(index)
	defer os.Remove(index)
	s := *w
	s.ExtraEnv = append(append([]string{}, w.ExtraEnv...), "GIT_INDEX_FILE="+index,
		"GIT_OBJECT_DIRECTORY="+filepath.Join(q.Dir, "objects"),
		"GIT_ALTERNATE_OBJECT_DIRECTORIES="+filepath.Join(common, "objects"))
	if _, err := s.Run(ctx, "read-tree", base); err != nil {
		return "", err
	}
	if _, err := s.Run(ctx, "add", "--all", "--", "."); err != nil {
		return "", err
	}
	tree, err := trim(s.Run(ctx, "write-tree"))
	if err != nil {
		return "", err
	}
	// A scratch commit of the quarantine, never signed: Import makes the
	// one that is kept.
	return q.commitTree(ctx, tree, base, "attempt", []string{"commit-tree", tree, "-p", base, "-F", "-"})
}
