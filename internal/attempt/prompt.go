package attempt

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/zergrush/zerg/internal/contextpack"
	"github.com/zergrush/zerg/internal/fsx"
	"github.com/zergrush/zerg/internal/textx"
)

// Prompt builds the worker's prompt: the task's line, the worker's
// situation, the task's context pack (internal/contextpack: the task, its
// files, what its dependencies produced, the spec sections relevant to it,
// the security rules of its languages and on a retry what went wrong), and
// the rules every worker follows. The first line names the task so a
// scripted model (and a human reading logs) can tell prompts apart.
func Prompt(in Input) string {
	p, _ := PromptPack(in)
	return p
}

// PromptPack is Prompt and the pack in it.
func PromptPack(in Input) (string, contextpack.Pack) {
	pack := Pack(in)
	t := in.Task
	var b strings.Builder
	fmt.Fprintf(&b, "Task %s: %s\n\n", t.ID, textx.OneLine(t.Title))
	fmt.Fprintf(&b, "You are one of several workers implementing the feature %q in parallel. This directory is your own git workspace, started from the integration branch with the work of every earlier level merged in.\n\n", in.Feature)
	b.WriteString(pack.Text)
	b.WriteString("## Rules\n- Do not commit, branch or push: zerg commits your work after checking it.\n- Finish with a one-paragraph summary of what you changed.\n")
	return b.String(), pack
}

// Pack chooses the attempt's context pack from in.Context (LoadContext);
// the task, its retry diagnosis and, when the context names none, its
// dependencies' files come from in itself.
func Pack(in Input) contextpack.Pack {
	c := in.Context
	c.Task, c.Previous = in.Task, in.Previous
	if c.Deps == nil {
		c.Deps = contextpack.DepsOf(in.Graph, in.Task, nil)
	}
	return contextpack.Build(c)
}

// writePrompt builds the prompt and records it (prompt.md) with its pack's
// account of what is in and what was left out (context.json), both
// redacted.
func writePrompt(in Input) (string, error) {
	prompt, pack := PromptPack(in)
	red := in.redactor()
	if err := fsx.WritePrivate(Record(in.Dir).Prompt(), red.Redact([]byte(prompt))); err != nil {
		return "", err
	}
	rec, err := json.MarshalIndent(pack, "", "  ")
	if err != nil {
		return "", err
	}
	if err := fsx.WritePrivate(Record(in.Dir).Context(), red.Redact(append(rec, '\n'))); err != nil {
		return "", err
	}
	return prompt, nil
}
