package fsx

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// Modes of what zerg keeps for itself: run logs, attempt records, the audit
// log. Nobody but zerg's own user reads them; they can hold a worker's
// output, and so whatever secret the worker printed.
const (
	PrivateDirMode  os.FileMode = 0o700
	PrivateFileMode os.FileMode = 0o600
)

// PrivateDir creates path and any missing parents like os.MkdirAll, with mode
// 0700 exactly (whatever the umask) for every directory it creates. A
// directory that already exists keeps its mode: PrivateDir never narrows a
// directory someone else made, such as the repository or a worker's state.
//
// Never use it on a directory a worker running as another user must reach
// (a workspace, the worker's HOME or its settings).
func PrivateDir(path string) error {
	path = filepath.Clean(path)
	// Find the missing directories, deepest first.
	var missing []string
	for p := path; ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err == nil {
			if !fi.IsDir() {
				return fmt.Errorf("create private dir %s: %s is not a directory", path, p)
			}
			break
		}
		if !os.IsNotExist(err) {
			return fmt.Errorf("create private dir %s: %w", path, err)
		}
		missing = append(missing, p)
		if parent := filepath.Dir(p); parent == p {
			break
		}
	}
	if err := os.MkdirAll(path, PrivateDirMode); err != nil {
		return fmt.Errorf("create private dir %s: %w", path, err)
	}
	// The umask may have taken bits off (0700 &^ 0200 = 0500 would leave
	// the directory unwritable); set the mode exactly. Another process may
	// have created one of them in between: chmod only what is ours.
	uid := os.Geteuid()
	for _, p := range missing {
		fi, err := os.Lstat(p)
		if err != nil {
			return fmt.Errorf("create private dir %s: %w", path, err)
		}
		if !fi.IsDir() || ownerOf(fi) != uid {
			continue
		}
		if err := os.Chmod(p, PrivateDirMode); err != nil {
			return fmt.Errorf("create private dir %s: %w", path, err)
		}
	}
	return nil
}

// WritePrivate replaces path with data atomically (see WriteFileAtomic), as
// a file of mode 0600, also when path existed with a wider mode.
func WritePrivate(path string, data []byte) error {
	if err := writeAtomic(path, data, PrivateFileMode, true); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// OpenPrivate is os.OpenFile(path, flag|os.O_CREATE, 0600) that also narrows
// an existing file of a wider mode to 0600, so a log an older zerg created
// world-readable stops being so the next time it is opened.
func OpenPrivate(path string, flag int) (*os.File, error) {
	f, err := os.OpenFile(path, flag|os.O_CREATE, PrivateFileMode)
	if err != nil {
		return nil, err
	}
	if err := narrow(f); err != nil {
		_ = f.Close() // nothing written yet; narrow's error is the one to report
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return f, nil
}

// CreatePrivate is os.Create with mode 0600: it creates or truncates path for
// writing, narrowing an existing file's mode to 0600.
func CreatePrivate(path string) (*os.File, error) {
	return OpenPrivate(path, os.O_RDWR|os.O_TRUNC)
}

// AppendPrivate opens path for appending (creating it 0600), narrowing an
// existing file's mode to 0600.
func AppendPrivate(path string) (*os.File, error) {
	return OpenPrivate(path, os.O_WRONLY|os.O_APPEND)
}

// Narrow takes every group and other permission bit off path (a file or a
// directory), when it has any, so that something an older zerg created
// world-readable becomes private. A missing path is not an error.
func Narrow(path string) error {
	fi, err := os.Stat(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("narrow the mode of %s: %w", path, err)
	}
	if fi.Mode().Perm()&0o077 == 0 {
		return nil
	}
	if err := os.Chmod(path, fi.Mode().Perm()&^0o077); err != nil {
		return fmt.Errorf("narrow the mode of %s: %w", path, err)
	}
	return nil
}

// narrow takes every group and other permission bit off f.
func narrow(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Mode().Perm()&0o077 == 0 {
		return nil
	}
	return f.Chmod(fi.Mode().Perm() &^ 0o077)
}

// ownerOf is the uid that owns fi, -1 when unknown.
func ownerOf(fi os.FileInfo) int {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid)
	}
	return -1
}
