package bash_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/zergrush/zerg/internal/policy"
)

// The Bash cases go through the hook's whole decision (policy.Decide), so
// they are judged in the scope the hook builds, as a worker's are.

func hookInput(t testing.TB, cwd, tool string, input map[string]any) *policy.HookInput {
	t.Helper()
	raw, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	return &policy.HookInput{Cwd: cwd, HookEventName: "PreToolUse", ToolName: tool, ToolInput: raw, ToolUseID: "toolu_1"}
}

func mustSymlink(t testing.TB, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}
