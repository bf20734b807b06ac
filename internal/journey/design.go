package journey

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/security"
	"github.com/zergrush/zerg/internal/spec"
)

// Files a design session writes, in DraftDir.
const (
	DesignFile = "design.md"
	GraphFile  = "task-graph.json"
)

// DesignInput is what a design needs besides the model.
type DesignInput struct {
	Feature string
	// Workdir is the private clone; requirements.md is in its DraftDir.
	Workdir string
	// Requirements is the text of requirements.md (also in the prompt).
	Requirements string
	// MaxRounds bounds the rounds (design.max_rounds); at least 1.
	MaxRounds int
	Model     string
	// Protection is what no task may own (config.Config.Protection; nil:
	// zerg's own list): the graph is checked as rush will check it.
	Protection *security.Protection
	// Progress, when set, is told about each round.
	Progress func(Round)
}

// Round is one session of a design and what validation said of its graph.
type Round struct {
	N        int
	Errors   []spec.Issue
	Warnings []spec.Issue
	CostUSD  float64
}

// Valid says whether the round's graph can run.
func (r Round) Valid() bool { return len(r.Errors) == 0 }

// DesignResult is the outcome of the loop.
type DesignResult struct {
	Rounds []Round
	// Report is the last validation report (nil when no graph was written).
	Report *spec.Report
}

// Valid says whether the last round produced a valid graph.
func (d DesignResult) Valid() bool {
	return len(d.Rounds) > 0 && d.Rounds[len(d.Rounds)-1].Valid()
}

// Last is the last round.
func (d DesignResult) Last() Round {
	if len(d.Rounds) == 0 {
		return Round{}
	}
	return d.Rounds[len(d.Rounds)-1]
}

// DraftPath is the path of a draft file inside a session's clone.
func DraftPath(workdir, name string) string { return filepath.Join(workdir, DraftDir, name) }

// Design runs design rounds until the task graph the model writes is valid
// or MaxRounds rounds ran: round 1 asks for design.md and task-graph.json,
// each later round is a new session whose prompt lists every error of the
// previous graph (the files stay in the clone for it to fix). A session that
// fails (API, budget, refusal) ends the loop with its error.
func Design(ctx context.Context, m Model, in DesignInput) (DesignResult, error) {
	if in.MaxRounds < 1 {
		in.MaxRounds = 1
	}
	var res DesignResult
	var prev Round
	for n := 1; n <= in.MaxRounds; n++ {
		prompt := DesignPrompt(in.Feature, in.Requirements)
		if n > 1 {
			prompt = RepairPrompt(in.Feature, n, prev.Errors)
		}
		a, err := m.Run(ctx, Session{
			Name:     fmt.Sprintf("design-%d", n),
			Workdir:  in.Workdir,
			Prompt:   prompt,
			System:   designSystem,
			Tools:    WriterTools,
			Writable: []string{DraftDir + "/" + DesignFile, DraftDir + "/" + GraphFile},
			Model:    in.Model,
		})
		if err != nil {
			return res, err
		}
		round, rep := checkDraft(in.Workdir, in.Feature, in.Protection)
		round.N, round.CostUSD = n, a.CostUSD
		res.Rounds = append(res.Rounds, round)
		res.Report = rep
		if in.Progress != nil {
			in.Progress(round)
		}
		if round.Valid() {
			return res, nil
		}
		prev = round
	}
	return res, nil
}

// checkDraft validates the drafted graph exactly as zerg graph validate
// does (the clone is the repository root for the symlink check, protected
// says which paths no task may own) and adds
// the files the session failed to write as errors, so the next round is
// told about them too.
func checkDraft(workdir, feature string, protection *security.Protection) (Round, *spec.Report) {
	var r Round
	if fi, err := os.Stat(DraftPath(workdir, DesignFile)); err != nil || fi.Size() == 0 {
		r.Errors = append(r.Errors, spec.Issue{Severity: spec.Error, Code: spec.CodeMissing, Field: DraftDir + "/" + DesignFile,
			Message: "missing or empty; write the design there"})
	}
	rep, err := run.LoadGraph(DraftPath(workdir, GraphFile), run.GraphLoad{Root: workdir, Protection: protection})
	if err != nil {
		msg := "missing; write the task graph there"
		if !errors.Is(err, os.ErrNotExist) {
			msg = err.Error()
		}
		r.Errors = append(r.Errors, spec.Issue{Severity: spec.Error, Code: spec.CodeMissing, Field: DraftDir + "/" + GraphFile, Message: msg})
		return r, nil
	}
	r.Errors = append(r.Errors, rep.Errors...)
	if rep.Graph != nil && rep.Graph.Feature != "" && rep.Graph.Feature != feature {
		// zerg rush runs the graph of .zerg/specs/FEATURE as FEATURE.
		r.Errors = append(r.Errors, spec.Issue{Severity: spec.Error, Code: spec.CodeBadValue, Field: "feature",
			Message: fmt.Sprintf("%q is not the feature being designed; write %q", rep.Graph.Feature, feature)})
		rep.Errors = append(rep.Errors, r.Errors[len(r.Errors)-1])
	}
	r.Warnings = rep.Warnings
	return r, rep
}

// designSystem is appended to the design sessions' system prompt.
const designSystem = `You are the design step of zerg, a tool that runs many Claude Code workers in parallel on a task graph.
You may read and search the repository, and write only the two files you are asked for. You cannot run commands.
A task graph is JSON: {"feature": NAME, "tasks": [{"id", "title", "level", "dependencies", "description",
"files": {"create": [...], "modify": [...], "read": [...]}, "verification": {"command", "timeout_seconds"},
"estimate_minutes"}]}. Rules: ids are unique; level >= 1; every dependency is in a strictly lower level (so there
is no cycle); two tasks of the same level never create or modify the same path (each path has one owner per level);
paths are repository-relative; every task has a verification command that passes only when the task is done.`

// DesignPrompt is round 1's prompt. Its first line is what rehearsal
// scenarios match.
func DesignPrompt(feature, requirements string) string {
	return fmt.Sprintf(`Design %s round 1: write the design and the task graph.

Read the requirements below (also in %s/requirements.md) and the repository. Then write:
1. %s/%s: the design (components, data, interfaces, risks) in Markdown;
2. %s/%s: the task graph for feature %q, with levels, file ownership, verification commands and estimates.
zerg validates the graph and sends you every error until it is valid.

Requirements:
%s`, feature, DraftDir, DraftDir, DesignFile, DraftDir, GraphFile, feature, strings.TrimSpace(requirements))
}

// RepairPrompt is the prompt of round n > 1: every error of the last graph.
func RepairPrompt(feature string, n int, errs []spec.Issue) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Design %s round %d: the task graph is invalid; fix every error below.\n\n", feature, n)
	fmt.Fprintf(&b, "Your design is in %s/%s and the task graph in %s/%s (read them first). ", DraftDir, DesignFile, DraftDir, GraphFile)
	b.WriteString("Rewrite the task graph (and the design if it changes) so that it has none of these errors:\n")
	for _, e := range errs {
		fmt.Fprintf(&b, "- %s\n", e)
	}
	return b.String()
}
