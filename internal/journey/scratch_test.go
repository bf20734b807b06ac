package journey

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/security"
)

// The scratch directory is made once, passable but not listable by the
// worker user, and goes with Close.
func TestScratchDir(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	s := NewScratch("auth")
	dir, err := s.Dir()
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := s.Dir(); again != dir {
		t.Errorf("a second directory %s after %s", again, dir)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o711 || filepath.Base(dir)[:10] != "zerg-auth-" {
		t.Errorf("%s: %v %v", dir, fi, err)
	}
	s.Close()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("still there after Close: %v", err)
	}
}

func TestCopyIn(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "requirements.md")
	if err := os.WriteFile(src, []byte("want"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "ws", DraftDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := CopyIn(src, filepath.Join(dir, "ws"), "requirements.md"); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(DraftPath(filepath.Join(dir, "ws"), "requirements.md")); err != nil || string(b) != "want" {
		t.Errorf("copied %q, %v", b, err)
	}
}

// A repository without a commit is bad input for Head; one with a commit
// is cloned at it, with the draft dir, into the scratch.
func TestHeadAndClone(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("SKIPPED: no git")
	}
	t.Setenv("TMPDIR", t.TempDir())
	ctx := context.Background()
	root := t.TempDir()
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", root, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	repo, err := gitx.OpenRepo(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Head(ctx, repo, root); !errors.Is(err, run.BadInput) {
		t.Fatalf("no commit: %v", err)
	}
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "a.txt")
	git("commit", "-q", "-m", "a")
	head, err := Head(ctx, repo, root)
	if err != nil {
		t.Fatal(err)
	}
	s := NewScratch("auth")
	defer s.Close()
	ws, err := s.Clone(ctx, repo, head)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(ws, "a.txt"), filepath.Join(ws, DraftDir)} {
		if _, err := os.Stat(p); err != nil {
			t.Error(err)
		}
	}
}

// A claude or a scenario that is not there is bad input; the real API's
// and the worker user's errors come back as they are; the sessions get
// the binary, the API, the user and a state dir in the scratch.
func TestConnect(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	dir := t.TempDir()
	bin := filepath.Join(dir, "claude")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Claude.Path = filepath.Join(dir, "none")
	api := func() (claude.APISettings, error) { return claude.APISettings{APIKey: "k"}, nil }
	runAs := func() (*security.WorkerUser, error) { return nil, nil }
	s := NewScratch("auth")
	defer s.Close()
	if _, err := s.Connect(cfg, Connection{API: api, RunAs: runAs}); !errors.Is(err, run.BadInput) {
		t.Errorf("no claude: %v", err)
	}
	cfg.Claude.Path = bin
	if _, err := s.Connect(cfg, Connection{Rehearse: true, SpecDir: dir, API: api, RunAs: runAs}); !errors.Is(err, run.BadInput) {
		t.Errorf("no scenario: %v", err)
	}
	bad := errors.New("no key")
	if _, err := s.Connect(cfg, Connection{API: func() (claude.APISettings, error) { return claude.APISettings{}, bad }, RunAs: runAs}); !errors.Is(err, bad) {
		t.Errorf("the API's error: %v", err)
	}
	m, err := s.Connect(cfg, Connection{ZergBinary: "/z", API: api, RunAs: runAs})
	if err != nil {
		t.Fatal(err)
	}
	sdir, _ := s.Dir()
	if m.Base.Binary != bin || m.Base.Hook.ZergBinary != "/z" || m.Base.API.APIKey != "k" || m.StateDir != filepath.Join(sdir, "state") || m.MaxTurns != cfg.Budget.MaxTurns {
		t.Errorf("sessions with %+v", m)
	}
}

// A bad feature name, a scenario without a rehearsal or no repository is
// bad input before the config is read; the config's error comes back as it
// is; from a subdirectory the project is the repository's top.
func TestOpen(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("SKIPPED: no git")
	}
	ctx := context.Background()
	root := t.TempDir()
	if out, err := exec.Command("git", "-C", root, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	loaded := false
	load := func(string) (config.Config, error) { loaded = true; return config.Default(), nil }
	if _, err := Open(ctx, root, "../x", false, "", load); !errors.Is(err, run.BadInput) || loaded {
		t.Errorf("a bad name: %v (config read: %v)", err, loaded)
	}
	if _, err := Open(ctx, root, "auth", false, "s.yaml", load); !errors.Is(err, run.BadInput) || err.Error() != "--scenario needs --rehearse" || loaded {
		t.Errorf("a scenario without --rehearse: %v (config read: %v)", err, loaded)
	}
	bad := errors.New("bad config")
	if _, err := Open(ctx, root, "auth", false, "", func(string) (config.Config, error) { return config.Config{}, bad }); !errors.Is(err, bad) {
		t.Errorf("the config's error: %v", err)
	}
	if _, err := Open(ctx, t.TempDir(), "auth", false, "", load); !errors.Is(err, run.BadInput) || !strings.Contains(err.Error(), "is not inside a git repository") {
		t.Errorf("outside a repository: %v", err)
	}
	sub := filepath.Join(root, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	root, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Open(ctx, sub, "auth", true, "s.yaml", load)
	if err != nil {
		t.Fatal(err)
	}
	if p.Root != root || p.Feature != "auth" || p.SpecDir != run.SpecDir(root, "auth") || p.Repo == nil || p.Config.Mode == "" {
		t.Errorf("project %+v", p)
	}
}
