package cli

import (
	"os"
	"sync"
	"testing"
)

// sharedDir holds what several tests read and none changes (the rules
// repository, the tool-call corpus's workspaces). It is made by the first
// test that asks, not in TestMain: this binary also runs as a helper zerg
// process (TestHelperZergProcess), which exits inside m.Run and would
// leave it behind. TestMain removes it after the tests.
var (
	sharedOnce sync.Once
	sharedPath string
	sharedErr  error
)

func sharedDir(t *testing.T) string {
	t.Helper()
	sharedOnce.Do(func() { sharedPath, sharedErr = os.MkdirTemp("", "zerg-cli-test-") })
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return sharedPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if sharedPath != "" {
		os.RemoveAll(sharedPath)
	}
	os.Exit(code)
}
