package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/zergrush/zerg/internal/diagnose"
	"github.com/zergrush/zerg/internal/term"
	"github.com/zergrush/zerg/internal/textx"
)

func init() { register(newDiagnoseCmd) }

type diagnoseFlags struct {
	asJSON  bool
	command string
	exit    int
	attempt int
}

// maxDiagnoseInput bounds what zerg diagnose reads of a file or stdin; the
// engine itself reads the first and last parts of what it is given.
const maxDiagnoseInput = 64 << 20

func newDiagnoseCmd(a *app) *cobra.Command {
	var f diagnoseFlags
	cmd := &cobra.Command{
		Use:   "diagnose [FILE|-] | diagnose [FEATURE] TASK",
		Short: "Say what broke: diagnose a command's output, or a task's last attempt",
		Long: `Reads the output of a failed command (a file, or - for stdin) and says what
broke: the findings it parses (file, line, kind, message, test) from Go, Python,
JavaScript/TypeScript, Rust, shell and git output, and the known failure
patterns it may show, most likely first, each with a calibrated confidence,
the evidence and the fix. A pattern is the task's own problem (a retry can fix
it), the environment's (every worker meets it: a module not in the cache, a
tool not on PATH, no network), or the API's.

--command names the command that printed the output and --exit its exit
status; both sharpen the diagnosis. In a repository, its module or package
name tells a wrong import of its own code from a missing dependency.

With a task (FEATURE may be left out when the repository has one run), it
shows the diagnosis zerg made of the task's last attempt (--attempt N for
another).

--json prints {"findings": [...], "hypotheses": [{"pattern", "class",
"confidence", "evidence", "fix"}, ...]}, most likely first (docs/json.md).
docs/diagnose.md has the patterns and the engine's measured accuracy.`,
		Example: `  go test ./... 2>&1 | zerg diagnose -
  zerg diagnose build.log --command "npm test" --exit 1
  zerg diagnose auth login-form --json`,
		Args: cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := a.diagnoseArgs(cmd, args, f)
			if errors.Is(err, errNothingToDiagnose) {
				return nil
			}
			if err != nil {
				return err
			}
			if f.asJSON {
				return printJSON(a.stdout, d)
			}
			a.printDiagnosis(d)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.asJSON, "json", false, "print the diagnosis as JSON (docs/json.md)")
	fl.StringVar(&f.command, "command", "", "the command that printed the output")
	fl.IntVar(&f.exit, "exit", -1, "the command's exit status")
	fl.IntVar(&f.attempt, "attempt", 0, "with a task: diagnose this attempt instead of the last")
	return cmd
}

// diagnoseArgs decides what the arguments name (stdin, a file, a task) and
// diagnoses it.
func (a *app) diagnoseArgs(cmd *cobra.Command, args []string, f diagnoseFlags) (diagnose.Diagnosis, error) {
	switch {
	case len(args) == 0 || args[0] == "-":
		if len(args) > 1 {
			return diagnose.Diagnosis{}, usageErrorf("name one output: zerg diagnose [FILE|-]")
		}
		in := cmd.InOrStdin()
		if in == os.Stdin && stdinIsTerminal() {
			return diagnose.Diagnosis{}, usageErrorf("nothing to diagnose: name a file, or pipe the output in (cmd 2>&1 | zerg diagnose -)")
		}
		return a.diagnoseOutput(in, "stdin", f)
	case len(args) == 1:
		if fi, err := os.Stat(args[0]); err == nil {
			if fi.IsDir() {
				return diagnose.Diagnosis{}, usageErrorf("%s is a directory: name the file that holds the output", args[0])
			}
			fh, err := os.Open(args[0])
			if err != nil {
				return diagnose.Diagnosis{}, usageErrorf("cannot read %s: %v", args[0], err)
			}
			defer fh.Close()
			return a.diagnoseOutput(fh, args[0], f)
		}
	}
	// A task of a run.
	t, tasks, err := a.resolveTaskArgs(cmd.Context(), args)
	if err != nil {
		if len(args) == 1 {
			return diagnose.Diagnosis{}, usageErrorf("%s is neither a file nor a task of a run (%v)", args[0], err)
		}
		return diagnose.Diagnosis{}, err
	}
	if len(tasks) != 1 {
		return diagnose.Diagnosis{}, usageErrorf("name one task: zerg diagnose [FEATURE] TASK")
	}
	task := tasks[0]
	nums, err := t.paths.Attempts(task)
	if err != nil || len(nums) == 0 {
		if err := t.checkTasks(tasks); err != nil {
			return diagnose.Diagnosis{}, err
		}
		return diagnose.Diagnosis{}, usageErrorf("task %s has no attempts in the run of %s", task, t.feature)
	}
	// The attempts that have a diagnosis: those that failed on something
	// zerg read (a verification's output) or judged itself.
	var diagnosed []int
	for _, n := range nums {
		if _, ok := diagnose.ReadFile(t.paths.Attempt(task, n).Diagnosis()); ok {
			diagnosed = append(diagnosed, n)
		}
	}
	attemptFlags := func() string {
		flags := make([]string, len(diagnosed))
		for i, n := range diagnosed {
			flags[i] = fmt.Sprintf("--attempt %d", n)
		}
		return strings.Join(flags, ", ")
	}
	if f.attempt > 0 {
		if !slices.Contains(nums, f.attempt) {
			return diagnose.Diagnosis{}, usageErrorf("task %s has no attempt %d (it has %d)", task, f.attempt, len(nums))
		}
		d, ok := diagnose.ReadFile(t.paths.Attempt(task, f.attempt).Diagnosis())
		if !ok {
			hint := "no attempt of it has one"
			if len(diagnosed) > 0 {
				hint = "diagnosed: " + attemptFlags()
			}
			return diagnose.Diagnosis{}, usageErrorf("attempt %d of %s has no diagnosis: it succeeded, or zerg's own reason says it all (zerg logs %s %s shows it); %s", f.attempt, task, t.feature, task, hint)
		}
		return d, nil
	}
	last := nums[len(nums)-1]
	if len(diagnosed) == 0 {
		// Nothing failed that zerg could read: not bad input, nothing to say.
		fmt.Fprintf(a.stderr, "zerg: %s has no diagnosed attempt (%s; the last, %d, succeeded or zerg's own reason says it all: zerg logs %s %s shows it)\n",
			task, pluralf(len(nums), "%d attempt", "%d attempts"), last, t.feature, task)
		return diagnose.Diagnosis{}, errNothingToDiagnose
	}
	n := diagnosed[len(diagnosed)-1]
	if n != last {
		fmt.Fprintf(a.stderr, "zerg: attempt %d of %s has no diagnosis (it succeeded, or zerg's own reason says it all); this is attempt %d, the last diagnosed (%s)\n",
			last, task, n, attemptFlags())
	}
	d, _ := diagnose.ReadFile(t.paths.Attempt(task, n).Diagnosis())
	return d, nil
}

