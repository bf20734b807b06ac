package cli

import (
	"fmt"
	"os"
	"testing"
)

// sharedDir holds what several tests read and none changes (the rules
// repository, the tool-call corpus's workspaces), made once by the first
// test that asks; it is removed after the tests.
var sharedDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "zerg-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sharedDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
