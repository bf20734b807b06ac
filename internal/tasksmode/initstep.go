package tasksmode

import (
	"errors"
	"path/filepath"

	"github.com/zergrush/zerg/internal/projectinit"
	"github.com/zergrush/zerg/internal/run"
)

// zerg init's step for the hook: its check runs before any step writes, its
// install reports what it did as every init step does (projectinit.Outcome).

// CheckHookSettings is zerg init's check of the repository at root before
// the hook is installed: a ClaudeSettings that does not parse is the user's
// to fix, a *run.Error of kind BadInput (exit 2, nothing written); one that
// cannot be read is that error, as it is.
func CheckHookSettings(root string) error {
	_, err := ReadSettings(settingsPath(root))
	return settingsInput(err)
}

// InstallProjectHook is InstallHook of the ClaudeSettings of the repository
// at root, as zerg init's report says it: the hook present, added to the
// user's settings, or a file holding only the hook.
func InstallProjectHook(root string) (projectinit.Outcome, error) {
	did, err := InstallHook(settingsPath(root))
	switch {
	case err != nil:
		return projectinit.Outcome{}, settingsInput(err)
	case did == HookPresent:
		return projectinit.Outcome{Kind: projectinit.Existing, Verb: "exists", Path: ClaudeSettings, Detail: "tasks mode's hook present"}, nil
	case did == HookAdded:
		return projectinit.Outcome{Kind: projectinit.Updated, Verb: "updated", Path: ClaudeSettings, Detail: "tasks mode's hook added"}, nil
	}
	return projectinit.Outcome{Kind: projectinit.Created, Verb: "created", Path: ClaudeSettings, Detail: "tasks mode's hook"}, nil
}

func settingsPath(root string) string { return filepath.Join(root, filepath.FromSlash(ClaudeSettings)) }

// settingsInput makes a settings file that does not parse bad input.
func settingsInput(err error) error {
	var se *SettingsError
	if errors.As(err, &se) {
		return &run.Error{Kind: run.BadInput, Err: err}
	}
	return err
}
