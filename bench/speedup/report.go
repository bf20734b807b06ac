package main

import (
	"fmt"
	"io"
	"runtime"
	"time"
)

func secs(d time.Duration) string { return fmt.Sprintf("%.1f", d.Seconds()) }

// writeReport prints the figures as markdown: the turn distribution the
// script was drawn from, then per graph the single session and each rush,
// then the goals with whether this run met them.
func writeReport(w io.Writer, o options, tf *turnsFile, runs []shapeRun, took time.Duration) {
	th, out := describe(tf.thinks()), describe(tf.outputs())
	fmt.Fprintf(w, "## speedup: zerg rush vs one Claude Code session\n\n")
	fmt.Fprintf(w, "Measured %s on %d cores; model %s; zerg mode %s; %d model turns per task; think time x%g; seed %d; the whole run took %.0f s.\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), runtime.NumCPU(), o.model, o.mode, o.turns, o.scale, o.seed, took.Seconds())
	if o.plainSingle {
		fmt.Fprintf(w, "The single session ran as a bare claude -p (-plain-single): its git instructions and auto memory on, unlike zerg's workers.\n\n")
	} else {
		fmt.Fprintf(w, "The single session ran with the two settings zerg gives its workers (git instructions and auto memory off).\n\n")
	}
	fmt.Fprintf(w, "Think time per model turn drawn from %d measured turns (%d sessions): median %.1f s, p90 %.1f s, mean %.1f s. "+
		"Output tokens per turn from %d turns with a final count: median %.0f, p90 %.0f, mean %.0f.\n\n",
		th.N, tf.sessions(), th.Median/1000, th.P90/1000, th.Mean/1000, out.N, out.Median, out.P90, out.Mean)
	fmt.Fprintln(w, "| graph | run | workers | wall s | speed-up | makespan s | lower bound s | makespan/bound | best schedule s | makespan/best | delivered | input tok/task | output tok/task | $/task |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range runs {
		s := r.Single
		pt := s.Usage.perTask(s.Delivered)
		fmt.Fprintf(w, "| %s | one claude -p session | 1 | %s | 1.00 | | | | | | %d/%d | %d | %d | %.4f |\n",
			r.Shape.Name, secs(s.Wall), s.Delivered, s.Tasks, pt.Input, pt.Output, pt.USD)
		for _, x := range r.Rushes {
			if x.Skipped != "" {
				fmt.Fprintf(w, "| %s | zerg rush, schedule %s | | skipped: %s | | | | | | | | | | |\n", r.Shape.Name, x.Schedule, x.Skipped)
				continue
			}
			pt := x.Usage.perTask(x.Delivered)
			best, overBest := "", ""
			if x.Best > 0 {
				best, overBest = secs(x.Best), fmt.Sprintf("%.2f", ratio(x.Makespan, x.Best))
			}
			fmt.Fprintf(w, "| %s | zerg rush, schedule %s | %d | %s | %.2f | %s | %s | %.2f | %s | %s | %d/%d | %d | %d | %.4f |\n",
				r.Shape.Name, x.Schedule, x.Workers, secs(x.Wall), speedup(s.Wall, x.Wall), secs(x.Makespan), secs(x.Bound),
				ratio(x.Makespan, x.Bound), best, overBest, x.Delivered, x.Tasks, pt.Input, pt.Output, pt.USD)
		}
	}
	fmt.Fprintln(w)
	for _, r := range runs {
		fmt.Fprintf(w, "%s: the single session made %d model requests; the scripted server counted %d input tokens in its first and %d in its last (its context grows task after task).\n",
			r.Shape.Name, r.Single.Requests, r.Single.FirstTokens, r.Single.LastTokens)
	}
	fmt.Fprintln(w)
	for _, r := range runs {
		if r.Shape.Name != "3x4" {
			continue
		}
		single := r.Single.Usage.perTask(r.Single.Delivered)
		for _, x := range r.Rushes {
			if x.Workers != 4 || x.Skipped != "" {
				continue
			}
			su := speedup(r.Single.Wall, x.Wall)
			pt := x.Usage.perTask(x.Delivered)
			tokens := pt.Input+pt.Output <= single.Input+single.Output
			fmt.Fprintf(w, "Goal (3x4, 4 workers, schedule %s): speed-up >= 3.6: %s (%.2f); tokens per delivered task <= the single session's: %s (%d vs %d).",
				x.Schedule, yes(su >= 3.6), su, yes(tokens), pt.Input+pt.Output, single.Input+single.Output)
			if r.Think > 0 {
				fmt.Fprintf(w, " Over the serial think time (%s s): %.2f.", secs(r.Think), speedup(r.Think, x.Wall))
			}
			fmt.Fprintln(w)
		}
	}
	fmt.Fprintln(w)
	writeBreakdown(w, runs)
	for _, r := range runs {
		for _, x := range r.Rushes {
			if x.Schedule != "dag" || x.Skipped != "" {
				continue
			}
			fmt.Fprintf(w, "Goal (%s, %d workers, dag makespan <= 1.05 x lower bound): %s (%.2f)", r.Shape.Name, x.Workers, yes(ratio(x.Makespan, x.Bound) <= 1.05), ratio(x.Makespan, x.Bound))
			if x.Best > 0 {
				fmt.Fprintf(w, "; the best schedule of the same durations is %.2f x the bound, the run %.2f x the best", ratio(x.Best, x.Bound), ratio(x.Makespan, x.Best))
			}
			if x.ModelBound > 0 {
				fmt.Fprintf(w, "; the think times alone bound any schedule to %s s (zerg and the CLI costing nothing: at most %.2f x the single session), the run %.2f x that", secs(x.ModelBound), speedup(r.Single.Wall, x.ModelBound), ratio(x.Makespan, x.ModelBound))
			}
			fmt.Fprintln(w, ".")
		}
	}
}

func yes(b bool) string {
	if b {
		return "met"
	}
	return "NOT met"
}
