package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
)

// The gateway forwards a request to the model API only when it is a
// request of the kind the attempt's CLI sends, for what zerg configured:
// the path, the model, the output cap, the beta features, the tools and
// the content sources are all checked before a byte leaves the host. What
// the API may do on its own (fetch a URL, run code, call an MCP server) is
// egress, and egress.allow governs it. docs/gateway.md has the rules.

// The model-API paths the gateway forwards, both POST only.
const (
	MessagesPath    = "/v1/messages"
	CountTokensPath = "/v1/messages/count_tokens"
)

// MaxRequestBody bounds a model-API request body: the API's own limit for
// the Messages API. A larger one is refused (413) without being read whole.
const MaxRequestBody = 32 << 20

// DefaultBetas are the beta features the pinned Claude Code CLI asks for
// (anthropic-beta), with any model, with OAuth, for token counting and for
// structured output. Any other beta is refused unless gateway.betas allows
// it: betas switch on server-side features (the MCP connector, the Files
// API, code execution) that reach past the sandbox.
var DefaultBetas = []string{
	"claude-code-20250219",
	"context-1m-2025-08-07",
	"context-management-2025-06-27",
	"effort-2025-11-24",
	"extended-cache-ttl-2025-04-11", // with a subscription token (measured)
	"fallback-credit-2026-06-01",
	"interleaved-thinking-2025-05-14",
	"mid-conversation-system-2026-04-07",
	"oauth-2025-04-20",
	"prompt-caching-scope-2026-01-05",
	"structured-outputs-2025-12-15",
	"thinking-token-count-2026-05-13",
	"token-counting-2024-11-01",
}

// Server-side tool kinds gateway.server_tools may allow. A tool definition
// with a "type" (other than "custom") is one of Anthropic's: the API, not
// the worker, runs it. web_search and web_fetch must also name their
// allowed_domains, each allowed by egress.allow; an MCP server's URL must
// be allowed by egress.allow.
const (
	ServerToolWebSearch     = "web_search"
	ServerToolWebFetch      = "web_fetch"
	ServerToolCodeExecution = "code_execution"
	ServerToolMCP           = "mcp"
)

// ServerTools lists the kinds above.
var ServerTools = []string{ServerToolWebSearch, ServerToolWebFetch, ServerToolCodeExecution, ServerToolMCP}

// Policy is what a model-API request of one attempt may ask for. The zero
// Policy allows any model, any max_tokens and no server-side tools, no
// beta outside DefaultBetas, and no budget.
type Policy struct {
	// Models the attempt may use: its model and its fallback, as aliases
	// (opus, sonnet, haiku, fable, best, opusplan) or full model ids.
	// Empty: any model.
	Models []string
	// MaxTokens caps a request's max_tokens; 0: no cap.
	MaxTokens int64
	// Betas are allowed on top of DefaultBetas.
	Betas []string
	// ServerTools are the server-side tool kinds allowed (ServerTools).
	ServerTools []string
	// TaskUSD is the attempt's budget: once its spend (the API's usage at
	// the requested model's price) reaches it, every request is refused.
	// 0: none.
	TaskUSD float64
	// Run is the run's budget, shared by every attempt's gateway; nil: none.
	Run *Meter
	// CountTokensPerMinute bounds count_tokens requests (burst: a tenth of
	// it, at least 5); 0: DefaultCountTokensPerMinute.
	CountTokensPerMinute int
}

// DefaultCountTokensPerMinute bounds count_tokens requests, which the API
// does not bill: the CLI sends none in print mode, so this is generous.
const DefaultCountTokensPerMinute = 60

// topLevel are the body fields a Messages request may carry, and whether a
// count_tokens request may. Anything else (service_tier, container,
// mcp_servers without the MCP tool allowed, unknown fields) is refused.
var topLevel = map[string]bool{
	"model": true, "messages": true, "system": true, "tools": true, "tool_choice": true,
	"thinking": true, "context_management": true, "output_config": true, "mcp_servers": true,
	"max_tokens": false, "metadata": false, "stream": false, "temperature": false, "top_p": false,
	"top_k": false, "stop_sequences": false, "container": false,
}

// blockTypes are the content blocks a request may carry (the CLI's own:
// text, images and PDFs read from the workspace, its tool calls and their
// results, thinking). Server tool blocks are refused with the tools.
var blockTypes = map[string]bool{
	"text": true, "image": true, "document": true, "tool_use": true, "tool_result": true,
	"thinking": true, "redacted_thinking": true, "search_result": true,
}

// sourceTypes are the content sources a block may name: data carried in
// the request. A "url" source has the API fetch it (egress), a "file"
// source reads the organisation's Files API (another project's files).
var sourceTypes = map[string]bool{"base64": true, "text": true, "content": true}

// checked is what the gateway learnt from a request it accepted.
type checked struct {
	model       string
	countTokens bool
}

// refusal is why a request is refused: the HTTP status and the message the
// worker sees (in the API's error shape), the reason recorded.
type refusal struct {
	status int
	reason string
}

func refuse(status int, format string, args ...any) *refusal {
	return &refusal{status: status, reason: fmt.Sprintf(format, args...)}
}

