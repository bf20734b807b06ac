package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// realProject is bench/realproject's Go project (github.com/spf13/cast with
// a feature of three tasks in two levels that add real code and tests). Its
// setup is that benchmark's own: it runs once with -keep (fetch through the
// module proxy, dependencies into the user's module cache, the feature's
// graph, scenario and zerg config committed), and every run here starts
// from a clone of the repository it kept. The scenario's turns (reads,
// writes, go test runs, an edit) are kept; each gets a drawn think time and
// output token count like the synthetic graphs'.
type realProject struct {
	keep    string // the kept directory, removed at the end
	repo    string
	feature string
	tasks   []task
	base    map[string][]scTurn
}

func setupRealProject(ctx context.Context, root, zerg string, log io.Writer) (*realProject, error) {
	fmt.Fprintln(log, "speedup: realproject: setting up with go run ./bench/realproject -lang go -keep (its own timed run included)")
	cmd := exec.CommandContext(ctx, "go", "run", "./bench/realproject", "-lang", "go", "-keep", "-json", "-zerg", zerg)
	cmd.Dir = root
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	runErr := cmd.Run()
	var res struct {
		Dir     string `json:"dir"`
		Feature string `json:"feature"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || res.Dir == "" {
		return nil, fmt.Errorf("bench/realproject -keep: %v %v\n%s", runErr, err, tail(errb.String(), 20))
	}
	rp := &realProject{keep: res.Dir, repo: filepath.Join(res.Dir, "repo"), feature: res.Feature}
	spec := filepath.Join(rp.repo, ".zerg", "specs", rp.feature)
	var g struct {
		Tasks []struct {
			ID    string   `json:"id"`
			Level int      `json:"level"`
			Deps  []string `json:"dependencies"`
			Files struct {
				Create []string `json:"create"`
			} `json:"files"`
		} `json:"tasks"`
	}
	if err := readJSON(filepath.Join(spec, "task-graph.json"), &g); err != nil {
		return nil, err
	}
	for _, t := range g.Tasks {
		rp.tasks = append(rp.tasks, task{ID: t.ID, Level: t.Level, Deps: t.Deps, Files: len(t.Files.Create), Paths: t.Files.Create})
	}
	var sc scenario
	if err := readJSON(filepath.Join(spec, "scenario.yaml"), &sc); err != nil {
		return nil, err
	}
	rp.base = map[string][]scTurn{}
	for _, st := range sc.Tasks {
		rp.base[strings.TrimSuffix(strings.TrimPrefix(st.Match, "Task "), ":")] = st.Turns
	}
	for _, t := range rp.tasks {
		if len(rp.base[t.ID]) == 0 {
			return nil, fmt.Errorf("realproject: the scenario has no turns for task %s", t.ID)
		}
	}
	return rp, nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	return nil
}

// clone makes a fresh checkout of the kept project for one run, with the
// run's scenario and schedule committed (zerg reads them from the tree).
func (rp *realProject) clone(dir, schedule, model string, rushSc []byte) error {
	if out, err := exec.Command("git", "clone", "-q", "-b", "main", rp.repo, dir).CombinedOutput(); err != nil {
		return fmt.Errorf("git clone: %v\n%s", err, out)
	}
	spec := filepath.Join(dir, ".zerg", "specs", rp.feature)
	if err := os.WriteFile(filepath.Join(spec, "scenario.yaml"), rushSc, 0o644); err != nil {
		return err
	}
	cfg := filepath.Join(dir, ".zerg", "config.yaml")
	old, err := os.ReadFile(cfg)
	if err != nil {
		return err
	}
	add := "schedule: " + schedule + "\nmodels:\n  implement: " + model + "\n  simple: " + model + "\n"
	if err := os.WriteFile(cfg, append(old, []byte(add)...), 0o644); err != nil {
		return err
	}
	for _, args := range [][]string{{"add", "-A"}, {"-c", "user.name=bench", "-c", "user.email=bench@zerg.invalid", "commit", "-q", "-m", "speedup: this run's scenario and schedule"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %v: %v\n%s", args, err, out)
		}
	}
	return nil
}
