package tasksmode

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/projectinit"
	"github.com/zergrush/zerg/internal/run"
)

// zerg init's step: created, then present; added to the user's settings;
// a settings file that does not parse is bad input for the check and the
// install, one that cannot be read is not.
func TestInitStep(t *testing.T) {
	root := t.TempDir()
	if err := CheckHookSettings(root); err != nil {
		t.Fatalf("no settings: %v", err)
	}
	for _, want := range []projectinit.Outcome{
		{Kind: projectinit.Created, Verb: "created", Path: ClaudeSettings, Detail: "tasks mode's hook"},
		{Kind: projectinit.Existing, Verb: "exists", Path: ClaudeSettings, Detail: "tasks mode's hook present"},
	} {
		if o, err := InstallProjectHook(root); err != nil || o != want {
			t.Errorf("install: %+v, %v; want %+v", o, err, want)
		}
	}

	other := t.TempDir()
	path := filepath.Join(other, filepath.FromSlash(ClaudeSettings))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(`{"model":"opus"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	want := projectinit.Outcome{Kind: projectinit.Updated, Verb: "updated", Path: ClaudeSettings, Detail: "tasks mode's hook added"}
	if o, err := InstallProjectHook(other); err != nil || o != want {
		t.Errorf("the user's settings: %+v, %v; want %+v", o, err, want)
	}

	if err := os.WriteFile(path, []byte(`[1]`), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{"check": CheckHookSettings(other), "install": func() error { _, err := InstallProjectHook(other); return err }()} {
		var se *SettingsError
		if !errors.Is(err, run.BadInput) || !errors.As(err, &se) || !strings.Contains(err.Error(), "is not a JSON object") {
			t.Errorf("%s of settings that do not parse: %v, want bad input saying so", name, err)
		}
	}

	// A directory where the file should be cannot be read: not the user's
	// JSON to fix, so not bad input.
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(ClaudeSettings)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := CheckHookSettings(dir); err == nil || errors.Is(err, run.BadInput) {
		t.Errorf("unreadable settings: %v, want a plain error", err)
	}
}