// checkRoute allows exactly POST /v1/messages and POST
// /v1/messages/count_tokens, with no query but beta=true.
func checkRoute(r *http.Request) (countTokens bool, _ *refusal) {
	p := r.URL.Path
	if p != MessagesPath && p != CountTokensPath {
		return false, refuse(http.StatusNotFound, "only POST %s (and %s) is forwarded to the model API, not %s", MessagesPath, CountTokensPath, clip(p, 200))
	}
	if r.Method != http.MethodPost {
		return false, refuse(http.StatusMethodNotAllowed, "%s %s is not forwarded; only POST", r.Method, p)
	}
	for k, vs := range r.URL.Query() {
		if k != "beta" || len(vs) != 1 || vs[0] != "true" {
			return false, refuse(http.StatusBadRequest, "query parameter %q is not forwarded", clip(k, 64))
		}
	}
	return p == CountTokensPath, nil
}

// checkHeaders allows the beta features of the policy and an identity
// request body.
func (p *Policy) checkHeaders(h http.Header) *refusal {
	if enc := strings.TrimSpace(h.Get("Content-Encoding")); enc != "" && !strings.EqualFold(enc, "identity") {
		return refuse(http.StatusBadRequest, "request body in content encoding %q is not forwarded", clip(enc, 64))
	}
	for _, v := range h.Values("Anthropic-Beta") {
		for _, b := range strings.Split(v, ",") {
			b = strings.TrimSpace(b)
			if b == "" {
				continue
			}
			if !slices.Contains(DefaultBetas, b) && !slices.Contains(p.Betas, b) {
				return refuse(http.StatusBadRequest, "beta feature %q is not allowed (gateway.betas)", clip(b, 100))
			}
		}
	}
	return nil
}

// checkBody checks a request body against the policy and egress.allow
// (allow decides a server tool's domains and an MCP server's URL).
func (p *Policy) checkBody(body []byte, countTokens bool, allow func(host string, port int) bool) (checked, *refusal) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return checked{}, refuse(http.StatusBadRequest, "the request body is not a JSON object: %s", clip(err.Error(), 200))
	}
	var keys []string
	for k := range top {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		inCount, known := topLevel[k]
		if !known || countTokens && !inCount {
			return checked{}, refuse(http.StatusBadRequest, "request field %q is not forwarded", clip(k, 64))
		}
	}
	c := checked{countTokens: countTokens}
	if err := json.Unmarshal(top["model"], &c.model); err != nil || c.model == "" {
		return c, refuse(http.StatusBadRequest, "the request names no model")
	}
	if !p.modelAllowed(c.model) {
		return c, refuse(http.StatusBadRequest, "model %q is not this task's (%s)", clip(c.model, 100), strings.Join(p.Models, " or "))
	}
	if !countTokens {
		var mt int64
		if err := json.Unmarshal(top["max_tokens"], &mt); err != nil || mt <= 0 {
			return c, refuse(http.StatusBadRequest, "max_tokens is missing or not a positive integer")
		}
		if p.MaxTokens > 0 && mt > p.MaxTokens {
			return c, refuse(http.StatusBadRequest, "max_tokens %d is above the cap of %d (gateway.max_tokens)", mt, p.MaxTokens)
		}
	}
	if raw, ok := top["container"]; ok && !isNull(raw) && !slices.Contains(p.ServerTools, ServerToolCodeExecution) {
		return c, refuse(http.StatusBadRequest, "a code-execution container is not allowed (gateway.server_tools)")
	}
	if r := p.checkMCP(top["mcp_servers"], allow); r != nil {
		return c, r
	}
	if r := p.checkTools(top["tools"], allow); r != nil {
		return c, r
	}
	if raw, ok := top["system"]; ok && !isNull(raw) {
		if r := checkContent(raw, "system", 0); r != nil {
			return c, r
		}
	}
	var msgs []struct {
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(top["messages"], &msgs); err != nil {
		return c, refuse(http.StatusBadRequest, "messages is not a list of messages")
	}
	for i, m := range msgs {
		if r := checkContent(m.Content, fmt.Sprintf("messages.%d", i), 0); r != nil {
			return c, r
		}
	}
	return c, nil
}

// modelAllowed reports whether the request's model is one the attempt may
// use. An alias allows every model id of its family ("sonnet" allows
// claude-sonnet-5); a full id allows itself.
func (p *Policy) modelAllowed(model string) bool {
	if len(p.Models) == 0 {
		return true
	}
	m := strings.ToLower(strings.TrimSpace(model))
	for _, a := range p.Models {
		a = strings.ToLower(strings.TrimSpace(a))
		a = strings.TrimSuffix(a, "[1m]")
		families := aliasFamilies[a]
		if families == nil && a == m {
			return true
		}
		for _, f := range families {
			if strings.HasPrefix(m, "claude-"+f+"-") {
				return true
			}
		}
	}
	return false
}

