package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// LoadAs reads and parses the config file at path like Load, naming it
// display in every message (the path as the user wrote or would write it).
// A missing file is an error wrapping fs.ErrNotExist that says zerg init
// creates it; a directory is refused before it is read.
func LoadAs(path, display string) (Config, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Config{}, fmt.Errorf("%s does not exist; run zerg init to create it: %w", display, fs.ErrNotExist)
	}
	if err != nil {
		return Config{}, fmt.Errorf("read %s: %v", display, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return Config{}, fmt.Errorf("%s is a directory, not a config file", display)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return Config{}, fmt.Errorf("read %s: %v", display, err)
	}
	return Parse(data, display)
}

// LoadRepo is the config of the repository at root: its FileName when there
// is one, the defaults when there is none (a repository zerg init has not
// set up yet still works). Messages name the file FileName.
func LoadRepo(root string) (Config, error) {
	path := filepath.Join(root, filepath.FromSlash(FileName))
	return orDefault(path, func() (Config, error) { return LoadAs(path, FileName) })
}

// Locate finds the config file a command reads: file (the --file flag)
// relative to cwd when given, else FileName at the repository root, which
// repoRoot looks up only then, so --file works outside a repository. display
// is the path as messages show it: file as given, or the repository's file
// relative to cwd when it can be.
func Locate(cwd, file string, repoRoot func() (string, error)) (path, display string, err error) {
	if file != "" {
		if filepath.IsAbs(file) {
			return file, file, nil
		}
		return filepath.Join(cwd, file), file, nil
	}
	root, err := repoRoot()
	if err != nil {
		return "", "", err
	}
	path = filepath.Join(root, filepath.FromSlash(FileName))
	display = path
	if rel, err := filepath.Rel(cwd, path); err == nil {
		display = rel
	}
	return path, display, nil
}
