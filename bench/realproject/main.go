// Command realproject measures zerg's speed on a real open-source project:
// the same feature of three tasks in two levels, once rushed by `zerg rush
// --rehearse` (the real pinned Claude Code CLI, a scripted model that writes
// the code and runs the tests as a model does, sandboxed workers with no
// network) and once by hand: the tasks' verification commands and the gates,
// run one after the other in a warm checkout.
//
// The project is fetched at run time, never copied into this repository:
// -lang go takes github.com/spf13/cast through the Go module proxy (its
// tests need modules of their own), -lang node takes @fastify/error from the
// npm registry. The report gives each figure on a line and ends with
// `ratio rush/by-hand = X.Y`; -json prints it as one JSON object instead.
// The exit status is 0 when the feature was delivered and the project's full
// suite passes on the integration branch, 1 otherwise.
//
//	go run ./bench/realproject [-lang go|node] [-keep] [-json]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

func main() {
	lang := flag.String("lang", "go", "the project: go (a Go module) or node (an npm package)")
	keep := flag.Bool("keep", false, "keep the project, the checkouts and the run's records, and print where")
	asJSON := flag.Bool("json", false, "print the report as one JSON object")
	zergBin := flag.String("zerg", "", "zerg binary (default: build one from this repository)")
	timeout := flag.Duration("timeout", 20*time.Minute, "give up after this long")
	rushFlags := flag.String("rush-flags", "", "extra flags for zerg rush, space-separated (e.g. --no-check), to compare a product option")
	checkFirst := flag.Bool("check-first", false, "run zerg check (untimed) before the rush, as a user who checks first does")
	flag.Parse()
	var p *project
	switch *lang {
	case "go":
		p = goProject()
	case "node":
		p = nodeProject()
	default:
		fmt.Fprintf(os.Stderr, "realproject: -lang %q: use go or node\n", *lang)
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	r, err := benchmark(ctx, p, *zergBin, strings.Fields(*rushFlags), *checkFirst, *keep, os.Stderr)
	if r != nil {
		if *asJSON {
			enc := json.NewEncoder(os.Stdout)
			enc.SetIndent("", "  ")
			// bench/speedup reads this: a result cut short must fail the run.
			if werr := enc.Encode(r); werr != nil && err == nil {
				err = werr
			}
		} else {
			r.print(os.Stdout)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "realproject:", err)
		os.Exit(1)
	}
	if !r.ok() {
		os.Exit(1)
	}
}

// benchmark fetches the project, times the feature by hand and by zerg rush,
// and checks the integration branch. A rush that does not deliver is a
// result, not an error: the report says what failed.
func benchmark(ctx context.Context, p *project, zergBin string, rushFlags []string, checkFirst, keep bool, log io.Writer) (*result, error) {
	dir, err := workDir()
	if err != nil {
		return nil, err
	}
	r := &result{Lang: p.lang, Project: p.name, Source: p.source, Feature: p.feature, Tasks: len(p.tasks), Levels: p.levels()}
	if keep {
		r.Dir = dir
	} else {
		defer func() { _ = removeAll(dir) }() // scratch under the temporary directory: best effort
	}
	t, err := findTools(ctx, dir, zergBin)
	if err != nil {
		return nil, err
	}
	r.Zerg = t.built
	fmt.Fprintf(log, "realproject: fetching %s from %s into %s\n", p.name, p.source, dir)
	repo, fetched, err := prepare(ctx, p, dir)
	if err != nil {
		return nil, err
	}
	r.FetchSeconds = fetched.Seconds()
	// The rush runs before the timed commands by hand: the user's caches are
	// warm from the warm-up on the project as published, and whatever the
	// rush leaves in them can only speed up the commands by hand, never the
	// rush (the report says when go test answered from its cache).
	fmt.Fprintf(log, "realproject: warm-up by hand, then zerg rush %s --rehearse\n", p.feature)
	co := filepath.Join(dir, "byhand")
	if err := warmUp(ctx, p, repo, co); err != nil {
		return r, err
	}
	if checkFirst {
		if r.CheckFirstSeconds, err = check(ctx, p, t, repo, dir); err != nil {
			return r, err
		}
	}
	if r.Rush, err = rush(ctx, p, t, repo, dir, rushFlags...); err != nil {
		return r, err
	}
	fmt.Fprintln(log, "realproject: the same commands by hand")
	if r.ByHand, err = byHand(ctx, p, co); err != nil {
		return r, err
	}
	for _, f := range r.ByHand {
		r.ByHandSeconds += f.Seconds
		if isCheck(f) {
			r.ChecksSeconds += f.Seconds
		}
	}
	if r.ByHandSeconds > 0 {
		r.Ratio = r.Rush.Seconds / r.ByHandSeconds
	}
	if r.ChecksSeconds > 0 {
		r.ChecksRatio = r.Rush.Seconds / r.ChecksSeconds
	}
	r.OwnSecondsMean = ownSeconds(r.Rush.Attempts, r.ByHand)
	fmt.Fprintln(log, "realproject: the project's suite on the integration branch")
	if r.Suite, err = checkIntegration(ctx, p, repo, dir); err != nil {
		return r, err
	}
	return r, nil
}

func (r *result) print(w io.Writer) {
	line := func(label, value string) { fmt.Fprintf(w, "%-38s %s\n", label, value) }
	secs := func(s float64) string { return fmt.Sprintf("%.2f s", s) }
	fmt.Fprintf(w, "realproject %s: %s (fetched from %s), feature %s: %d tasks in %d levels\n",
		r.Lang, r.Project, r.Source, r.Feature, r.Tasks, r.Levels)
	if r.Zerg != "" {
		line("zerg", r.Zerg)
	}
	line("fetch", secs(r.FetchSeconds))
	if r.CheckFirstSeconds > 0 {
		line("zerg check first", secs(r.CheckFirstSeconds)+"  (untimed: before the rush, which may reuse it)")
	}
	for _, f := range r.ByHand {
		v := secs(f.Seconds) + "  " + f.Command
		if f.Cached {
			v += "  (go test answered from its cache)"
		}
		if f.Exit != 0 {
			v += fmt.Sprintf("  FAILED (exit %d)", f.Exit)
		}
		line("by hand: "+f.What, v)
	}
	line("by hand", secs(r.ByHandSeconds)+"  (every command above)")
	line("by hand: the checks only", secs(r.ChecksSeconds)+"  (each verification and gate once, not the work between)")
	line("rush", fmt.Sprintf("%s  (%s: sandbox mode, %d workers)", secs(r.Rush.Seconds), r.Rush.Command, r.Rush.Workers))
	line("rush: startup", secs(r.Rush.StartupSeconds))
	if p := r.Rush.Projected; p != nil {
		line("rush: projected cost", fmt.Sprintf("$%.2f expected, $%.2f–$%.2f (%s)", p.Expected, p.Low, p.High, p.Basis))
	}
	line("rush: actual cost", fmt.Sprintf("$%.4f  (the attempts in the log; a rehearsal's scripted usage at the CLI's prices)", r.Rush.ActualUSD))
	for _, a := range r.Rush.Attempts {
		v := fmt.Sprintf("%s  worker %s, verify+commit %s, %s", secs(a.Seconds), secs(a.WorkerSeconds), secs(a.VerifySeconds), a.Class)
		if a.LaunchSeconds > 0 {
			v += fmt.Sprintf("; zerg's own %s (workspace %s, launch beyond the CLI %s, verification beyond the command %s, commit %s)",
				secs(a.OwnSeconds), secs(a.PrepareSeconds), secs(a.LaunchSeconds-a.WorkerSeconds), secs(a.VerifyOverSeconds), secs(a.CommitSeconds))
		}
		if a.Reason != "" && a.Class != "success" {
			v += " (" + a.Reason + ")"
		}
		line(fmt.Sprintf("rush: %s attempt %d", a.Task, a.Attempt), v)
	}
	for _, l := range r.Rush.Levels {
		v := secs(l.Seconds)
		if !l.Merged {
			v += "  FAILED: " + l.Reason
		}
		line(fmt.Sprintf("rush: level %d merge+gates", l.Level), v)
	}
	line("rush: finish", secs(r.Rush.FinishSeconds))
	var req []string
	total := 0
	for task, n := range r.Rush.ModelRequests {
		req = append(req, fmt.Sprintf("%s %d", task, n))
		total += n
	}
	sort.Strings(req)
	line("scripted model", fmt.Sprintf("rehearsal=%v, %d requests (%s)", r.Rush.Rehearsal, total, strings.Join(req, ", ")))
	net := r.Rush.WorkerNetwork
	switch net {
	case "":
		net = "not probed (the probe did not run)"
	case "lo":
		net = "lo only (no network)"
	}
	line("worker network", net)
	deliv := "yes"
	if !r.Rush.Delivered {
		deliv = fmt.Sprintf("NO: state %s", r.Rush.State)
		if r.Rush.Reason != "" {
			deliv += ": " + r.Rush.Reason
		}
	}
	line("delivered", deliv)
	suite := "passed"
	if !r.Suite.Passed {
		suite = "FAILED"
	}
	if len(r.Suite.Missing) > 0 {
		suite += ", feature files missing: " + strings.Join(r.Suite.Missing, " ")
	}
	line("suite on the integration branch", fmt.Sprintf("%s  (%s, %s)", suite, r.Suite.Command, secs(r.Suite.Seconds)))
	if !r.ok() {
		r.printFailures(w)
	}
	if r.Dir != "" {
		line("kept", r.Dir)
	}
	note := ""
	if !r.ok() {
		note = "  (not delivered: the rush's time is that of a failed run)"
	}
	if r.OwnSecondsMean > 0 {
		fmt.Fprintf(w, "zerg's own seconds per attempt = %.2f  (workspace, launch beyond the CLI, verification beyond the command, commit)\n", r.OwnSecondsMean)
	}
	fmt.Fprintf(w, "ratio rush/checks-only = %.1f\n", r.ChecksRatio)
	fmt.Fprintf(w, "ratio rush/by-hand = %.1f%s\n", r.Ratio, note)
}

// printFailures: what went wrong, in the words of the tools that failed.
func (r *result) printFailures(w io.Writer) {
	indent := func(s string) string { return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ") }
	for _, a := range r.Rush.Attempts {
		if a.Class != "success" {
			fmt.Fprintf(w, "-- %s attempt %d failed (%s, %s):\n%s\n", a.Task, a.Attempt, a.Class, a.Reason, indent(a.Detail))
		}
	}
	for _, g := range r.Rush.Gates {
		if g.Exit != 0 {
			fmt.Fprintf(w, "-- gate %s at level %d failed (exit %d):\n%s\n", g.Name, g.Level, g.Exit, indent(g.Output))
		}
	}
	for _, t := range r.Rush.Tasks {
		if t.Status != "merged" {
			fmt.Fprintf(w, "-- task %s: %s %s %s\n", t.ID, t.Status, t.Reason, firstLine(t.Detail))
		}
	}
	if !r.Suite.Passed {
		fmt.Fprintf(w, "-- the suite on the integration branch:\n%s\n", indent(r.Suite.Output))
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