// aliasFamilies are the CLI's model aliases and the families they resolve
// to (its --model table); opusplan is opus in plan mode, sonnet otherwise.
var aliasFamilies = map[string][]string{
	"opus": {"opus"}, "best": {"opus"}, "default": {"opus"}, "sonnet": {"sonnet"},
	"haiku": {"haiku"}, "fable": {"fable"}, "opusplan": {"opus", "sonnet"},
}

// checkTools refuses server-side tools the policy does not allow, and web
// tools whose domains egress.allow does not cover.
func (p *Policy) checkTools(raw json.RawMessage, allow func(string, int) bool) *refusal {
	if len(raw) == 0 || isNull(raw) {
		return nil
	}
	var tools []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &tools); err != nil {
		return refuse(http.StatusBadRequest, "tools is not a list of tool definitions")
	}
	for i, t := range tools {
		var typ string
		if rt, ok := t["type"]; ok {
			_ = json.Unmarshal(rt, &typ)
		}
		if typ == "" || typ == "custom" {
			continue
		}
		kind := serverToolKind(typ)
		if kind == "" || !slices.Contains(p.ServerTools, kind) {
			return refuse(http.StatusBadRequest, "tools.%d: server-side tool %q is not allowed (gateway.server_tools)", i, clip(typ, 64))
		}
		if kind != ServerToolWebSearch && kind != ServerToolWebFetch {
			continue
		}
		var domains []string
		_ = json.Unmarshal(t["allowed_domains"], &domains)
		if len(domains) == 0 {
			return refuse(http.StatusBadRequest, "tools.%d: %s must name its allowed_domains, each in egress.allow", i, typ)
		}
		for _, d := range domains {
			if !allow(d, 443) {
				return refuse(http.StatusBadRequest, "tools.%d: %s domain %q is not in egress.allow", i, typ, clip(d, 100))
			}
		}
	}
	return nil
}

// serverToolKind maps a versioned tool type ("web_fetch_20250910") to its
// kind, "" when it is none of ServerTools.
func serverToolKind(typ string) string {
	for _, k := range ServerTools {
		if k != ServerToolMCP && (typ == k || strings.HasPrefix(typ, k+"_")) {
			return k
		}
	}
	if strings.HasPrefix(typ, "mcp_toolset") {
		return ServerToolMCP
	}
	return ""
}

// checkMCP refuses MCP servers unless the policy allows them, each at a
// URL egress.allow covers.
func (p *Policy) checkMCP(raw json.RawMessage, allow func(string, int) bool) *refusal {
	if len(raw) == 0 || isNull(raw) {
		return nil
	}
	var servers []struct {
		URL string `json:"url"`
	}
	if err := json.Unmarshal(raw, &servers); err != nil {
		return refuse(http.StatusBadRequest, "mcp_servers is not a list of servers")
	}
	if len(servers) > 0 && !slices.Contains(p.ServerTools, ServerToolMCP) {
		return refuse(http.StatusBadRequest, "MCP servers are not allowed (gateway.server_tools)")
	}
	for i, s := range servers {
		u, err := url.Parse(s.URL)
		if err != nil || u.Scheme != "https" || u.Hostname() == "" {
			return refuse(http.StatusBadRequest, "mcp_servers.%d: url %q is not an https URL", i, clip(s.URL, 100))
		}
		port := 443
		if ps := u.Port(); ps != "" {
			if n, err := parsePort(ps); err == nil {
				port = n
			}
		}
		if !allow(u.Hostname(), port) {
			return refuse(http.StatusBadRequest, "mcp_servers.%d: %s is not in egress.allow", i, clip(u.Host, 100))
		}
	}
	return nil
}

// maxContentDepth bounds how deep content blocks nest (a tool result holds
// blocks, a document holds blocks); the CLI never goes past 2.
const maxContentDepth = 4

// checkContent checks a message's (or the system prompt's) content: a
// string, or blocks of the allowed types whose sources carry their data.
func checkContent(raw json.RawMessage, where string, depth int) *refusal {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] == '"' || isNull(raw) {
		return nil
	}
	if depth > maxContentDepth {
		return refuse(http.StatusBadRequest, "%s: content nested too deep", where)
	}
	var blocks []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return refuse(http.StatusBadRequest, "%s: content is neither text nor a list of blocks", where)
	}
	for i, b := range blocks {
		at := fmt.Sprintf("%s.content.%d", where, i)
		var typ string
		_ = json.Unmarshal(b["type"], &typ)
		if !blockTypes[typ] {
			return refuse(http.StatusBadRequest, "%s: content block type %q is not forwarded", at, clip(typ, 64))
		}
		if src, ok := b["source"]; ok && !isNull(src) {
			var s struct {
				Type    string          `json:"type"`
				Content json.RawMessage `json:"content"`
			}
			if err := json.Unmarshal(src, &s); err != nil || !sourceTypes[s.Type] {
				return refuse(http.StatusBadRequest, "%s: a %q source is not forwarded (only data in the request: base64, text)", at, clip(s.Type, 64))
			}
			if r := checkContent(s.Content, at+".source", depth+1); r != nil {
				return r
			}
		}
		if typ == "tool_result" {
			if r := checkContent(b["content"], at, depth+1); r != nil {
				return r
			}
		}
	}
	return nil
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }
