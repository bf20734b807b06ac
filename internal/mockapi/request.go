package mockapi

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
)

// apiRequest is the part of a Messages API body the server looks at; every
// other field (thinking, metadata, context_management, …) is ignored.
type apiRequest struct {
	Model         string            `json:"model"`
	Messages      []apiMessage      `json:"messages"`
	Tools         []json.RawMessage `json:"tools"`
	Stream        *bool             `json:"stream"`
	StopSequences []string          `json:"stop_sequences"`
	OutputConfig  *struct {
		Format *struct {
			Type   string `json:"type"`
			Schema *struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"schema"`
		} `json:"format"`
	} `json:"output_config"`
}

type apiMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type apiBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"` // a tool_result's: a string or text blocks
}

// toolResults are the texts of the history's tool results, oldest first.
func (r *apiRequest) toolResults() []string {
	var out []string
	for _, m := range r.Messages {
		if m.Role != "user" {
			continue
		}
		for _, b := range m.blocks() {
			if b.Type != "tool_result" || len(b.Content) == 0 {
				continue
			}
			var text strings.Builder
			for _, c := range (apiMessage{Content: b.Content}).blocks() {
				text.WriteString(c.Text)
			}
			out = append(out, text.String())
		}
	}
	return out
}

// blocks decodes content that is either a string or an array of blocks.
func (m apiMessage) blocks() []apiBlock {
	c := bytes.TrimSpace(m.Content)
	if len(c) == 0 {
		return nil
	}
	if c[0] == '"' {
		var s string
		if json.Unmarshal(c, &s) == nil {
			return []apiBlock{{Type: "text", Text: s}}
		}
		return nil
	}
	var bs []apiBlock
	_ = json.Unmarshal(c, &bs) // a malformed history just means no blocks
	return bs
}

func (r *apiRequest) streaming() bool { return r.Stream != nil && *r.Stream }

// kind classifies a /v1/messages body as in fake-api.md §3.
func (r *apiRequest) kind() string {
	if f := r.OutputConfig; f != nil && f.Format != nil && f.Format.Type == "json_schema" &&
		f.Format.Schema != nil && f.Format.Schema.Properties["title"] != nil && len(r.Tools) == 0 {
		return KindTitle
	}
	if len(r.StopSequences) == 1 && r.StopSequences[0] == "</block>" && len(r.Tools) == 0 && !r.streaming() {
		return KindClassifier
	}
	if r.streaming() {
		return KindMain
	}
	return KindFallback
}

// prompt is the last text block of the first user message that is not a
// <system-reminder>: Claude Code puts one in front of the user's prompt,
// and 2.1.332 adds one after it when it continues past a refusal.
func (r *apiRequest) prompt() string {
	for _, m := range r.Messages {
		if m.Role != "user" {
			continue
		}
		bs := m.blocks()
		last := ""
		for i := len(bs) - 1; i >= 0; i-- {
			if bs[i].Type != "text" {
				continue
			}
			if !strings.HasPrefix(strings.TrimSpace(bs[i].Text), "<system-reminder>") {
				return bs[i].Text
			}
			if last == "" {
				last = bs[i].Text
			}
		}
		return last
	}
	return ""
}

// toolIDPrefix marks tool_use ids this server issued; the number after it is
// the turn, so the next turn can be found from the tool_results alone.
const toolIDPrefix = "toolu_zm"

var toolIDRE = regexp.MustCompile(`^toolu_zm(\d{1,6})_`)

func toolID(turn int, seq int64) string {
	return toolIDPrefix + strconv.Itoa(turn) + "_" + strconv.FormatInt(seq, 36)
}

// turn is 1 + the highest turn among tool_results answering our tool_uses.
// The message count is useless here: system messages, nudges and
// continuations come and go.
func (r *apiRequest) turn() int {
	maxTurn := 0
	for _, m := range r.Messages {
		if m.Role != "user" || !bytes.Contains(m.Content, []byte(toolIDPrefix)) {
			continue
		}
		for _, b := range m.blocks() {
			if b.Type != "tool_result" {
				continue
			}
			if mm := toolIDRE.FindStringSubmatch(b.ToolUseID); mm != nil {
				if n, err := strconv.Atoi(mm[1]); err == nil && n > maxTurn {
					maxTurn = n
				}
			}
		}
	}
	return maxTurn + 1
}

func truncate(s string, n int) string {
	s = strings.ToValidUTF8(s, "")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
