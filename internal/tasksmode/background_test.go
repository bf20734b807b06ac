package tasksmode

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/runstate"
)

// The background coordinator is zerg rush FEATURE --mode tasks (--resume
// for a run that exists) in the repository, its output in the run's
// directory; a run with no log yet is not started.
func TestBackground(t *testing.T) {
	dir := t.TempDir()
	zerg := filepath.Join(dir, "zerg")
	if err := os.WriteFile(zerg, []byte("#!/bin/sh\necho \"$@\" in \"$(pwd)\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, "repo")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	p := run.Paths{Feature: "auth", RunDir: filepath.Join(dir, "runs", "auth"), Events: filepath.Join(dir, "runs", "auth", "events.jsonl")}
	b := Background{Root: root, Feature: "auth", Paths: p, Zerg: zerg}
	if v, err := b.Inspect(); err != nil || v.State != runstate.RunNotStarted || v.Feature != "auth" {
		t.Fatalf("no log: %+v, %v", v, err)
	}
	if b.Starting() {
		t.Fatal("starting before anything started")
	}
	exited, err := b.Start(true)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-exited; err != nil {
		t.Fatal(err)
	}
	out, err := os.ReadFile(RushLog(p))
	if err != nil {
		t.Fatal(err)
	}
	resolved, _ := filepath.EvalSymlinks(root)
	if got := strings.TrimSpace(string(out)); got != "rush auth --mode tasks --yes --resume in "+root && got != "rush auth --mode tasks --yes --resume in "+resolved {
		t.Errorf("log %q", got)
	}
	if b.Starting() {
		t.Error("a coordinator that exited is still starting")
	}
}

func TestLogTail(t *testing.T) {
	if got := LogTail(filepath.Join(t.TempDir(), "none"), 2); got != "(no output)" {
		t.Errorf("no file: %q", got)
	}
	f := filepath.Join(t.TempDir(), "log")
	if err := os.WriteFile(f, []byte("a\nb\nc\n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := LogTail(f, 2); got != "b | c" {
		t.Errorf("tail %q", got)
	}
}
