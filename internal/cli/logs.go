package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/zergrush/zerg/internal/attempt"
	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/diagnose"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/pathx"
	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/runstate"
	"github.com/zergrush/zerg/internal/term"
	"github.com/zergrush/zerg/internal/textx"
)

func init() { register(newLogsCmd) }

func newLogsCmd(a *app) *cobra.Command {
	var attemptN int
	var showDiff, showPrompt, follow bool
	var gate string
	cmd := &cobra.Command{
		Use:   "logs [FEATURE] TASK | logs [FEATURE] --gate NAME",
		Short: "Show a task's attempts (what the worker did, verification output, diff) or a gate's output",
		Long: `Show each attempt of a task: the worker's turns (its text and tool calls, with
denied and failed calls marked), the writes its hook refused, the outcome and
cost, the verification output, and the changed files. --diff prints the full
diff, --prompt the prompt. --follow (-f) then follows the task while the run
goes on: the running attempt's turns as its worker streams them, and each retry,
until the task is no longer running (Ctrl-C stops following and leaves the run
going); it only reads, nothing reaches the worker. --gate NAME prints the
last run of that gate instead: where it ran, its verdict, the tasks whose files
its output names, and its whole output as zerg kept it (the first 64 KiB and the
last 192 KiB). FEATURE may be left out when the repository has one run.`,
		Args:              cobra.RangeArgs(0, 2),
		ValidArgsFunction: a.completeRuns,
		RunE: func(cmd *cobra.Command, args []string) error {
			if gate != "" {
				if len(args) > 1 || follow || attemptN > 0 || showDiff || showPrompt {
					return usageErrorf("--gate takes no task and no other option: zerg logs [FEATURE] --gate NAME")
				}
				t, err := a.resolveRun(cmd.Context(), firstArg(args))
				if err != nil {
					return err
				}
				return a.printGateLog(t, gate)
			}
			if len(args) == 0 {
				return usageErrorf("name a task: zerg logs [FEATURE] TASK (or a gate: --gate NAME)")
			}
			t, tasks, err := a.resolveTaskArgs(cmd.Context(), args)
			if err != nil {
				return err
			}
			if len(tasks) != 1 {
				return usageErrorf("name one task: zerg logs [FEATURE] TASK")
			}
			task := tasks[0]
			nums, err := t.paths.Attempts(task)
			if (err != nil || len(nums) == 0) && !follow {
				// A task with records is known whatever the graph says;
				// one without is either not the feature's or not run yet.
				if err := t.checkTasks(tasks); err != nil {
					return err
				}
				return usageErrorf("task %s has no attempts in the run of %s", task, t.feature)
			}
			if follow {
				if err := t.checkTasks(tasks); err != nil && len(nums) == 0 {
					return err
				}
				return a.followTask(cmd.Context(), t, task, nums)
			}
			if attemptN > 0 {
				if !slices.Contains(nums, attemptN) {
					return usageErrorf("task %s has no attempt %d (it has %d)", task, attemptN, len(nums))
				}
				nums = []int{attemptN}
			}
			for _, n := range nums {
				a.printAttempt(t.paths.AttemptDir(task, n), task, n, showDiff, showPrompt)
			}
			a.printTaskEnd(t, task)
			return nil
		},
	}
	cmd.Flags().IntVar(&attemptN, "attempt", 0, "show only this attempt")
	cmd.Flags().BoolVar(&showDiff, "diff", false, "print the attempt's full diff")
	cmd.Flags().BoolVar(&showPrompt, "prompt", false, "print the prompt the worker got")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "then follow the task's running attempt and its retries while the run goes on")
	cmd.Flags().StringVar(&gate, "gate", "", "print the output of the last run of this quality gate")
	return cmd
}

