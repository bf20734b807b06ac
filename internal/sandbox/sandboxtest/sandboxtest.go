// Package sandboxtest holds what tests of sandboxes need: a real zerg binary
// (the test binary cannot be the sandbox's init) and an unprivileged user to
// launch bwrap as.
package sandboxtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// UserName is the unprivileged account sandbox tests run as.
const UserName = "zerg-sbx-test"

// BuildZerg builds ./cmd/zerg of this module into a new directory every
// user can enter (the sandbox's user binds it), and returns the binary and
// a function removing it.
func BuildZerg() (string, func(), error) {
	root, err := moduleRoot()
	if err != nil {
		return "", nil, err
	}
	dir, err := os.MkdirTemp("", "zerg-sbx-bin-")
	if err != nil {
		return "", nil, err
	}
	cleanup := func() { os.RemoveAll(dir) }
	if err := os.Chmod(dir, 0o755); err != nil {
		cleanup()
		return "", nil, err
	}
	bin := filepath.Join(dir, "zerg")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/zerg")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("build zerg: %v\n%s", err, out)
	}
	return bin, cleanup, nil
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// User returns the uid and gid to launch test sandboxes as. As root it is
// UserName, created with useradd when missing (CI runs as root); otherwise
// 0, 0: the sandbox runs as the tests' own user.
func User() (uid, gid int, err error) {
	if os.Geteuid() != 0 {
		return 0, 0, nil
	}
	if _, err := user.Lookup(UserName); err != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, "useradd", "--system", "--user-group", "--no-create-home",
			"--shell", "/usr/sbin/nologin", UserName).CombinedOutput()
		// Exit 9: a parallel test binary created it first.
		if err != nil && !strings.Contains(string(out), "already exists") {
			return 0, 0, fmt.Errorf("useradd %s: %v: %s", UserName, err, out)
		}
	}
	u, err := user.Lookup(UserName)
	if err != nil {
		return 0, 0, err
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	if uid == 0 || gid == 0 {
		return 0, 0, fmt.Errorf("%s has uid %d gid %d", UserName, uid, gid)
	}
	return uid, gid, nil
}

// Open makes dir and its parents up to the temporary directory enterable by
// every user (Go creates test directories 0700), so the sandbox's user can
// reach what a test puts there. Nothing becomes listable or writable.
func Open(dir string) error {
	for d := dir; d != os.TempDir() && d != "/" && d != "."; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&0o001 == 0 {
			if err := os.Chmod(d, fi.Mode().Perm()|0o711); err != nil {
				return err
			}
		}
	}
	return nil
}

// Root is a directory for one test outside the sandbox's own tmpfs mounts
// (/tmp, /home, /root, /run, /var/tmp): there, what a sandbox sees is
// decided by its Spec alone. As root (CI) it is under /var/lib; otherwise
// the test's temporary directory, where Hide cannot fail.
func Root(t testing.TB) string {
	t.Helper()
	var root string
	if os.Geteuid() == 0 {
		d, err := os.MkdirTemp("/var/lib", "zerg-sbx-test-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		root = d
	} else {
		root = t.TempDir()
	}
	if err := os.Chmod(root, 0o711); err != nil {
		t.Fatal(err)
	}
	if err := Open(root); err != nil {
		t.Fatal(err)
	}
	return root
}
