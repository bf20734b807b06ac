package gitx

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
)

// revArg checks a revision before it goes into an argument list: one that
// starts with '-' would be read as an option.
func revArg(rev string) error {
	if rev == "" || strings.HasPrefix(rev, "-") {
		return fmt.Errorf("invalid revision %q", rev)
	}
	return nil
}

// plainDiff fixes the diff format whatever the user's or the repository's
// config says (colour, external diff and textconv drivers, prefixes, quoted
// paths), so parsers and git apply read what they expect and no configured
// program runs.
var plainDiff = []string{"--no-color", "--no-ext-diff", "--no-textconv", "--src-prefix=a/", "--dst-prefix=b/"}

// diffCmd builds a diff call: quoted paths forced on, then the fixed format.
func diffCmd(extra ...string) []string {
	args := append([]string{"-c", "core.quotePath=true", "diff"}, plainDiff...)
	return append(args, extra...)
}

// StagedPatch is the index against base as a patch git apply can replay,
// binary files included.
func (r *Runner) StagedPatch(ctx context.Context, base string) (string, error) {
	if err := revArg(base); err != nil {
		return "", err
	}
	return r.Run(ctx, diffCmd("--cached", "--binary", base, "--")...)
}

// WorkingDiff is the tracked files of the working tree against base with no
// context lines, for a scanner of what was added. Rename detection is off:
// a renamed file shows whole, so its content is read too.
func (r *Runner) WorkingDiff(ctx context.Context, base string) (string, error) {
	if err := revArg(base); err != nil {
		return "", err
	}
	return r.Run(ctx, diffCmd("--no-renames", "--unified=0", base, "--")...)
}

// StagedDiff is what the next commit would add: the index against HEAD with
// no context lines and deleted files left out. Renames are detected, so a
// file only moved adds nothing to scan.
func (r *Runner) StagedDiff(ctx context.Context) (string, error) {
	return r.Run(ctx, diffCmd("--cached", "--unified=0", "--diff-filter=d")...)
}

// UntrackedFiles lists files git does not track and does not ignore,
// relative to the runner's directory.
func (r *Runner) UntrackedFiles(ctx context.Context) ([]string, error) {
	out, err := r.Run(ctx, "ls-files", "--others", "--exclude-standard", "-z")
	if err != nil {
		return nil, err
	}
	var files []string
	for p := range strings.SplitSeq(out, "\x00") {
		if p != "" {
			files = append(files, p)
		}
	}
	return files, nil
}

// FileAt returns the content of path (relative to the top level) at rev.
// A path absent at rev is an error wrapping os.ErrNotExist, so callers can
// tell "no such file" from a broken repository.
func (r *Runner) FileAt(ctx context.Context, rev, path string) ([]byte, error) {
	if err := revArg(rev); err != nil {
		return nil, err
	}
	if path == "" || strings.ContainsRune(path, '\x00') {
		return nil, fmt.Errorf("invalid path %q", path)
	}
	// Resolve rev first: rev-parse --verify --quiet answers an unknown
	// revision and an absent path alike (exit 1), and an unknown revision is
	// an error, never "no such file".
	tree, err := trim(r.Run(ctx, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{tree}"))
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", rev, err)
	}
	oid, err := trim(r.Run(ctx, "rev-parse", "--verify", "--quiet", "--end-of-options", tree+":"+path))
	var ge *Error
	if errors.As(err, &ge) && ge.ExitCode == 1 {
		return nil, fmt.Errorf("%s at %s: %w", path, rev, os.ErrNotExist)
	}
	if err != nil {
		return nil, err
	}
	out, err := r.Run(ctx, "cat-file", "blob", oid)
	if err != nil {
		return nil, err
	}
	return []byte(out), nil
}
