package run

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/config"
)

// hookCheckRepo is a repository holding a graph whose T1 owns src/a.go,
// with the config body (none when "").
func hookCheckRepo(t *testing.T, configBody string) (repo, graph string) {
	t.Helper()
	repo = t.TempDir()
	for _, d := range []string{".git", ".zerg", "src"} {
		if err := os.MkdirAll(filepath.Join(repo, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	graph = filepath.Join(repo, "task-graph.json")
	g := `{"feature":"f","tasks":[{"id":"T1","title":"one","level":1,"files":{"create":["src/a.go"],"modify":[],"read":[]},"verification":{"command":"go test ./..."}}]}`
	if err := os.WriteFile(graph, []byte(g), 0o644); err != nil {
		t.Fatal(err)
	}
	if configBody != "" {
		if err := os.WriteFile(ConfigFile(repo), []byte(configBody), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return repo, graph
}

func hookCheckGetwd(dir string) func() (string, error) {
	return func() (string, error) { return dir, nil }
}

func hookCheckZerg() (string, error) { return "/opt/zerg/bin/zerg", nil }

// Open takes the flags as rush would: the graph's repository's config and
// its mode, the current directory as the workspace, relative flags from it;
// --mode wins over the config's.
func TestHookCheckOpen(t *testing.T) {
	repo, graph := hookCheckRepo(t, "version: 1\nmode: subprocess\nworker_policy:\n  deny_commands: [gofmt]\n")
	c, err := HookCheck{Graph: graph, Task: "T1", Getwd: hookCheckGetwd(repo), Zerg: hookCheckZerg}.Open()
	if err != nil {
		t.Fatal(err)
	}
	if c.Workspace != repo || !slices.Equal(c.Policy.Allow, []string{"src/a.go"}) || c.Policy.Bash.Sandboxed ||
		!slices.Contains(c.Policy.Bash.Deny, "gofmt") {
		t.Errorf("workspace %s, policy allow %q, bash %+v; want the repository, T1's file, the config's subprocess mode and deny list",
			c.Workspace, c.Policy.Allow, c.Policy.Bash)
	}
	if _, err := os.Stat(filepath.Join(c.dir, "policy.json")); err != nil {
		t.Errorf("no policy.json in the attempt's directory: %v", err)
	}
	c.Close()
	if _, err := os.Stat(c.dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Close left %s: %v", c.dir, err)
	}

	// A relative --workspace and --config are taken from the current
	// directory; --mode wins; the other config has no deny list.
	other := filepath.Join(repo, "other.yaml")
	if err := os.WriteFile(other, []byte("version: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err = HookCheck{Graph: graph, Task: "T1", Mode: config.ModeSandbox, Workspace: "src", Config: "other.yaml",
		Getwd: hookCheckGetwd(repo), Zerg: hookCheckZerg}.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Workspace != filepath.Join(repo, "src") || !c.Policy.Bash.Sandboxed || slices.Contains(c.Policy.Bash.Deny, "gofmt") {
		t.Errorf("workspace %s, bash %+v; want src, sandboxed, the other config's policy", c.Workspace, c.Policy.Bash)
	}

	// A graph outside a repository gets zerg's defaults: sandbox mode.
	loose := filepath.Join(t.TempDir(), "g.json")
	data, _ := os.ReadFile(graph)
	if err := os.WriteFile(loose, data, 0o644); err != nil {
		t.Fatal(err)
	}
	c2, err := HookCheck{Graph: loose, Task: "T1", Getwd: hookCheckGetwd(repo), Zerg: hookCheckZerg}.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if !c2.Policy.Bash.Sandboxed {
		t.Errorf("no config: bash %+v, want the default sandbox mode", c2.Policy.Bash)
	}
}

// What the user got wrong is bad input, one line, and nothing is left
// behind; the current directory and the zerg binary are not asked before
// the flags are checked.
func TestHookCheckOpenRefuses(t *testing.T) {
	repo, graph := hookCheckRepo(t, "")
	_, tasksGraph := hookCheckRepo(t, "version: 1\nmode: tasks\n")
	_, badConfig := hookCheckRepo(t, "version: 1\nmode: nope\n")
	invalid := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(invalid, []byte(`{"feature":"f","tasks":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	noWd := func() (string, error) { t.Error("the current directory was asked"); return repo, nil }
	noZerg := func() (string, error) { return "", errors.New("no executable") }
	cases := []struct {
		name string
		h    HookCheck
		want string
	}{
		{"no graph", HookCheck{Task: "T1", Getwd: noWd}, "hook check needs --graph FILE (the task graph)"},
		{"no task", HookCheck{Graph: graph, Getwd: noWd}, "hook check needs --task ID (a task of the graph)"},
		{"tasks mode", HookCheck{Graph: graph, Task: "T1", Mode: "tasks", Getwd: noWd}, "--mode tasks: tasks mode's workers are subagents"},
		{"unknown mode", HookCheck{Graph: graph, Task: "T1", Mode: "vm", Getwd: noWd}, "--mode vm: use --mode sandbox, container or subprocess"},
		{"missing workspace", HookCheck{Graph: graph, Task: "T1", Workspace: "nope"}, "--workspace " + filepath.Join(repo, "nope") + " is not a directory"},
		{"unknown task", HookCheck{Graph: graph, Task: "T9"}, `: no task "T9" (its tasks: T1)`},
		{"missing graph", HookCheck{Graph: filepath.Join(repo, "nope.json"), Task: "T1"}, "nope.json"},
		{"invalid graph", HookCheck{Graph: invalid, Task: "T1"}, "invalid task graph (1 error; the first: "},
		{"config's mode is tasks", HookCheck{Graph: tasksGraph, Task: "T1"}, "the config's mode is tasks"},
		{"invalid config", HookCheck{Graph: badConfig, Task: "T1"}, "config.yaml"},
		{"missing --config", HookCheck{Graph: graph, Task: "T1", Config: "nope.yaml"}, "nope.yaml"},
		{"no zerg binary", HookCheck{Graph: graph, Task: "T1", Zerg: noZerg}, "task T1: no executable"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := tc.h
			if h.Getwd == nil {
				h.Getwd = hookCheckGetwd(repo)
			}
			if h.Zerg == nil {
				h.Zerg = hookCheckZerg
			}
			c, err := h.Open()
			if err == nil {
				c.Close()
				t.Fatal("accepted")
			}
			var e *Error
			if !errors.As(err, &e) || e.Kind != BadInput {
				t.Errorf("%v (%T), want an *Error of kind BadInput", err, err)
			}
			if msg := err.Error(); !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") {
				t.Errorf("%q, want one line containing %q", msg, tc.want)
			}
		})
	}
	// The current directory's error is passed on as it is.
	wdErr := errors.New("getwd failed")
	if _, err := (HookCheck{Graph: graph, Task: "T1", Getwd: func() (string, error) { return "", wdErr }}).Open(); !errors.Is(err, wdErr) || errors.Is(err, BadInput) {
		t.Errorf("getwd: %v, want its error, not bad input", err)
	}
}
