// Package e2ebin is what the end-to-end suites share before their first
// test: the repository's root, the pinned Claude Code CLI (missing is a
// failure, not a skip: make test installs it) and a zerg binary built once
// per suite.
package e2ebin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Tools is what a suite runs.
type Tools struct {
	Root   string // the repository's top level
	Zerg   string // zerg built from Root
	Claude string // ZERG_CLAUDE, else the pinned CLI of make claude
}

// Main is a suite's TestMain: it finds the tools, hands them to use, runs
// the tests and removes the built binary. suite names the suite in a
// failure ("e2e/rush").
func Main(m *testing.M, suite string, use func(Tools)) {
	code, err := run(m, use)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", suite, err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(m *testing.M, use func(Tools)) (int, error) {
	wd, err := os.Getwd()
	if err != nil {
		return 1, err
	}
	// Every suite is a directory two below the root (e2e/<suite>).
	t := Tools{Root: filepath.Dir(filepath.Dir(wd)), Claude: os.Getenv("ZERG_CLAUDE")}
	if t.Claude == "" {
		t.Claude = filepath.Join(t.Root, "tools", "claude", "node_modules", ".bin", "claude")
	}
	if _, err := os.Stat(t.Claude); err != nil {
		return 1, fmt.Errorf("the pinned Claude Code CLI is missing (%v): run make claude", err)
	}
	dir, err := os.MkdirTemp("", "zerg-e2e-bin-")
	if err != nil {
		return 1, err
	}
	defer os.RemoveAll(dir)
	// Workers run as an unprivileged user when the tests run as root: their
	// hook runs this binary, so its directory must be reachable.
	if err := os.Chmod(dir, 0o755); err != nil {
		return 1, err
	}
	t.Zerg = filepath.Join(dir, "zerg")
	cmd := exec.Command("go", "build", "-o", t.Zerg, "./cmd/zerg")
	cmd.Dir = t.Root
	if out, err := cmd.CombinedOutput(); err != nil {
		return 1, fmt.Errorf("build zerg: %v\n%s", err, out)
	}
	use(t)
	return m.Run(), nil
}

// Traversable lets other users (the worker user, when the tests run as
// root) pass through dir and the test's temporary parents, which Go
// creates 0700. Nothing becomes listable or writable to them.
func Traversable(t testing.TB, dir string) string {
	t.Helper()
	for d := dir; d != os.TempDir() && d != "/" && d != "."; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm()&0o001 == 0 {
			if err := os.Chmod(d, fi.Mode().Perm()|0o711); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

// Result is how a command a test ran ended: its exit code and output.
type Result struct {
	Code           int
	Stdout, Stderr string
}

// Command runs name with args in dir with exactly env, for at most
// timeout, and returns how it ended; a command that could not start (or
// was killed by the timeout) fails the test.
func Command(t testing.TB, timeout time.Duration, dir string, env []string, name string, args ...string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = env
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	r := Result{Stdout: so.String(), Stderr: se.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && ctx.Err() == nil:
		r.Code = ee.ExitCode()
	default:
		t.Fatalf("%s %v: %v\n%s%s", name, args, err, r.Stdout, r.Stderr)
	}
	return r
}

// Git runs git in dir as the tests' user (a fixed identity, no system
// config) and returns its trimmed output; a failure fails the test.
func Git(t testing.TB, dir string, env []string, args ...string) string {
	t.Helper()
	r := Command(t, 2*time.Minute, dir, append(env, "GIT_CONFIG_NOSYSTEM=1"), "git",
		append([]string{"-c", "user.name=Test", "-c", "user.email=t@example.invalid"}, args...)...)
	if r.Code != 0 {
		t.Fatalf("git %v: exit %d\n%s%s", args, r.Code, r.Stdout, r.Stderr)
	}
	return strings.TrimSpace(r.Stdout)
}
