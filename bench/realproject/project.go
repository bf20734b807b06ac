package main

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// feature holds the code the scripted model writes, one directory per
// language. It is this repository's own code; the project it is added to is
// fetched at run time.
//
//go:embed testdata
var feature embed.FS

// project is a real open-source project fetched at run time, and a feature of
// three tasks in two levels to add to it.
type project struct {
	lang    string
	name    string // what was fetched, for the report: "github.com/spf13/cast v1.7.1"
	source  string // how: "the Go module proxy", "the npm registry"
	feature string // the feature's name: a branch and directory name
	// fetch fills dir (which exists and is empty) with the project's source.
	fetch func(ctx context.Context, dir string) error
	// deps puts the project's dependencies into the user's own caches, as a
	// person who works on the project has them (nil: it has none).
	deps   func(ctx context.Context, dir string) error
	tasks  []task
	gates  []gate
	suite  string // the project's full suite, run on the integration branch
	ignore []string
}

// task is one task of the graph and the scripted model's work on it.
type task struct {
	id, title, description string
	level                  int
	deps                   []string
	create                 []string // files it writes, from testdata/<lang>/
	read                   []string // files of its dependencies it reads first
	try                    string   // what the model runs after writing its files
	edit                   edit     // then it reads one file and fixes it
	verify                 string   // the task's verification command
	netProbe               bool     // it also prints the network interfaces it sees
}

// edit: the model first writes the file with old where the final code has
// new, and then edits old into new, as a model refining its first draft.
type edit struct{ file, old, new string }

type gate struct{ name, command string }

// netProbe prints the network interfaces of the process's network namespace
// (/proc/net follows it); a worker with no network sees only lo. It opens no
// connection.
const netProbe = `printf 'net-devices:%s\n' "$(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | paste -sd, -)"`

// final is the content a task's file has when the task is done.
func (p *project) final(file string) (string, error) {
	b, err := fs.ReadFile(feature, path.Join("testdata", p.lang, file))
	return string(b), err
}

// draft is what the model writes first: the final content with the edit undone.
func (p *project) draft(t task, file string) (string, error) {
	s, err := p.final(file)
	if err != nil || file != t.edit.file {
		return s, err
	}
	if strings.Count(s, t.edit.new) != 1 {
		return "", fmt.Errorf("task %s: the edit's new text must occur once in %s", t.id, file)
	}
	return strings.Replace(s, t.edit.new, t.edit.old, 1), nil
}

// sortedTasks: level order, then id, the order a person would do them in.
func (p *project) sortedTasks() []task {
	ts := append([]task(nil), p.tasks...)
	sort.SliceStable(ts, func(i, j int) bool {
		if ts[i].level != ts[j].level {
			return ts[i].level < ts[j].level
		}
		return ts[i].id < ts[j].id
	})
	return ts
}

func (p *project) levels() int {
	n := 0
	for _, t := range p.tasks {
		n = max(n, t.level)
	}
	return n
}

// writeFeature writes the task graph, the scenario and the config into the
// project at dir, and the lines zerg keeps out of git into its .gitignore.
func (p *project) writeFeature(dir string) error {
	spec := filepath.Join(dir, ".zerg", "specs", p.feature)
	if err := os.MkdirAll(spec, 0o755); err != nil {
		return err
	}
	graph, err := p.graph()
	if err != nil {
		return err
	}
	sc, err := p.scenario()
	if err != nil {
		return err
	}
	files := map[string][]byte{
		filepath.Join(spec, "task-graph.json"):     graph,
		filepath.Join(spec, "scenario.yaml"):       sc,
		filepath.Join(dir, ".zerg", "config.yaml"): []byte(p.config()),
	}
	for f, b := range files {
		if err := os.WriteFile(f, b, 0o644); err != nil {
			return err
		}
	}
	gi := filepath.Join(dir, ".gitignore")
	old, err := os.ReadFile(gi)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	add := append([]string{".zerg/runs/", ".zerg/cache/", ".zerg/audit.jsonl*"}, p.ignore...)
	text := string(old)
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return os.WriteFile(gi, []byte(text+strings.Join(add, "\n")+"\n"), 0o644)
}

func (p *project) graph() ([]byte, error) {
	type files struct {
		Create []string `json:"create"`
		Modify []string `json:"modify"`
		Read   []string `json:"read"`
	}
	type verification struct {
		Command        string `json:"command"`
		TimeoutSeconds int    `json:"timeout_seconds"`
	}
	type gtask struct {
		ID           string       `json:"id"`
		Title        string       `json:"title"`
		Description  string       `json:"description"`
		Level        int          `json:"level"`
		Dependencies []string     `json:"dependencies"`
		Files        files        `json:"files"`
		Verification verification `json:"verification"`
		Estimate     int          `json:"estimate_minutes"`
	}
	g := struct {
		Feature string  `json:"feature"`
		Tasks   []gtask `json:"tasks"`
	}{Feature: p.feature}
	for _, t := range p.tasks {
		g.Tasks = append(g.Tasks, gtask{
			ID: t.id, Title: t.title, Description: t.description, Level: t.level,
			Dependencies: append([]string{}, t.deps...),
			Files:        files{Create: t.create, Modify: []string{}, Read: append([]string{}, t.read...)},
			Verification: verification{Command: t.verify, TimeoutSeconds: 300},
			Estimate:     10,
		})
	}
	return json.MarshalIndent(g, "", "  ")
}

