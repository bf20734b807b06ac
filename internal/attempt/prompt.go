package attempt

import (
	"fmt"
	"strings"

	"github.com/zergrush/zerg/internal/spec"
)

// Prompt builds the worker's prompt: the task, its files, its verification,
// what its dependencies produced, the spec, and on a retry what went wrong.
// The first line names the task so a scripted model (and a human reading
// logs) can tell prompts apart.
func Prompt(in Input) string {
	t := in.Task
	var b strings.Builder
	fmt.Fprintf(&b, "Task %s: %s\n\n", t.ID, oneLine(t.Title))
	fmt.Fprintf(&b, "You are one of several workers implementing the feature %q in parallel. This directory is your own git workspace, started from the integration branch with the work of every earlier level merged in.\n\n", in.Feature)
	if d := strings.TrimSpace(t.Description); d != "" {
		fmt.Fprintf(&b, "## What to do\n%s\n\n", d)
	}
	if len(t.AcceptanceCriteria) > 0 {
		b.WriteString("## Acceptance criteria\n")
		for _, c := range t.AcceptanceCriteria {
			fmt.Fprintf(&b, "- %s\n", c)
		}
		b.WriteString("\n")
	}
	b.WriteString("## Files\n")
	writeList(&b, "Create", t.Files.Create)
	writeList(&b, "Modify", t.Files.Modify)
	writeList(&b, "Read", t.Files.Read)
	b.WriteString("You may create or modify only the files listed under Create and Modify; writes anywhere else are refused and fail the task.\n\n")
	if deps := depFiles(in.Graph, t); len(deps) > 0 {
		b.WriteString("## From earlier tasks (already in your workspace)\n")
		for _, d := range deps {
			fmt.Fprintf(&b, "- %s\n", d)
		}
		b.WriteString("\n")
	}
	if t.Verification != nil && strings.TrimSpace(t.Verification.Command) != "" {
		fmt.Fprintf(&b, "## Verification\nWhen you finish, zerg runs this command in your workspace; it must pass:\n\n    %s\n\n", t.Verification.Command)
	}
	if c := strings.TrimSpace(t.Context); c != "" {
		fmt.Fprintf(&b, "## Context\n%s\n\n", c)
	}
	if s := strings.TrimSpace(in.SpecText); s != "" {
		fmt.Fprintf(&b, "## Feature spec\n%s\n\n", s)
	}
	if r := strings.TrimSpace(in.Rules); r != "" {
		fmt.Fprintf(&b, "## Security rules for this task's languages\n%s\n\n", r)
	}
	if in.Previous != "" {
		fmt.Fprintf(&b, "## Previous attempt failed\nAn earlier attempt of this task failed: %s\nFix that this time.\n\n", in.Previous)
	}
	b.WriteString("## Rules\n- Do not commit, branch or push: zerg commits your work after checking it.\n- Finish with a one-paragraph summary of what you changed.\n")
	return b.String()
}

func writeList(b *strings.Builder, label string, paths []string) {
	if len(paths) == 0 {
		return
	}
	fmt.Fprintf(b, "%s: %s\n", label, strings.Join(paths, ", "))
}

// depFiles lists what the task's dependencies created or modified.
func depFiles(g *spec.Graph, t *spec.Task) []string {
	if g == nil {
		return nil
	}
	var out []string
	for _, id := range t.Dependencies {
		d := g.Task(id)
		if d == nil {
			continue
		}
		if owned := d.Files.Owned(); len(owned) > 0 {
			out = append(out, fmt.Sprintf("%s (%s): %s", d.ID, oneLine(d.Title), strings.Join(owned, ", ")))
		}
	}
	return out
}
