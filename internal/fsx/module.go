package fsx

import (
	"errors"
	"os"
	"path/filepath"
)

// ModuleRoot returns the nearest directory at or above dir holding go.mod:
// the zerg repository, for tests and benchmarks that need its files (the
// pinned CLI, examples, test fixtures).
func ModuleRoot(dir string) (string, error) {
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above " + dir)
		}
		dir = parent
	}
}