// printTaskEnd says where the task stands after its attempts.
func (a *app) printTaskEnd(t *runTarget, task string) {
	if st, err := t.state(); err == nil {
		if ts := st.Task(task); ts.Attempts > 0 {
			fmt.Fprintf(a.stdout, "\n%s: %s after %d attempt(s)\n", task, ts.Status, ts.Attempts)
		}
	}
}

// printGateLog prints the last run of a gate: where it ran, its verdict,
// the tasks its output names and its output, from the gate's log (the
// event's excerpt for a log from before they were kept). All of it was
// printed by the gate, which runs the workers' code: cleaned.
func (a *app) printGateLog(t *runTarget, name string) error {
	v, _, err := t.inspect()
	if err != nil {
		return err
	}
	var runs []runstate.GateView
	var names []string
	for _, g := range v.Gates {
		if g.Name == name {
			runs = append(runs, g)
		}
		if !slices.Contains(names, g.Name) {
			names = append(names, g.Name)
		}
	}
	if len(runs) == 0 {
		if len(names) == 0 {
			return usageErrorf("no gate has run in the run of %s yet", t.feature)
		}
		return usageErrorf("no gate %q ran in the run of %s; its gates: %s", name, t.feature, strings.Join(names, ", "))
	}
	g := runs[len(runs)-1]
	w := a.stdout
	on := fmt.Sprintf("level %d", g.Level)
	if g.Batch > 0 {
		on = fmt.Sprintf("batch %d [%s]", g.Batch, strings.Join(g.Tasks, " "))
	}
	verdict := "passed"
	if g.Exit != 0 {
		verdict = fmt.Sprintf("failed (exit %d)", g.Exit)
		if g.Required {
			verdict = fmt.Sprintf("FAILED (exit %d)", g.Exit)
		}
	}
	fmt.Fprintln(w, a.paint(ansiBold, fmt.Sprintf("== gate %s on %s (%s): %s", term.Clean(g.Name), on, gitx.ShortHash(term.Clean(g.Head)), verdict)))
	fmt.Fprintf(w, "command: %s\n", textx.OneLine(term.Clean(g.Command)))
	if len(g.Named) > 0 {
		fmt.Fprintf(w, "its output names files of: %s\n", strings.Join(g.Named, ", "))
	}
	if len(runs) > 1 {
		fmt.Fprintf(w, "(run %d of %d of this gate; the others' logs are in %s)\n", len(runs), len(runs), filepath.Join(pathx.Short(t.root, t.paths.RunDir), "gates"))
	}
	out, ok := run.ReadGateLog(t.paths.RunDir, g.GateFinished)
	if !ok {
		out = g.Output
		fmt.Fprintln(w, "(its log is gone or from an older zerg: the excerpt the run's log kept)")
	}
	out = strings.TrimRight(term.Clean(out), "\n")
	if out == "" {
		out = "(no output)"
	}
	fmt.Fprintf(w, "-- output\n%s\n", out)
	return nil
}

