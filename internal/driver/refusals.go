package driver

import (
	"encoding/json"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/gateway"
	"github.com/zergrush/zerg/internal/textx"
)

// Refusal is one tool call of the worker that its CLI refused: zerg's
// PreToolUse hook denied it, or a permission rule of the settings zerg
// wrote. The pipeline reads the refused writes among them
// (attempt.RefusedWrites).
type Refusal struct {
	Tool string // Write, Edit, MultiEdit, NotebookEdit, Bash, …
	// Path is the file the call named ("" for none): as the worker wrote
	// it, relative to its workspace or absolute.
	Path string
	// Reason is what the refusal said to the model ("" when the driver
	// only has the CLI's own list, which says nothing of why).
	Reason string
}

// maxRefusals bounds a verdict's refusals.
const maxRefusals = 200

// gatewayRefusals are the refusals the gateway saw the CLI report to the
// model: code in the sandbox may add one to a request of its own, never
// take one back.
func gatewayRefusals(st gateway.Stats) []Refusal {
	var out []Refusal
	for _, d := range st.HookDenials {
		if len(out) == maxRefusals {
			break
		}
		out = append(out, Refusal{Tool: d.Tool, Path: d.Path, Reason: d.Reason})
	}
	return out
}

// cliRefusals are the denials the CLI listed in its result event: all
// there is without a gateway. The worker's code could forge that list, so
// it only ever adds refusals.
func cliRefusals(ds []claude.PermissionDenial) []Refusal {
	var out []Refusal
	for _, d := range ds {
		if len(out) == maxRefusals {
			break
		}
		r := Refusal{Tool: textx.Clip(d.ToolName, 64)}
		var in map[string]any
		if json.Unmarshal(d.ToolInput, &in) == nil {
			for _, k := range []string{"file_path", "notebook_path", "path"} {
				if v, ok := in[k].(string); ok {
					r.Path = textx.Clip(v, 1024)
					break
				}
			}
		}
		out = append(out, r)
	}
	return out
}
