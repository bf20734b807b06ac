// Package fsx holds small file-system helpers that must be crash-safe.
package fsx

import (
	"os"
	"path/filepath"
)

// WriteFileAtomic replaces path with data so that a crash leaves either the old
// or the new content, never a torn file: write a temporary file in the same
// directory, fsync it, rename it over path, fsync the directory. An existing
// file's permission bits are kept; a new file gets perm.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	if fi, err := os.Stat(path); err == nil {
		perm = fi.Mode().Perm()
	}
	return writeAtomic(path, data, perm, true)
}

// WriteFileAtomicMode is WriteFileAtomic giving the file exactly mode perm,
// whatever the umask and whatever mode the file it replaces had.
func WriteFileAtomicMode(path string, data []byte, perm os.FileMode) error {
	return writeAtomic(path, data, perm, true)
}

// WriteCacheFile replaces path with data, mode perm, so that a concurrent
// reader sees the old or the new content, never half: WriteFileAtomicMode
// without the fsyncs. Only for a cache whose entries are checked when read
// and rebuilt when missing or wrong (the Go build cache checks each
// output's size): after a crash an entry may be lost or empty, which such a
// cache survives, and two fsyncs per entry would slow every build.
func WriteCacheFile(path string, data []byte, perm os.FileMode) error {
	return writeAtomic(path, data, perm, false)
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

// syncFile is (*os.File).Sync; a test records the calls.
var syncFile = (*os.File).Sync

// writeAtomic is the one write-temp-then-rename of zerg: every other
// package calls one of the functions above. The new file gets exactly mode
// perm. With durable, the temporary file is fsynced before the rename and
// the directory after it:
//   - without the first, a file system may put the rename on disk before
//     the data (ext4's delayed allocation, XFS), so a crash can leave path
//     empty or torn, the one state the rename is there to prevent;
//   - the rename is a change of the directory, so until the directory is
//     synced a crash can bring back the old file (or none) after the caller
//     was told the new one was written and went on (an audit anchor, the
//     cluster's auth file, a task graph the user fixed).
//
// A durable write, being one of zerg's records, waits for room when the disk
// is full (WaitForRoom); a failed try leaves no temporary file behind.
func writeAtomic(path string, data []byte, perm os.FileMode, durable bool) error {
	if durable {
		return WaitForRoom(func() error { return writeAtomicOnce(path, data, perm, true) })
	}
	return writeAtomicOnce(path, data, perm, false)
}

func writeAtomicOnce(path string, data []byte, perm os.FileMode, durable bool) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, tempPrefix(path)+"*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			_ = tmp.Close() // on the failure path: the temporary file is removed next
			os.Remove(name)
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		return err
	}
	if durable {
		if err := syncFile(tmp); err != nil {
			return err
		}
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(name, path); err != nil {
		return err
	}
	ok = true
	if !durable {
		return nil
	}
	if d, err := os.Open(dir); err == nil {
		_ = syncFile(d) // best effort: not every file system can sync a directory
		_ = d.Close()   // a directory opened read-only
	}
	return nil
}
