// Command speedup is the A/B benchmark the issue asks for: the same features
// done (a) by `zerg rush --rehearse` with N workers and (b) by one `claude -p`
// session that does every task of the graph in order, both with the real
// pinned Claude Code CLI against zerg's scripted Messages API. The scripted
// model's think time and output tokens per turn are drawn, with a fixed
// seed, from model turns measured in public Claude Code transcripts
// (testdata/turns.json); both runs get the same drawn turns for the same
// task. It reports wall time, speed-up, tokens and dollars per delivered
// task, and the schedule's makespan over its lower bound, as markdown, and
// draws the wall times as a PNG.
//
//	go run ./bench/speedup                       # the full run (about 15 minutes)
//	go run ./bench/speedup -quick                # 3x4 only, 1 and 4 workers, think time x0.25
//	go run ./bench/speedup -report r.md -plot r.png
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/zergrush/zerg/bench/internal/benchkit"
	"github.com/zergrush/zerg/internal/fsx"
)

type options struct {
	shapes       []string
	workers      []int // for the headline 3x4 graph
	shapeWorkers []int // for the other shapes
	schedules    []string
	turns        int
	seed         uint64
	scale        float64
	think        time.Duration // a fixed think time per turn instead of the draw (0: drawn)
	gate         string        // a required gate command on every merged level ("": none)
	estimates    string        // none, or drawn: estimate_minutes from each task's drawn think time
	mode         string
	model        string
	zerg         string
	report, plot string
	jsonOut      string
	plainSingle  bool
	singleOnly   bool
	keep         bool
}

func main() {
	var o options
	shapes := flag.String("shapes", "3x4,wide,deep,diamond,realproject", "graphs: 3x4 (the headline), 3x8 (wide enough for eight workers), wide, deep, diamond (real graphs' structure), realproject (bench/realproject's Go project)")
	workers := flag.String("workers", "1,2,4,8", "worker counts for the 3x4 and 3x8 graphs")
	shapeWorkers := flag.String("shape-workers", "4", "worker counts for the other graphs")
	schedules := flag.String("schedules", "level,dag", "zerg schedules to compare; one this zerg refuses is skipped, saying so")
	flag.IntVar(&o.turns, "turns", 3, "scripted model turns per task (the files' Writes, Bash checks, then the done text)")
	seed := flag.Uint64("seed", 1, "seed of the draw of think times and output tokens")
	flag.Float64Var(&o.scale, "think-scale", 1, "multiply the measured think times (1 = as measured)")
	flag.DurationVar(&o.think, "think", 0, "give every model turn this think time instead of drawing it (output tokens are still drawn)")
	flag.StringVar(&o.estimates, "estimates", "none", "estimate_minutes in the synthetic graphs: none, or drawn (each task's drawn think time, to the half minute), which the dag schedule ranks ready tasks by")
	flag.StringVar(&o.gate, "gate", "", "a required gate command zerg runs on every merged level (synthetic graphs)")
	flag.StringVar(&o.mode, "mode", "sandbox", "zerg's isolation mode for the rush: sandbox or subprocess")
	flag.StringVar(&o.model, "model", "sonnet", "the model both runs ask for (zerg's workers and the single session): prices differ per model")
	flag.StringVar(&o.zerg, "zerg", "", "zerg binary (default: build this tree)")
	flag.StringVar(&o.report, "report", "", "also write the markdown report to this file")
	flag.StringVar(&o.plot, "plot", "", "write the wall-time plot (PNG) to this file")
	flag.StringVar(&o.jsonOut, "json", "", "also write the results as JSON to this file (-replot draws them again)")
	flag.BoolVar(&o.plainSingle, "plain-single", false, "run the single session as a bare claude -p, without the two settings zerg gives its workers (git instructions and auto memory off)")
	flag.BoolVar(&o.singleOnly, "single-only", false, "run the single sessions only, no rush")
	flag.BoolVar(&o.keep, "keep", false, "keep the runs' repositories, workspaces and zerg records (their directory is printed) to read afterwards")
	replot := flag.String("replot", "", "only draw -plot from the results a -json run wrote, and exit")
	quick := flag.Bool("quick", false, "3x4 only, 1 and 4 workers, think time x0.25")
	short := flag.Bool("short", false, "the short-task A/B: 3x4, 4 workers, three turns of 4 s each, a gate per level")
	timeout := flag.Duration("timeout", 40*time.Minute, "give up after this long")
	flag.Parse()
	if *replot != "" {
		if err := redraw(*replot, o.plot); err != nil {
			fmt.Fprintln(os.Stderr, "speedup:", err)
			os.Exit(1)
		}
		return
	}
	if *quick {
		*shapes, *workers, o.scale = "3x4", "1,4", 0.25
	}
	if *short {
		*shapes, *workers, o.turns, o.think = "3x4", "4", 3, 4*time.Second
		if o.gate == "" {
			o.gate = "test -f README.md"
		}
	}
	o.seed = *seed
	var err error
	o.shapes = split(*shapes)
	o.schedules = split(*schedules)
	if o.workers, err = ints(*workers); err == nil {
		o.shapeWorkers, err = ints(*shapeWorkers)
	}
	if err != nil || o.turns < 2 || o.scale <= 0 || o.think < 0 || (o.estimates != "none" && o.estimates != "drawn") {
		fmt.Fprintln(os.Stderr, "speedup: -workers and -shape-workers take positive integers, -turns at least 2, -think-scale above 0, -think not below 0, -estimates none or drawn")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if err := benchmark(ctx, o, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "speedup:", err)
		os.Exit(1)
	}
}

