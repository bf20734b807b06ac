package claude

import (
	"os"
	"os/exec"
	"path/filepath"
)

// HookBinary is the zerg executable workers' hooks run (HookSpec.ZergBinary)
// when self is the running zerg's own path. Under testscript the test binary
// stands in for zerg and dispatches on the name it was run as, so when zerg
// was run by that name the path the name resolves to is kept rather than the
// resolved test binary: the hook must run zerg, not the test.
func HookBinary(self string) string {
	if filepath.Base(os.Args[0]) == "zerg" {
		if p, err := exec.LookPath(os.Args[0]); err == nil {
			if abs, err := filepath.Abs(p); err == nil {
				return abs
			}
		}
	}
	return self
}

// ZergBinary is HookBinary of the running executable, for commands that
// only need it once their input is checked (zerg hook check).
func ZergBinary() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	return HookBinary(self), nil
}
