// Package fsx holds small file-system helpers that must be crash-safe.
package fsx

import (
	"os"
	"path/filepath"
)

// WriteFileAtomic replaces path with data so that a crash leaves either the old
// or the new content, never a torn file: write a temporary file in the same
// directory, fsync it, rename it over path, fsync the directory. An existing
// file's permission bits are kept.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	if fi, err := os.Stat(path); err == nil {
		perm = fi.Mode().Perm()
	}
	return writeAtomic(path, data, perm)
}

// RemoveStaleTemps removes the temporary files an interrupted atomic write of
// path left behind (a kill between creating one and renaming it). Only a
// caller that knows no write of path is under way may call it: the holder
// of the lock that serialises those writes.
func RemoveStaleTemps(path string) error {
	stale, err := filepath.Glob(filepath.Join(filepath.Dir(path), tempPrefix(path)+"*"))
	if err != nil {
		return err
	}
	for _, f := range stale {
		if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	return nil
}

// tempPrefix names the temporary files of path's atomic writes: hidden,
// beside it.
func tempPrefix(path string) string { return "." + filepath.Base(path) + ".tmp-" }

// writeAtomic is WriteFileAtomic giving the new file exactly mode perm.
func writeAtomic(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, tempPrefix(path)+"*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(name)
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(name, path); err != nil {
		return err
	}
	ok = true
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // best effort: not every file system supports it
		d.Close()
	}
	return nil
}
