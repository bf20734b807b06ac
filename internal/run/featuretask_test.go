package run

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const contextUsage = "zerg context FEATURE TASK"

func TestOnlyFeature(t *testing.T) {
	withRun := func(root string, features ...string) string {
		for _, f := range features {
			if err := os.MkdirAll(RunDirOf(root, f), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(RunDirOf(root, f), "events.jsonl"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return root
	}
	for _, c := range []struct {
		name, root, want, wantErr string
	}{
		{"one feature", repoWithFeatures(t, "auth"), "auth", ""},
		{"no feature", repoWithFeatures(t), "", "no feature in this repository: no .zerg/specs/<feature>/task-graph.json"},
		{"several features", repoWithFeatures(t, "auth", "shop"), "", "several features (auth, shop); name the feature: " + contextUsage},
		{"the only run among features", withRun(repoWithFeatures(t, "auth", "shop"), "shop"), "shop", ""},
		{"several runs", withRun(repoWithFeatures(t, "auth", "shop"), "auth", "shop"), "", "several runs (auth, shop); name the feature: " + contextUsage},
	} {
		got, err := OnlyFeature(c.root, contextUsage)
		if got != c.want || (err == nil) != (c.wantErr == "") || err != nil && (err.Error() != c.wantErr || !errors.Is(err, BadInput)) {
			t.Errorf("%s: %q, %v; want %q, %q", c.name, got, err, c.want, c.wantErr)
		}
	}
}

func TestFeatureTask(t *testing.T) {
	t.Setenv("ZERG_WORKSPACES", t.TempDir())
	root := repoWithFeatures(t, "shop")
	if err := os.RemoveAll(filepath.Join(root, ".git")); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "-C", root, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	ctx := context.Background()
	p, task, err := FeatureTask(ctx, root, []string{"cart"}, contextUsage)
	if err != nil || p.Feature != "shop" || task != "cart" || p.Graph != GraphFile(root, "shop") {
		t.Errorf("one argument: %+v %q %v", p, task, err)
	}
	if p, task, err = FeatureTask(ctx, root, []string{"shop", "cart"}, contextUsage); err != nil || p.Feature != "shop" || task != "cart" {
		t.Errorf("two arguments: %+v %q %v", p, task, err)
	}
	_, _, err = FeatureTask(ctx, root, []string{"other", "cart"}, contextUsage)
	if want := `unknown feature "other": no task graph at .zerg/specs/other/task-graph.json`; err == nil || err.Error() != want || !errors.Is(err, BadInput) {
		t.Errorf("a feature without a graph: %v, want %q", err, want)
	}
	if _, _, err = FeatureTask(ctx, root, []string{"../shop", "cart"}, contextUsage); !errors.Is(err, BadInput) {
		t.Errorf("not a feature name: %v", err)
	}
	if _, _, err = FeatureTask(ctx, t.TempDir(), []string{"cart"}, contextUsage); !errors.Is(err, BadInput) || !strings.Contains(err.Error(), "is not inside a git repository") {
		t.Errorf("outside a repository: %v", err)
	}
}