// errNothingToDiagnose: a task none of whose attempts has a diagnosis; zerg
// diagnose said so and exits 0.
var errNothingToDiagnose = errors.New("nothing to diagnose")

// diagnoseOutput reads an output and diagnoses it (diagnose.ReadOutput);
// an empty one is bad input.
func (a *app) diagnoseOutput(r io.Reader, name string, f diagnoseFlags) (diagnose.Diagnosis, error) {
	cwd, _ := a.getwd() // "" on an error: no project names
	d, err := diagnose.ReadOutput(r, name, maxDiagnoseInput, diagnose.Input{Command: f.command, Exit: f.exit}, cwd)
	if errors.Is(err, diagnose.ErrEmpty) {
		return d, badInput(err)
	}
	return d, err
}

// printDiagnosis writes a diagnosis for a person. Evidence and findings
// quote the output, so they go through term.Clean.
func (a *app) printDiagnosis(d diagnose.Diagnosis) {
	w := a.stdout
	top := d.Top()
	fmt.Fprintf(w, "%s  %.0f%%  %s\n", a.paint(ansiBold, top.Pattern), 100*top.Confidence, top.Class.Words())
	for i, e := range top.Evidence {
		label := "evidence:"
		if i > 0 {
			label = "         "
		}
		fmt.Fprintf(w, "  %s %s\n", label, textx.Truncate(textx.OneLine(term.Clean(e)), 200))
	}
	fmt.Fprintf(w, "  fix:      %s\n", top.Fix)
	var also []string
	for _, h := range d.Hypotheses[1:] {
		if h.Confidence >= 0.01 {
			also = append(also, fmt.Sprintf("%s %.0f%%", h.Pattern, 100*h.Confidence))
		}
	}
	if len(also) > 0 {
		fmt.Fprintf(w, "also possible: %s\n", strings.Join(also, ", "))
	}
	if len(d.Findings) == 0 {
		return
	}
	fmt.Fprintf(w, "findings (%d):\n", len(d.Findings))
	for i, f := range d.Findings {
		if i == 10 {
			fmt.Fprintf(w, "  … %d more (--json lists them all)\n", len(d.Findings)-i)
			break
		}
		loc := f.File
		if f.Line > 0 {
			loc += fmt.Sprintf(":%d", f.Line)
		}
		parts := []string{f.Language, f.Kind}
		for _, p := range []string{loc, f.Test, f.Message} {
			if p != "" {
				parts = append(parts, p)
			}
		}
		fmt.Fprintf(w, "  %s\n", textx.Truncate(term.Clean(strings.Join(parts, "  ")), 200))
	}
}
