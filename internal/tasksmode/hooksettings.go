package tasksmode

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// HookCommand is the PreToolUse hook tasks mode's subagents go through
// (zerg hook tasks-pre-tool-use), as zerg init installs it.
const HookCommand = "zerg hook tasks-pre-tool-use"

// ClaudeSettings is the project's Claude Code settings file, relative to
// the repository root: where the hook is installed.
const ClaudeSettings = ".claude/settings.json"

// HookEntry is the PreToolUse entry zerg init adds to ClaudeSettings: the
// file tools, the only calls the hook can tell subagents apart by.
func HookEntry() map[string]any {
	return map[string]any{
		"matcher": "Write|Edit|MultiEdit|NotebookEdit",
		"hooks":   []any{map[string]any{"type": "command", "command": HookCommand}},
	}
}

// SettingsError: the settings file is there but is not a JSON object. It
// is the user's to fix, and nothing is written.
type SettingsError struct{ Err error }

func (e *SettingsError) Error() string {
	return fmt.Sprintf("%s is not a JSON object (%v); fix it and run zerg init again", ClaudeSettings, e.Err)
}

func (e *SettingsError) Unwrap() error { return e.Err }

// ReadSettings is the settings file at path as JSON, nil when there is
// none; a *SettingsError when it does not parse as an object.
func ReadSettings(path string) (map[string]any, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		return nil, &SettingsError{Err: err}
	}
	return m, nil
}

// HookInstall is what InstallHook did to the settings file.
type HookInstall int

const (
	HookPresent HookInstall = iota // the hook was there already; nothing written
	HookAdded                      // the file was there; the hook was added to it
	HookCreated                    // there was no file; it holds only the hook
)

// InstallHook adds HookEntry to the PreToolUse hooks of the settings file
// at path, keeping everything else the file holds. A PreToolUse entry that
// names HookCommand anywhere counts as the hook, so a user's own matcher
// for it is left alone.
func InstallHook(path string) (HookInstall, error) {
	settings, err := ReadSettings(path)
	if err != nil {
		return HookPresent, err
	}
	exists := settings != nil
	if settings == nil {
		settings = map[string]any{}
	}
	hooks, _ := settings["hooks"].(map[string]any)
	if hooks == nil {
		hooks = map[string]any{}
	}
	pre, _ := hooks["PreToolUse"].([]any)
	for _, m := range pre {
		if b, _ := json.Marshal(m); strings.Contains(string(b), HookCommand) {
			return HookPresent, nil
		}
	}
	hooks["PreToolUse"] = append(pre, HookEntry())
	settings["hooks"] = hooks
	b, err := json.MarshalIndent(settings, "", "  ")
	if err != nil {
		return HookPresent, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return HookPresent, err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return HookPresent, err
	}
	if exists {
		return HookAdded, nil
	}
	return HookCreated, nil
}
