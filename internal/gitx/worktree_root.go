package gitx

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// WorkTreeRoot is the top of the git working tree holding dir, cleaned. Its
// errors are written for the user of a command run in dir: git missing from
// PATH, dir outside any repository (run git init) or in a bare one, or git's
// own first line of complaint.
func WorkTreeRoot(ctx context.Context, dir string) (string, error) {
	root, err := New(dir).TopLevel(ctx)
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return "", errors.New("git is not installed (not found in PATH); install git, then run zerg again")
		}
		msg := err.Error()
		var ge *Error
		if errors.As(err, &ge) {
			msg = strings.TrimSpace(ge.Stderr)
		}
		if strings.Contains(msg, "not a git repository") || strings.Contains(msg, "must be run in a work tree") {
			return "", fmt.Errorf("%s is not inside a git repository; run `git init` first", dir)
		}
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		return "", fmt.Errorf("find the git repository of %s: %s", dir, msg)
	}
	if root == "" {
		return "", fmt.Errorf("%s is not inside a git working tree; run `git init` first", dir)
	}
	return filepath.Clean(root), nil
}