// scenario is the scripted model (docs/mockapi.md), as JSON, which is YAML.
// For each task it does what a model does: read what the dependencies made,
// write the code and its tests, run them, read and fix one file, run the
// task's own check, and say it is done.
func (p *project) scenario() ([]byte, error) {
	type tool struct {
		Name  string         `json:"name"`
		Input map[string]any `json:"input"`
	}
	type turn struct {
		Text  string `json:"text,omitempty"`
		Tools []tool `json:"tools,omitempty"`
	}
	type stask struct {
		Name  string `json:"name"`
		Match string `json:"match"`
		Turns []turn `json:"turns"`
	}
	bash := func(cmd, desc string) tool {
		return tool{Name: "Bash", Input: map[string]any{"command": cmd, "description": desc}}
	}
	sc := struct {
		Title string         `json:"title"`
		Usage map[string]int `json:"usage"`
		Tasks []stask        `json:"tasks"`
	}{Title: p.feature, Usage: map[string]int{"input_tokens": 3000, "output_tokens": 400}}
	for _, t := range p.tasks {
		st := stask{Name: t.id, Match: "Task " + t.id + ":"}
		if len(t.read) > 0 {
			var reads []tool
			for _, f := range t.read {
				reads = append(reads, tool{Name: "Read", Input: map[string]any{"file_path": f}})
			}
			st.Turns = append(st.Turns, turn{Tools: reads})
		}
		for _, f := range t.create {
			content, err := p.draft(t, f)
			if err != nil {
				return nil, err
			}
			st.Turns = append(st.Turns, turn{Tools: []tool{{Name: "Write", Input: map[string]any{"file_path": f, "content": content}}}})
		}
		if t.netProbe {
			st.Turns = append(st.Turns, turn{Tools: []tool{bash(netProbe, "Which network this sandbox has")}})
		}
		st.Turns = append(st.Turns,
			turn{Tools: []tool{bash(t.try, "Run the new tests")}},
			turn{Tools: []tool{{Name: "Read", Input: map[string]any{"file_path": t.edit.file}}}},
			turn{Tools: []tool{{Name: "Edit", Input: map[string]any{"file_path": t.edit.file, "old_string": t.edit.old, "new_string": t.edit.new}}}},
			turn{Tools: []tool{bash(t.verify, "Run the task's verification")}},
			turn{Text: fmt.Sprintf("Done: %s (%s); `%s` passes.", t.title, strings.Join(t.create, ", "), t.verify)},
		)
		sc.Tasks = append(sc.Tasks, st)
	}
	return json.MarshalIndent(sc, "", "  ")
}

// config: the project's gates, sandbox mode (no network for workers), two
// workers (the widest level has two tasks). The scripted model writes correct
// code the first time, so a task retry could only repeat an environment
// failure: none are allowed, and a failure shows at once.
func (p *project) config() string {
	var b strings.Builder
	b.WriteString("# zerg bench/realproject: the feature's run.\nversion: 1\nworkers: 2\nmode: sandbox\n")
	b.WriteString("retry:\n  task_retries: 0\n  infra_backoff_initial: 1s\n  infra_backoff_max: 5s\n")
	b.WriteString("security_rules:\n  enabled: false\n")
	b.WriteString("gates:\n")
	for _, g := range p.gates {
		fmt.Fprintf(&b, "  - name: %s\n    command: %q\n    timeout: 10m\n", g.name, g.command)
	}
	return b.String()
}

// applyDraft writes the task's files as the scripted model first writes them.
func (p *project) applyDraft(t task, dir string) error {
	for _, f := range t.create {
		s, err := p.draft(t, f)
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, []byte(s), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// applyTask writes the task's files as they are when it is done.
func (p *project) applyTask(t task, dir string) error {
	for _, f := range t.create {
		s, err := p.final(f)
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, []byte(s), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// ---- running things ----

// sh runs command with sh -c in dir, with the user's environment.
func sh(ctx context.Context, dir, command string, env []string) (string, time.Duration, error) {
	cmd := exec.CommandContext(ctx, "sh", "-c", command)
	cmd.Dir = dir
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	return out.String(), time.Since(start), err
}

func runCmd(ctx context.Context, dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, tail(errb.String()+out.String(), 40))
	}
	return out.String(), nil
}

func git(ctx context.Context, dir string, args ...string) (string, error) {
	args = append([]string{"-c", "user.name=zerg bench", "-c", "user.email=bench@zerg.invalid", "-c", "commit.gpgsign=false"}, args...)
	out, err := runCmd(ctx, dir, append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1"), "git", args...)
	return strings.TrimSpace(out), err
}

// environ is the user's environment with the given variables set (replaced).
func environ(set ...string) []string {
	names := map[string]bool{}
	for _, kv := range set {
		n, _, _ := strings.Cut(kv, "=")
		names[n] = true
	}
	var env []string
	for _, kv := range os.Environ() {
		n, _, _ := strings.Cut(kv, "=")
		if !names[n] {
			env = append(env, kv)
		}
	}
	return append(env, set...)
}

// tail: the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// removeAll removes dir even where the Go module cache made directories
// read-only.
func removeAll(dir string) error {
	if os.RemoveAll(dir) == nil {
		return nil
	}
	// Best effort: the RemoveAll below reports what is left.
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o755)
		}
		return nil
	})
	return os.RemoveAll(dir)
}
