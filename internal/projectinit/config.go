package projectinit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/container"
)

// CheckConfig accepts a repository whose config file is absent (init writes
// it) or valid. An existing config is the user's: its problems come back as
// the *config.Error of config.LoadAs, for the user to fix; it is never
// replaced.
func CheckConfig(root string) error {
	if err := CheckDirOrAbsent(root, ".zerg"); err != nil {
		return err
	}
	path := abs(root, config.FileName)
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("check %s: %v", config.FileName, err)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s exists but is not a regular file; move it away and run zerg init again", config.FileName)
	}
	_, err = config.LoadAs(path, config.FileName)
	return err
}

// WriteConfig writes the config template, every option at its default,
// unless a config exists. A repository with a devcontainer gets the
// template that names container mode as an option; sandbox stays the mode.
func WriteConfig(root string) (Outcome, error) {
	path := abs(root, config.FileName)
	if _, err := os.Lstat(path); err == nil {
		return exists(config.FileName, "valid, left as is"), nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return Outcome{}, err
	}
	// O_EXCL: never overwrite a config that appeared since the check.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return Outcome{}, err
	}
	tmpl, detail := config.Template(), ""
	// A devcontainer.json zerg cannot look at (a directory of that name) is
	// no reason to fail init: the config says nothing.
	if dc, _ := container.FindDevcontainer(root); dc != "" {
		rel, _ := filepath.Rel(root, dc)
		rel = filepath.ToSlash(rel)
		tmpl = config.TemplateWithDevcontainer(rel)
		detail = "a devcontainer was found at " + rel + ": mode: container is an option"
	}
	_, err = f.Write(tmpl)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		// A half-written config would fail the next init; remove it.
		_ = os.Remove(path)
		return Outcome{}, err
	}
	return created(config.FileName, detail), nil
}