// followTask prints the task's finished attempts, then follows it: each
// new line of the running attempt's stream as the worker writes it, each
// retry, until the task is neither running nor waiting for a retry or
// the run is no longer going. It reads the records zerg writes and
// nothing else; it never writes to the worker.
func (a *app) followTask(ctx context.Context, t *runTarget, task string, nums []int) error {
	shown := 0
	st, _ := t.state()
	open := 0
	if st != nil {
		if o := st.Task(task).Open; o != nil {
			open = o.Number
		}
	}
	for _, n := range nums {
		if n != open {
			a.printAttempt(t.paths.AttemptDir(task, n), task, n, false, false)
			shown = n
		}
	}
	var cur *streamTail
	for {
		v, st, err := t.inspect()
		if err != nil {
			return err
		}
		ts := st.Task(task)
		if o := ts.Open; o != nil && o.Number > shown && (cur == nil || cur.n != o.Number) {
			if cur != nil {
				a.finishFollowed(cur)
			}
			cur = &streamTail{n: o.Number, dir: t.paths.AttemptDir(task, o.Number)}
			fmt.Fprintln(a.stdout, a.paint(ansiBold, fmt.Sprintf("== %s attempt %d (%s; following, Ctrl-C stops)", task, o.Number, cur.dir)))
			fmt.Fprintln(a.stdout, "-- worker")
		}
		if cur != nil {
			cur.print(a)
			switch {
			case ts.Open == nil || ts.Open.Number != cur.n:
				a.finishFollowed(cur)
				shown, cur = cur.n, nil
				continue
			case !v.Coordinator.Alive:
				// Nothing runs it any more: the log leaves it open.
				fmt.Fprintf(a.stdout, "attempt %d was interrupted: the run's coordinator is gone; zerg rush %s --resume runs it again\n", cur.n, t.feature)
				return nil
			}
		}
		waiting := ts.Status == runstate.StatusReady || ts.Status == runstate.StatusRetryWait || ts.Status == runstate.StatusPending
		if ts.Open == nil && (!v.Coordinator.Alive || !waiting) {
			a.printTaskEnd(t, task)
			if !v.Coordinator.Alive && waiting {
				fmt.Fprintf(a.stdout, "the run of %s is not going (%s): nothing to follow\n", t.feature, v.State.Words())
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(followPoll):
		}
	}
}

// followPoll is how often a followed stream is read for new lines.
const followPoll = 200 * time.Millisecond

// finishFollowed prints what the followed attempt's record holds once it
// ended: the lines left, then its verification output, diagnosis, diff.
func (a *app) finishFollowed(s *streamTail) {
	s.print(a)
	a.printRecordTail(s.dir)
}

// streamTail is the followed attempt's stream and how much of it was
// printed: complete lines only, a torn last line waits for its end.
type streamTail struct {
	n   int
	dir string
	off int64
}

func (s *streamTail) print(a *app) {
	f, err := os.Open(attempt.Record(s.dir).Stream())
	if err != nil {
		return
	}
	defer f.Close()
	if _, err := f.Seek(s.off, io.SeekStart); err != nil {
		return
	}
	r := bufio.NewReaderSize(f, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return // EOF: a partial line is read again next time
		}
		s.off += int64(len(line))
		if d := describeEvent(claude.ParseLine(line)); d != "" {
			fmt.Fprintln(a.stdout, "  "+term.Clean(d))
		}
	}
}

// printAttempt prints one attempt's record. Everything in it was written by
// the worker or a gate, or holds their output (the prompt of a retry quotes
// the failure), so all of it goes through term.Clean before it is printed:
// every line of the stream, the verification output, the diff, the prompt.
func (a *app) printAttempt(dir, task string, n int, showDiff, showPrompt bool) {
	w := a.stdout
	fmt.Fprintf(w, "%s\n", a.paint(ansiBold, fmt.Sprintf("== %s attempt %d (%s)", task, n, dir)))
	if showPrompt {
		if b, err := os.ReadFile(attempt.Record(dir).Prompt()); err == nil {
			fmt.Fprintf(w, "-- prompt\n%s\n", strings.TrimSpace(term.Clean(string(b))))
		}
	}
	if f, err := os.Open(attempt.Record(dir).Stream()); err == nil {
		fmt.Fprintln(w, "-- worker")
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
		for sc.Scan() {
			if line := describeEvent(claude.ParseLine(sc.Bytes())); line != "" {
				fmt.Fprintln(w, "  "+term.Clean(line))
			}
		}
		_ = f.Close() // opened to read
	}
	a.printRecord(dir, showDiff)
}

// printRecordTail is printRecord without the diff.
func (a *app) printRecordTail(dir string) { a.printRecord(dir, false) }

