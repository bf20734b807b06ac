package tasksmode

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestInstallHook(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, filepath.FromSlash(ClaudeSettings))

	if m, err := ReadSettings(path); m != nil || err != nil {
		t.Fatalf("no file: %v, %v; want nil, nil", m, err)
	}
	did, err := InstallHook(path)
	if err != nil || did != HookCreated {
		t.Fatalf("no file: %v, %v; want HookCreated", did, err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "hooks": {
    "PreToolUse": [
      {
        "hooks": [
          {
            "command": "zerg hook tasks-pre-tool-use",
            "type": "command"
          }
        ],
        "matcher": "Write|Edit|MultiEdit|NotebookEdit"
      }
    ]
  }
}
`
	if string(b) != want {
		t.Fatalf("created:\n%s\nwant:\n%s", b, want)
	}
	if did, err := InstallHook(path); err != nil || did != HookPresent {
		t.Fatalf("again: %v, %v; want HookPresent", did, err)
	}
	if b2, _ := os.ReadFile(path); string(b2) != string(b) {
		t.Fatal("a second install rewrote the file")
	}
}

func TestInstallHookKeepsTheRest(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	orig := `{"permissions": {"allow": ["Bash(go test:*)"]}, "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "mine"}]}], "Stop": [{"hooks": []}]}}`
	if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	did, err := InstallHook(path)
	if err != nil || did != HookAdded {
		t.Fatalf("%v, %v; want HookAdded", did, err)
	}
	var m map[string]any
	b, _ := os.ReadFile(path)
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	hooks := m["hooks"].(map[string]any)
	pre := hooks["PreToolUse"].([]any)
	if len(pre) != 2 || !strings.Contains(string(b), `"mine"`) || hooks["Stop"] == nil || m["permissions"] == nil {
		t.Fatalf("the user's settings were not kept:\n%s", b)
	}
	if e, _ := json.Marshal(pre[1]); !strings.Contains(string(e), HookCommand) {
		t.Fatalf("the hook is not appended: %s", e)
	}

	// A user's own entry naming the command counts as the hook.
	own := `{"hooks": {"PreToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "` + HookCommand + ` --x"}]}]}}`
	if err := os.WriteFile(path, []byte(own), 0o600); err != nil {
		t.Fatal(err)
	}
	if did, err := InstallHook(path); err != nil || did != HookPresent {
		t.Fatalf("own entry: %v, %v; want HookPresent", did, err)
	}
	if b, _ := os.ReadFile(path); string(b) != own {
		t.Fatal("a file with the hook was rewritten")
	}
}

func TestInstallHookRefusesWhatDoesNotParse(t *testing.T) {
	for _, content := range []string{"{", "null", "[1]", `"x"`} {
		path := filepath.Join(t.TempDir(), "settings.json")
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := InstallHook(path)
		var se *SettingsError
		if !errors.As(err, &se) || !strings.HasPrefix(err.Error(), ClaudeSettings+" is not a JSON object (") || !strings.HasSuffix(err.Error(), "); fix it and run zerg init again") {
			t.Errorf("%q: %v, want a SettingsError", content, err)
		}
		if b, _ := os.ReadFile(path); string(b) != content {
			t.Errorf("%q: the file was changed to %q", content, b)
		}
	}
	if _, err := ReadSettings(t.TempDir()); err == nil || errors.As(err, new(*SettingsError)) {
		t.Errorf("a directory: %v, want a read error that is not a SettingsError", err)
	}
}
