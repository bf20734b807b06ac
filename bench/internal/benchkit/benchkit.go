// Package benchkit is what the benchmarks share to set up a run: zerg built
// from this repository and a scratch project committed as one commit.
package benchkit

import (
	"fmt"
	"os/exec"
	"path/filepath"
)

// BuildZerg builds zerg from the repository at root into dir/zerg. dir
// must be reachable by the worker users when zerg runs as root: workers
// run the binary (their hook).
func BuildZerg(root, dir string) (string, error) {
	zerg := filepath.Join(dir, "zerg")
	cmd := exec.Command("go", "build", "-o", zerg, "./cmd/zerg")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build zerg: %v\n%s", err, out)
	}
	return zerg, nil
}

// CommitAll makes dir a git repository on branch main holding everything
// in it as one commit.
func CommitAll(dir string) error {
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"},
		{"-c", "user.name=bench", "-c", "user.email=bench@zerg.invalid", "commit", "-q", "-m", "bench"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %v: %v\n%s", args, err, out)
		}
	}
	return nil
}