func split(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func ints(s string) ([]int, error) {
	var out []int
	for _, f := range split(s) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("bad count %q", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// shapeRun is one graph's results: its single session and its rushes.
type shapeRun struct {
	Shape  shape
	Single singleResult
	Rushes []rushResult
	// Think is the scripted think time of every task's turns, one after
	// another: what a session that cost nothing but the model would take.
	Think time.Duration `json:"serial_think_ns,omitempty"`
}

func benchmark(ctx context.Context, o options, stdout, log io.Writer) error {
	turns, err := loadTurns(turnsJSON)
	if err != nil {
		return err
	}
	all, err := loadShapes()
	if err != nil {
		return err
	}
	for _, s := range o.shapes {
		if _, ok := all[s]; !ok && s != "realproject" {
			return fmt.Errorf("-shapes: no graph %q; use 3x4, 3x8, wide, deep, diamond or realproject", s)
		}
	}
	wd, _ := os.Getwd()
	root, err := fsx.ModuleRoot(wd)
	if err != nil {
		return fmt.Errorf("run inside the zerg repository: %w", err)
	}
	claudeBin := os.Getenv("ZERG_CLAUDE")
	if claudeBin == "" {
		claudeBin = filepath.Join(root, "tools", "claude", "node_modules", ".bin", "claude")
	}
	if _, err := os.Stat(claudeBin); err != nil {
		return fmt.Errorf("the pinned Claude Code CLI is missing (%s): run make claude", claudeBin)
	}
	tmp, err := os.MkdirTemp("", "speedup-")
	if err != nil {
		return err
	}
	if o.keep {
		fmt.Fprintf(log, "speedup: -keep: the runs stay in %s\n", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	// As root, zerg's workers run as an unprivileged user who must reach
	// the workspaces and the zerg binary inside this directory.
	if err := os.Chmod(tmp, 0o711); err != nil {
		return err
	}
	zerg := o.zerg
	if zerg == "" {
		built, err := benchkit.BuildZerg(root, tmp)
		if err != nil {
			return err
		}
		zerg = built
	}
	loadGoCaches()
	begin := time.Now()
	var runs []shapeRun
	refused := map[string]string{}
	for _, name := range o.shapes {
		tg, cleanup, err := makeTarget(ctx, o, name, all, turns, root, zerg, log)
		if err != nil {
			return err
		}
		sr, err := runTarget(ctx, o, tg, refused, claudeBin, zerg, tmp, log)
		cleanup()
		if err != nil {
			return err
		}
		runs = append(runs, sr)
	}
	var b strings.Builder
	writeReport(&b, o, turns, runs, time.Since(begin))
	fmt.Fprint(stdout, b.String())
	if o.report != "" {
		if err := os.WriteFile(o.report, []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	if o.jsonOut != "" {
		b, err := json.MarshalIndent(runs, "", " ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(o.jsonOut, b, 0o644); err != nil {
			return err
		}
	}
	if o.plot != "" {
		if err := plotWalls(o.plot, runs); err != nil {
			return err
		}
	}
	return nil
}

// target is one graph to benchmark: its tasks, the scripted turns of each
// (with their drawn think times and tokens), and how to make a fresh
// repository for one run.
type target struct {
	shape   shape
	feature string
	turns   map[string][]scTurn
	prepare func(dir, schedule string, rushSc []byte) error
	workers []int
}

func makeTarget(ctx context.Context, o options, name string, all map[string]shape, tf *turnsFile, root, zerg string, log io.Writer) (target, func(), error) {
	nop := func() {}
	if name == "realproject" {
		rp, err := setupRealProject(ctx, root, zerg, log)
		if err != nil {
			return target{}, nop, err
		}
		return target{
			shape:   shape{Name: name, Source: "bench/realproject's Go project, feature " + rp.feature, Tasks: rp.tasks},
			feature: rp.feature,
			turns:   fixThink(withDraws(rp.tasks, rp.base, tf, o.seed, o.scale), o.think),
			prepare: func(dir, schedule string, rushSc []byte) error { return rp.clone(dir, schedule, o.model, rushSc) },
			workers: o.shapeWorkers,
		}, func() { os.RemoveAll(rp.keep) }, nil
	}
	sh := all[name]
	ws := o.shapeWorkers
	if name == "3x4" || name == "3x8" {
		ws = o.workers
	}
	turns := fixThink(scripts(sh.Tasks, o.turns, tf, o.seed, o.scale), o.think)
	if o.estimates == "drawn" {
		sh.Tasks = withEstimates(sh.Tasks, turns)
		sh.Source += "; estimate_minutes from each task's drawn think time"
	}
	return target{
		shape:   sh,
		feature: feature,
		turns:   turns,
		prepare: func(dir, schedule string, rushSc []byte) error {
			return makeRepo(dir, sh.Tasks, rushSc, zergConfig(o.mode, schedule, o.model, o.gate))
		},
		workers: ws,
	}, nop, nil
}

// runTarget runs the single session and then each schedule at each worker
// count. A schedule this zerg refuses is skipped from then on.
func runTarget(ctx context.Context, o options, tg target, refused map[string]string, claudeBin, zerg, tmp string, log io.Writer) (shapeRun, error) {
	name, ts := tg.shape.Name, tg.shape.Tasks
	sr := shapeRun{Shape: tg.shape}
	for _, d := range thinkTimes(tg.turns) {
		sr.Think += d
	}
	rushSc, err := rushScenario(tg.feature, ts, tg.turns)
	if err != nil {
		return sr, err
	}
	singleSc, err := singleScenario(tg.feature, ts, tg.turns)
	if err != nil {
		return sr, err
	}
	dir := filepath.Join(tmp, name+"-single")
	if err := tg.prepare(dir, "level", rushSc); err != nil {
		return sr, err
	}
	fmt.Fprintf(log, "speedup: %s: one claude -p session, %d tasks\n", name, len(ts))
	if sr.Single, err = single(ctx, claudeBin, o.model, dir, tg.feature, ts, singleSc, o.plainSingle); err != nil {
		return sr, fmt.Errorf("%s single session: %w", name, err)
	}
	sr.Single.Shape = name
	fmt.Fprintf(log, "speedup: %s: single session %.1f s\n", name, sr.Single.Wall.Seconds())
	for _, schedule := range o.schedules {
		if o.singleOnly {
			break
		}
		if why, ok := refused[schedule]; ok {
			sr.Rushes = append(sr.Rushes, rushResult{Shape: name, Schedule: schedule, Skipped: why})
			continue
		}
		for _, w := range tg.workers {
			dir := filepath.Join(tmp, fmt.Sprintf("%s-%s-%d", name, schedule, w))
			if err := tg.prepare(dir, schedule, rushSc); err != nil {
				return sr, err
			}
			fmt.Fprintf(log, "speedup: %s: zerg rush, schedule %s, %d workers\n", name, schedule, w)
			r, err := rush(ctx, zerg, claudeBin, dir, filepath.Join(tmp, "ws"), tg.feature, ts, thinkTimes(tg.turns), w)
			r.Shape, r.Schedule = name, schedule
			if err == errRefused {
				refused[schedule] = r.Skipped
				fmt.Fprintf(log, "speedup: schedule %s skipped: this zerg refuses it (%s)\n", schedule, r.Skipped)
				sr.Rushes = append(sr.Rushes, r)
				break
			}
			if err != nil {
				return sr, fmt.Errorf("%s: %w", name, err)
			}
			fmt.Fprintf(log, "speedup: %s %s %d workers: %.1f s, makespan/bound %.2f\n", name, schedule, w, r.Wall.Seconds(), ratio(r.Makespan, r.Bound))
			sr.Rushes = append(sr.Rushes, r)
		}
	}
	return sr, nil
}

// redraw draws the plot of a -json file again (the plot's look can change
// without running the benchmark again).
func redraw(from, to string) error {
	if to == "" {
		return fmt.Errorf("-replot needs -plot FILE")
	}
	var runs []shapeRun
	if err := readJSON(from, &runs); err != nil {
		return err
	}
	return plotWalls(to, runs)
}
