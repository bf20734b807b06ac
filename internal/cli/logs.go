package cli

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/term"
)

func init() { register(newLogsCmd) }

func newLogsCmd(a *app) *cobra.Command {
	var attemptN int
	var showDiff, showPrompt bool
	cmd := &cobra.Command{
		Use:   "logs [FEATURE] TASK",
		Short: "Show a task's attempts: what the worker did, verification output, diff",
		Long: `Show each attempt of a task: the worker's turns (its text and tool calls, with
denied and failed calls marked), the outcome and cost, the verification output,
and the changed files. --diff prints the full diff, --prompt the prompt.
FEATURE may be left out when the repository has one run.`,
		Args:              cobra.RangeArgs(1, 2),
		ValidArgsFunction: a.completeRuns,
		RunE: func(cmd *cobra.Command, args []string) error {
			t, tasks, err := a.resolveTaskArgs(cmd.Context(), args)
			if err != nil {
				return err
			}
			if len(tasks) != 1 {
				return usageErrorf("name one task: zerg logs [FEATURE] TASK")
			}
			task := tasks[0]
			nums, err := t.paths.Attempts(task)
			if err != nil || len(nums) == 0 {
				// A task with records is known whatever the graph says;
				// one without is either not the feature's or not run yet.
				if err := t.checkTasks(tasks); err != nil {
					return err
				}
				return usageErrorf("task %s has no attempts in the run of %s", task, t.feature)
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
			if st, err := t.state(); err == nil {
				if ts := st.Task(task); ts.Attempts > 0 {
					fmt.Fprintf(a.stdout, "\n%s: %s after %d attempt(s)\n", task, ts.Status, ts.Attempts)
				}
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&attemptN, "attempt", 0, "show only this attempt")
	cmd.Flags().BoolVar(&showDiff, "diff", false, "print the attempt's full diff")
	cmd.Flags().BoolVar(&showPrompt, "prompt", false, "print the prompt the worker got")
	return cmd
}

// printAttempt prints one attempt's record. Everything in it was written by
// the worker or a gate, or holds their output (the prompt of a retry quotes
// the failure), so all of it goes through term.Clean before it is printed:
// every line of the stream, the verification output, the diff, the prompt.
func (a *app) printAttempt(dir, task string, n int, showDiff, showPrompt bool) {
	w := a.stdout
	fmt.Fprintf(w, "%s\n", a.paint(ansiBold, fmt.Sprintf("== %s attempt %d (%s)", task, n, dir)))
	if showPrompt {
		if b, err := os.ReadFile(filepath.Join(dir, "prompt.md")); err == nil {
			fmt.Fprintf(w, "-- prompt\n%s\n", strings.TrimSpace(term.Clean(string(b))))
		}
	}
	if f, err := os.Open(filepath.Join(dir, "stream.jsonl")); err == nil {
		fmt.Fprintln(w, "-- worker")
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
		for sc.Scan() {
			if line := describeEvent(claude.ParseLine(sc.Bytes())); line != "" {
				fmt.Fprintln(w, "  "+term.Clean(line))
			}
		}
		f.Close()
	}
	if b, err := os.ReadFile(filepath.Join(dir, "verify.log")); err == nil {
		out := strings.TrimSpace(term.Clean(string(b)))
		if out == "" {
			out = "(no output)"
		}
		fmt.Fprintf(w, "-- verification output\n%s\n", indent(lastN(out, 40)))
	}
	if d, ok := readDiagnosis(dir); ok {
		h := d.Top()
		fmt.Fprintf(w, "-- diagnosis: %s (%.0f%% sure, %s)\n", h.Pattern, 100*h.Confidence, h.Class)
		for _, e := range h.Evidence {
			fmt.Fprintf(w, "  %s\n", truncate(oneLine(term.Clean(e)), 200))
		}
		fmt.Fprintf(w, "  fix: %s\n", h.Fix)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "diff.patch")); err == nil {
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
			fmt.Fprintf(w, "-- changed: %s\n", strings.Join(nonEmpty(files, "nothing"), ", "))
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
					parts = append(parts, "says: "+truncate(oneLine(t), 160))
				}
			case "tool_use":
				parts = append(parts, fmt.Sprintf("%s %s", b.Name, truncate(clean(string(b.Input)), 140)))
			}
		}
		return strings.Join(parts, "; ")
	case ev.User != nil:
		var parts []string
		for _, r := range ev.User.Message.Content {
			if r.IsError {
				parts = append(parts, "✗ "+truncate(oneLine(clean(claude.ToolResultDisplay(r.Content))), 160))
			}
		}
		return strings.Join(parts, "; ")
	case ev.Result != nil:
		r := ev.Result
		return fmt.Sprintf("result: %s, %d turn(s), $%.4f%s", r.Subtype, r.NumTurns, r.TotalCostUSD,
			map[bool]string{true: " (error: " + truncate(oneLine(clean(r.Result)), 120) + ")", false: ""}[r.IsError])
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

func nonEmpty(s []string, dflt string) []string {
	if len(s) == 0 {
		return []string{dflt}
	}
	return s
}
