package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRealGoProjectDelivered rushes the benchmark's feature on the real Go
// module, fetched through the module proxy, and checks the promise without
// its timing: the run talked to the scripted model, its workers had no
// network, every task merged, and the module's full suite passes on the
// integration branch. It needs the pinned CLI (make claude) and the module
// proxy, nothing else.
func TestRealGoProjectDelivered(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dir, err := workDir()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeAll(dir) })
	tl, err := findTools(ctx, dir, "")
	if errors.Is(err, errNoClaude) {
		t.Skip("SKIPPED: " + err.Error())
	}
	if err != nil {
		t.Fatal(err)
	}
	p := goProject()
	repo, _, err := prepare(ctx, p, dir)
	if err != nil {
		t.Fatal(err)
	}
	r, err := rush(ctx, p, tl, repo, dir)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Delivered {
		t.Errorf("not delivered: state %s: %s", r.State, r.Reason)
		for _, a := range r.Attempts {
			if a.Class != "success" {
				t.Errorf("%s attempt %d: %s %s\n%s", a.Task, a.Attempt, a.Class, a.Reason, a.Detail)
			}
		}
		for _, g := range r.Gates {
			if g.Exit != 0 {
				t.Errorf("gate %s at level %d: exit %d\n%s", g.Name, g.Level, g.Exit, g.Output)
			}
		}
		t.Logf("zerg's stderr:\n%s", r.Stderr)
	}
	if !r.Rehearsal {
		t.Error("the run's report says it did not talk to the scripted model")
	}
	for _, task := range p.tasks {
		if r.ModelRequests[task.id] == 0 {
			t.Errorf("the scripted model answered no request for %s: %v", task.id, r.ModelRequests)
		}
	}
	if r.WorkerNetwork != "lo" {
		t.Errorf("a worker saw the network interfaces %q, want only lo", r.WorkerNetwork)
	}
	// The model's own go test runs, inside the workers: they built and
	// tested with the module's dependencies, offline.
	for _, task := range p.tasks {
		b, err := os.ReadFile(filepath.Join(repo, ".zerg", "runs", p.feature, "attempts", task.id, "1", "stream.jsonl"))
		if err != nil {
			t.Error(err)
			continue
		}
		if !strings.Contains(string(b), `ok  \tgithub.com/spf13/cast`) {
			t.Errorf("%s: no passing go test in the worker's transcript", task.id)
		}
	}
	s, err := checkIntegration(ctx, p, repo, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Missing) > 0 {
		t.Errorf("the integration branch lacks the feature's files %v", s.Missing)
	}
	if !s.Passed {
		t.Errorf("the module's suite (%s) fails on the integration branch:\n%s", s.Command, s.Output)
	}
}
