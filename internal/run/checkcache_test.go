package run

import (
	"os"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/config"
)

func TestCheckReuse(t *testing.T) {
	cfg := config.Default()
	opts := Options{Config: cfg}
	cmds := []checkCommand{{CheckResult: CheckResult{What: "verification", Names: []string{"T1"}, Command: "go test ./..."}, timeout: time.Minute}}
	key := checkKey(opts, "base1", cmds)
	paths := Paths{RunDir: t.TempDir() + "/runs/f"}
	now := time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC)
	rep := &CheckReport{Feature: "f", Base: "base1", Results: []CheckResult{cmds[0].CheckResult}, DurationMS: 4200}

	if got := reusableCheck(paths, key, now); got != nil {
		t.Fatal("a check was reused before any ran")
	}
	rememberCheck(paths, key, rep, now)
	if fi, err := os.Stat(paths.CheckRecord()); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the record: %v %v, want a 0600 file", fi, err)
	}
	got := reusableCheck(paths, key, now.Add(59*time.Minute))
	if got == nil || got.ReusedFrom == nil || !got.ReusedFrom.Equal(now) || got.DurationMS != 4200 || len(got.Results) != 1 {
		t.Fatalf("the same check 59 minutes later: %+v, want the remembered report", got)
	}

	// Controls: each thing the outcome depends on, changed, runs the check.
	changed := map[string]string{
		"base":    checkKey(opts, "base2", cmds),
		"command": checkKey(opts, "base1", []checkCommand{{CheckResult: CheckResult{What: "verification", Names: []string{"T1"}, Command: "go test -race ./..."}, timeout: time.Minute}}),
		"timeout": checkKey(opts, "base1", []checkCommand{{CheckResult: cmds[0].CheckResult, timeout: time.Hour}}),
		"mode": func() string {
			o := opts
			o.Config.Mode = config.ModeSubprocess
			if o.Config.Mode == cfg.Mode {
				o.Config.Mode = config.ModeSandbox
			}
			return checkKey(o, "base1", cmds)
		}(),
		"env": func() string {
			o := opts
			o.Config.Env.Pass = append([]string{"ZERG_TEST_VAR"}, o.Config.Env.Pass...)
			return checkKey(o, "base1", cmds)
		}(),
		"gates": func() string {
			o := opts
			o.Config.Gates = append([]config.Gate{{Name: "lint", Command: "golangci-lint run"}}, o.Config.Gates...)
			return checkKey(o, "base1", cmds)
		}(),
	}
	for what, k := range changed {
		if k == key || reusableCheck(paths, k, now) != nil {
			t.Errorf("another %s reused the check", what)
		}
	}
	t.Setenv("PATH", "/nowhere")
	if checkKey(opts, "base1", cmds) == key {
		t.Error("another PATH gives the same key")
	}
	if reusableCheck(paths, key, now.Add(time.Hour)) != nil {
		t.Error("a check an hour old was reused")
	}
	if reusableCheck(paths, key, now.Add(-time.Minute)) != nil {
		t.Error("a check from the future (a clock set back) was reused")
	}

	// What does not shape the commands leaves the key alone.
	o := opts
	o.Config.Workers, o.Config.Budget.RunUSD = 7, 3
	if checkKey(o, "base1", cmds) != checkKey(opts, "base1", cmds) {
		t.Error("the worker count or the budget changed the key")
	}

	// A check that found a problem forgets the passing one.
	rememberCheck(paths, key, &CheckReport{Problems: 1}, now)
	if _, err := os.Stat(paths.CheckRecord()); !os.IsNotExist(err) {
		t.Fatalf("a failing check left the record: %v", err)
	}
}
