package gateway

import (
	"encoding/json"
	"regexp"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/textx"
)

// A tool call the CLI refuses (zerg's PreToolUse hook exits 2, or one of
// the permission rules of the settings zerg wrote) reaches the model as an
// error tool_result in the next request. The gateway reads the denials
// there, not from the CLI's result event: that event is on the CLI's
// stdout, which code in the sandbox can write to or cut off by killing the
// CLI before it ends. It can add a denial to a request it sends itself,
// but not take back one the CLI sent.

// denialRE matches the CLI's wording of a denied tool call:
//
//	PreToolUse:Write hook error: [<hook command>]: denied: …
//	Permission to use Bash with command curl … has been denied.
//	Claude requested permissions to use Bash, but you haven't granted it yet.
var denialRE = regexp.MustCompile(`^(?:PreToolUse:\S+ hook error: |Permission to use \S+.* has been denied|Claude requested permissions to )`)

// maxDenialReason bounds HookDenial.Reason.
const maxDenialReason = 300

// noteDenials records the denials a request reports back to the model that
// no earlier request of this gateway reported.
func (g *Gateway) noteDenials(body []byte) {
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if json.Unmarshal(body, &req) != nil {
		return
	}
	type call struct {
		name  string
		input json.RawMessage
	}
	calls := map[string]call{}
	var found []HookDenial
	for _, m := range req.Messages {
		var blocks []struct {
			Type      string          `json:"type"`
			ID        string          `json:"id"`
			Name      string          `json:"name"`
			Input     json.RawMessage `json:"input"`
			ToolUseID string          `json:"tool_use_id"`
			IsError   bool            `json:"is_error"`
			Content   json.RawMessage `json:"content"`
		}
		if json.Unmarshal(m.Content, &blocks) != nil {
			continue
		}
		for _, b := range blocks {
			switch {
			case b.Type == "tool_use" && b.ID != "":
				calls[b.ID] = call{b.Name, b.Input}
			case b.Type == "tool_result" && b.IsError && b.ToolUseID != "":
				text, _ := claude.ToolResultText(b.Content)
				if denialRE.MatchString(text) {
					found = append(found, HookDenial{ID: b.ToolUseID, Reason: clip(textx.OneLine(text), maxDenialReason)})
				}
			}
		}
	}
	for _, d := range found {
		g.mu.Lock()
		seen := g.denied[d.ID]
		g.denied[d.ID] = true
		record := !seen && len(g.stats.HookDenials) < MaxRefusals
		if c, ok := calls[d.ID]; ok {
			d.Tool = clip(c.name, 64)
			if len(c.input) > 0 {
				d.Input = clipInput(c.input, len(c.input))
				d.Path = inputPath(c.input)
			}
		}
		if record {
			g.stats.HookDenials = append(g.stats.HookDenials, d)
		}
		g.mu.Unlock()
		if !record {
			continue
		}
		fields := map[string]any{"tool": d.Tool, "reason": g.scrubString(d.Reason), "source": "gateway"}
		for k, v := range target(d.Input, g.cfg.Screen) {
			fields[k] = v
		}
		g.auditLive(AuditHookDenied, fields)
	}
}

// target is what a denied call went for, for the audit log: its path or
// pattern, and its command when the screen lets it through; never a
// file's content.
func target(input json.RawMessage, screen func(json.RawMessage) json.RawMessage) map[string]any {
	var in map[string]any
	if json.Unmarshal(input, &in) != nil {
		return nil
	}
	out := map[string]any{}
	for _, k := range []string{"file_path", "notebook_path", "path", "pattern", "command"} {
		v, ok := in[k].(string)
		if !ok {
			continue
		}
		if screen != nil {
			b, _ := json.Marshal(v)
			if s := screen(b); string(s) != string(b) {
				v = "[not recorded: it contains a secret]"
			}
		}
		out[k] = clip(v, 300)
	}
	return out
}

// inputPath is the file a tool call's input names, clipped.
func inputPath(input json.RawMessage) string {
	var in map[string]any
	if json.Unmarshal(input, &in) != nil {
		return ""
	}
	for _, k := range []string{"file_path", "notebook_path", "path"} {
		if v, ok := in[k].(string); ok {
			return clip(v, 1024)
		}
	}
	return ""
}