// printRecord prints what an attempt's record holds besides its stream:
// the writes its hook refused, the verification output, the diagnosis,
// the changed files (or, with showDiff, the diff).
func (a *app) printRecord(dir string, showDiff bool) {
	w := a.stdout
	if ws := attempt.ReadRefused(dir); len(ws) > 0 {
		fmt.Fprintln(w, "-- refused writes (not in the attempt's work, whatever the worker said)")
		for _, r := range ws {
			fmt.Fprintf(w, "  write refused: %s (%s)\n", textx.Truncate(textx.OneLine(term.Clean(r.String())), 200), term.Clean(r.Tool))
		}
	}
	if b, err := os.ReadFile(attempt.Record(dir).Verify()); err == nil {
		out := strings.TrimSpace(term.Clean(string(b)))
		if out == "" {
			out = "(no output)"
		}
		fmt.Fprintf(w, "-- verification output\n%s\n", indent(lastN(out, 40)))
	}
	if d, ok := diagnose.ReadFile(attempt.Record(dir).Diagnosis()); ok {
		h := d.Top()
		fmt.Fprintf(w, "-- diagnosis: %s (%.0f%% sure, %s)\n", h.Pattern, 100*h.Confidence, h.Class)
		for _, e := range h.Evidence {
			fmt.Fprintf(w, "  %s\n", textx.Truncate(textx.OneLine(term.Clean(e)), 200))
		}
		fmt.Fprintf(w, "  fix: %s\n", h.Fix)
	}
	if b, err := os.ReadFile(attempt.Record(dir).Diff()); err == nil {
		diff := term.Clean(string(b))
		if showDiff {
			fmt.Fprintf(w, "-- diff\n%s\n", strings.TrimSpace(diff))
		} else {
			var files []string
			for _, l := range strings.Split(diff, "\n") {
				if strings.HasPrefix(l, "diff --git ") {
					files = append(files, strings.TrimPrefix(strings.Fields(l)[3], "b/"))
				}
			}
			fmt.Fprintf(w, "-- changed: %s\n", strings.Join(textx.OrList(files, "nothing"), ", "))
		}
	}
}

// describeEvent renders one stream-json event as one line, or "". The
// caller cleans the line; each text that is cut is cleaned before, so
// escapes do not use up the part shown.
func describeEvent(ev claude.Event) string {
	clean := term.Clean
	switch {
	case ev.Assistant != nil:
		var parts []string
		for _, b := range ev.Assistant.Message.Content {
			switch b.Type {
			case "text":
				if t := strings.TrimSpace(clean(b.Text)); t != "" {
					parts = append(parts, "says: "+textx.Truncate(textx.OneLine(t), 160))
				}
			case "tool_use":
				parts = append(parts, fmt.Sprintf("%s %s", b.Name, textx.Truncate(clean(string(b.Input)), 140)))
			}
		}
		return strings.Join(parts, "; ")
	case ev.User != nil:
		var parts []string
		for _, r := range ev.User.Message.Content {
			if r.IsError {
				parts = append(parts, "✗ "+textx.Truncate(textx.OneLine(clean(claude.ToolResultDisplay(r.Content))), 160))
			}
		}
		return strings.Join(parts, "; ")
	case ev.Result != nil:
		r := ev.Result
		return fmt.Sprintf("result: %s, %d turn(s), $%.4f%s", r.Subtype, r.NumTurns, r.TotalCostUSD,
			map[bool]string{true: " (error: " + textx.Truncate(textx.OneLine(clean(r.Result)), 120) + ")", false: ""}[r.IsError])
	case ev.APIRetry != nil:
		return fmt.Sprintf("api retry %d (status %d, %s)", ev.APIRetry.Attempt, ev.APIRetry.ErrorStatus, ev.APIRetry.Error)
	}
	return ""
}

func indent(s string) string { return "  " + strings.ReplaceAll(s, "\n", "\n  ") }

func lastN(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		return fmt.Sprintf("(… %d lines)\n", len(lines)-n) + strings.Join(lines[len(lines)-n:], "\n")
	}
	return s
}
