package gitx

import (
	"context"
	"fmt"
	"strings"
)

// Branches lists the branches whose names start with prefix ("" for every
// branch), in git's ref order.
func (r *Runner) Branches(ctx context.Context, prefix string) ([]string, error) {
	return r.branches(ctx, prefix)
}

// BranchesMergedInto lists the branches under prefix whose tips are
// reachable from rev: merged into it, so deleting them loses no commit.
func (r *Runner) BranchesMergedInto(ctx context.Context, rev, prefix string) ([]string, error) {
	if err := revArg(rev); err != nil {
		return nil, err
	}
	return r.branches(ctx, prefix, "--merged="+rev)
}

// BranchesContaining lists the branches under prefix whose history
// contains commit.
func (r *Runner) BranchesContaining(ctx context.Context, commit, prefix string) ([]string, error) {
	if err := revArg(commit); err != nil {
		return nil, err
	}
	return r.branches(ctx, prefix, "--contains="+commit)
}

// branches runs for-each-ref over refs/heads. Names come from the full ref
// name: %(refname:short) turns into "heads/x" when a tag x exists too, and
// such a name would then address the wrong ref. git matches a pattern only
// whole or up to a '/', so the pattern is the prefix's directory and the
// prefix itself is applied here.
func (r *Runner) branches(ctx context.Context, prefix string, filter ...string) ([]string, error) {
	if prefix != "" {
		if err := ValidateRef(prefix + "x"); err != nil {
			return nil, fmt.Errorf("branch prefix %q: %w", prefix, err)
		}
	}
	pattern := "refs/heads/"
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		pattern += prefix[:i+1]
	}
	args := append([]string{"for-each-ref", "--format=%(refname)"}, filter...)
	out, err := r.Run(ctx, append(args, "--", pattern)...)
	if err != nil {
		return nil, err
	}
	var list []string
	for line := range strings.SplitSeq(out, "\n") {
		name, ok := strings.CutPrefix(line, "refs/heads/")
		if ok && strings.HasPrefix(name, prefix) {
			list = append(list, name)
		}
	}
	return list, nil
}
