package fsx

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
)

// The directories zerg keeps outside the repository (the workspaces' root,
// an agent's directory, the temporary directory its sockets and launchers
// go in) sit in places other accounts can write: /var/tmp, /tmp, a
// directory ZERG_WORKSPACES names. A name there that another account made
// first would be used as zerg's own: that account would read the
// workspaces and swap what zerg runs in. OwnDir is the one check for all of
// them.

// NotOwnError says why a directory is not zerg's own: one component of its
// path that another account could change, or that another account owns.
type NotOwnError struct {
	Dir     string // the directory zerg wanted
	Path    string // the component that fails
	Problem string // what is wrong with it, as the end of a sentence
}

func (e *NotOwnError) Error() string {
	return fmt.Sprintf("%s %s", e.Path, e.Problem)
}

// OwnDir makes dir a directory of zerg's own: every component that exists
// is checked, from / down, and every one that does not is created with
// mode (exactly, whatever the umask). A component passes when
//
//   - it is a directory owned by zerg's user or by root that neither its
//     group nor others may write, or a sticky one (/tmp, /var/tmp), in
//     which another account may not rename or remove what is not theirs;
//   - or it is a symlink owned by zerg's user or by root: it lies in a
//     directory that passed, so nobody else can change where it leads, and
//     what it leads to is checked the same way.
//
// dir itself (the last directory, symlinks resolved) must be owned by
// zerg's user and writable by nobody else, sticky or not. A component
// another account creates between the check and zerg's mkdir is found by
// the check after it. A failure is a *NotOwnError.
func OwnDir(dir string, mode os.FileMode) error {
	return walkOwn(dir, &mode, true)
}

// CheckOwnDir is OwnDir without creating anything: what exists of dir is
// checked, and a missing part is fine (OwnDir makes it later).
func CheckOwnDir(dir string) error {
	return walkOwn(dir, nil, true)
}

// checkSafeParent checks dir as OwnDir checks the directories above the one
// it wants: a sticky, world-writable dir such as /tmp passes.
func checkSafeParent(dir string) error {
	return walkOwn(dir, nil, false)
}

// MkdirTemp is os.MkdirTemp in the system's temporary directory (TMPDIR,
// else /tmp) once that has passed OwnDir's check of a parent: a fresh
// directory, mode 0700, that no other account can rename or replace.
func MkdirTemp(pattern string) (string, error) {
	tmp := os.TempDir()
	if err := checkSafeParent(tmp); err != nil {
		return "", fmt.Errorf("the temporary directory %s is not safe for zerg's files: %w; set TMPDIR to a directory only you can write", tmp, err)
	}
	return os.MkdirTemp(tmp, pattern)
}

// CreateTemp is os.CreateTemp in the system's temporary directory once it
// has passed the same check as MkdirTemp's.
func CreateTemp(pattern string) (*os.File, error) {
	tmp := os.TempDir()
	if err := checkSafeParent(tmp); err != nil {
		return nil, fmt.Errorf("the temporary directory %s is not safe for zerg's files: %w; set TMPDIR to a directory only you can write", tmp, err)
	}
	return os.CreateTemp(tmp, pattern)
}

// maxLinks bounds the symlinks one walk follows, as the kernel's ELOOP does.
const maxLinks = 40

// walkOwn checks dir component by component, creating what is missing
// with *mode when mode is not nil; strictLast holds dir itself to "zerg's
// user's, writable by nobody else".
func walkOwn(dir string, mode *os.FileMode, strictLast bool) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	uid := os.Geteuid()
	fail := func(p, problem string, a ...any) error {
		return &NotOwnError{Dir: abs, Path: p, Problem: fmt.Sprintf(problem, a...)}
	}
	check := func(p string, fi fs.FileInfo, last bool) error {
		owner := ownerOf(fi)
		if owner != uid && owner != 0 {
			return fail(p, "belongs to %s, not to %s, which zerg runs as", account(owner), account(uid))
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return nil
		}
		if !fi.IsDir() {
			return fail(p, "is not a directory")
		}
		writable := fi.Mode().Perm()&0o022 != 0
		if last && strictLast {
			if owner != uid {
				return fail(p, "belongs to %s, not to %s, which zerg runs as", account(owner), account(uid))
			}
			if writable {
				return fail(p, "may be written by other accounts (mode %s)", fi.Mode())
			}
			return nil
		}
		if writable && fi.Mode()&os.ModeSticky == 0 {
			return fail(p, "may be written by other accounts (mode %s), which could replace what is in it", fi.Mode())
		}
		return nil
	}
	root, err := os.Lstat("/")
	if err != nil {
		return err
	}
	if err := check("/", root, abs == "/"); err != nil {
		return err
	}
	todo := components(abs)
	cur, links := "/", 0
	for len(todo) > 0 {
		name := todo[0]
		todo = todo[1:]
		if name == ".." {
			cur = filepath.Dir(cur)
			continue
		}
		p := filepath.Join(cur, name)
		last := len(todo) == 0
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			if mode == nil {
				return nil // the rest is missing: made fresh later
			}
			if err := os.Mkdir(p, *mode); err == nil {
				// The umask may have taken bits off; nobody else can
				// swap p in between (its parent passed the check).
				if err := os.Chmod(p, *mode); err != nil {
					return err
				}
			} else if !errors.Is(err, fs.ErrExist) {
				return err
			}
			fi, err = os.Lstat(p)
		}
		if err != nil {
			return err
		}
		if err := check(p, fi, last); err != nil {
			return err
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			if links++; links > maxLinks {
				return fail(p, "leads through more than %d symlinks", maxLinks)
			}
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			if filepath.IsAbs(target) {
				cur = "/"
			}
			todo = append(components(target), todo...)
			continue
		}
		cur = p
	}
	return nil
}

// components splits a path into its names, ".." kept, "." and empty ones
// dropped.
func components(p string) []string {
	var out []string
	for _, c := range strings.Split(filepath.ToSlash(p), "/") {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

// account names a uid for a message: "uid 1001 (eve)".
func account(uid int) string {
	s := "uid " + strconv.Itoa(uid)
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		s += " (" + u.Username + ")"
	}
	return s
}
