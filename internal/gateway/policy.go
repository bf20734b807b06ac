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

// KnownBetas are the beta features zerg has reviewed: every one the
// Claude Code releases of its tested range send (docs/claude-code.md
// lists them by release), with any model, with a subscription token, for
// token counting and for structured output. Each changes how the API
// treats a request whose content the body checks below bound; none
// reaches past the sandbox on its own.
var KnownBetas = []string{
	"advanced-tool-use-2025-11-20",
	"claude-code-20250219",
	"context-1m-2025-08-07",
	"context-management-2025-06-27",
	"effort-2025-11-24",
	"extended-cache-ttl-2025-04-11", // with a subscription token (measured)
	"fallback-credit-2026-06-01",
	"interleaved-thinking-2025-05-14",
	"mid-conversation-system-2026-04-07",
	"mid-conversation-tool-changes-2026-07-01",
	"oauth-2025-04-20",
	"per-turn-control-2026-07-01",
	"prompt-caching-scope-2026-01-05",
	"structured-outputs-2025-12-15",
	"thinking-display-updates-2026-08-18",
	"thinking-token-count-2026-05-13",
	"token-counting-2024-11-01",
}

// deniedBetas are the families of beta features that switch on what
// reaches past the sandbox or into another project's data: a beta whose
// name holds one of these words (whole, between hyphens) is refused
// whoever sends it, the CLI included, unless gateway.betas names it. The
// body checks refuse what these features are used with anyway; the
// header is refused so that nothing new of the family slips through.
var deniedBetas = []struct{ words, feature string }{
	{"mcp", "the MCP connector (the API calls outside servers)"},
	{"files-api", "the Files API (the organisation's files)"},
	{"code-execution", "code execution in Anthropic's containers"},
	{"container", "Anthropic's containers"},
	{"skills", "Agent Skills (code in Anthropic's containers)"},
	{"computer-use", "computer use"},
	{"web-fetch", "the API fetching URLs"},
	{"web-search", "the API searching the web"},
	{"batches", "message batches under the operator's key"},
	{"managed-agents", "agents that run on Anthropic's side"},
	{"environments", "remote environments"},
	{"ccr", "remote Claude Code sessions"},
}

// deniedBeta is the feature a beta of a denied family switches on, "" for
// any other beta.
func deniedBeta(b string) string {
	name := "-" + strings.ToLower(b) + "-"
	for _, d := range deniedBetas {
		if strings.Contains(name, "-"+d.words+"-") {
			return d.feature
		}
	}
	return ""
}

// DefaultMaxTokens is the cap on a request's max_tokens when
// gateway.max_tokens is 0 and the launch probe did not say more: the most
// a release of the tested range asks for (128000, with every model).
const DefaultMaxTokens = 128000

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
// Policy allows any model, any max_tokens, no server-side tools, no beta
// of a denied family, and no budget; it forwards what zerg has not
// reviewed (Stats.Unreviewed).
type Policy struct {
	// Models the attempt may use: its model and its fallback, as aliases
	// (opus, sonnet, haiku, fable, best, opusplan) or full model ids.
	// Empty: any model.
	Models []string
	// Resolved are the model ids the CLI sends for an alias, as zerg's
	// launch probe saw them (internal/cliprobe): an alias allows them on
	// top of its family.
	Resolved map[string][]string
	// MaxTokens caps a request's max_tokens; 0: no cap.
	MaxTokens int64
	// Betas are allowed on top of KnownBetas, denied families included.
	Betas []string
	// Reviewed replaces KnownBetas when set: what zerg's control tests
	// use to run a release against an older release's list.
	Reviewed []string
	// Strict refuses every beta, body field and content block zerg has
	// not reviewed (KnownBetas, the fields and blocks below) instead of
	// forwarding it: gateway.strict, for a CLI release one has reviewed.
	Strict bool
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

// topLevel are the body fields zerg has reviewed, and whether a
// count_tokens request may carry each. container and mcp_servers are
// checked against gateway.server_tools below.
var topLevel = map[string]bool{
	"model": true, "messages": true, "system": true, "tools": true, "tool_choice": true,
	"thinking": true, "context_management": true, "output_config": true, "output_format": true, "mcp_servers": true,
	"max_tokens": false, "metadata": false, "stream": false, "temperature": false, "top_p": false,
	"top_k": false, "stop_sequences": false, "container": false,
}

// deniedFields are body fields refused whatever the policy: what they ask
// for is not priced by the budget or reaches past the sandbox.
var deniedFields = map[string]string{
	"service_tier": "a service tier other than the one the budget is priced at",
}

// blockTypes are the content blocks zerg has reviewed (the CLI's own:
// text, images and PDFs read from the workspace, its tool calls and their
// results, thinking).
var blockTypes = map[string]bool{
	"text": true, "image": true, "document": true, "tool_use": true, "tool_result": true,
	"thinking": true, "redacted_thinking": true, "search_result": true,
}

// deniedBlocks are content blocks refused whatever the policy.
var deniedBlocks = map[string]string{
	"container_upload": "puts a file of the Files API into a container",
}

// sourceTypes are the content sources a block may name: data carried in
// the request. A "url" source has the API fetch it (egress), a "file"
// source reads the organisation's Files API (another project's files);
// any other is refused, reviewed or not: a source is how the API reaches
// out.
var sourceTypes = map[string]bool{"base64": true, "text": true, "content": true}

// checked is what the gateway learnt from a request it accepted.
type checked struct {
	model       string
	countTokens bool
	fields      []string
	maxTokens   int64
	// unreviewed are the fields and blocks forwarded that zerg has not
	// reviewed ("field x", "block y").
	unreviewed []string
}

// refusal is why a request is refused: the HTTP status and the message the
// worker sees (in the API's error shape), the reason recorded, and what the
// operator can change when the refused request is the CLI's own.
type refusal struct {
	status int
	reason string
	fix    string
}

func refuse(status int, format string, args ...any) *refusal {
	return &refusal{status: status, reason: fmt.Sprintf(format, args...)}
}

// because sets the fix of a refusal.
func (r *refusal) because(format string, args ...any) *refusal {
	r.fix = fmt.Sprintf(format, args...)
	return r
}

// fixRelease is the fix of what no setting allows.
const fixRelease = "no setting allows it: use a Claude Code release of zerg's tested range (zerg doctor names it)"

// checkRoute allows exactly POST /v1/messages and POST
// /v1/messages/count_tokens, with no query but beta=true.
func checkRoute(r *http.Request) (countTokens bool, _ *refusal) {
	p := r.URL.Path
	if p != MessagesPath && p != CountTokensPath {
		return false, refuse(http.StatusNotFound, "only POST %s (and %s) is forwarded to the model API, not %s", MessagesPath, CountTokensPath, clip(p, 200)).because(fixRelease)
	}
	if r.Method != http.MethodPost {
		return false, refuse(http.StatusMethodNotAllowed, "%s %s is not forwarded; only POST", r.Method, p).because(fixRelease)
	}
	for k, vs := range r.URL.Query() {
		if k != "beta" || len(vs) != 1 || vs[0] != "true" {
			return false, refuse(http.StatusBadRequest, "query parameter %q is not forwarded", clip(k, 64)).because(fixRelease)
		}
	}
	return p == CountTokensPath, nil
}

// checkHeaders allows an identity request body and the beta features of
// the policy: gateway.betas, then any but a denied family's, forwarding
// those zerg has not reviewed unless the policy is strict. It returns the
// betas the request named and those of them zerg has not reviewed.
func (p *Policy) checkHeaders(h http.Header) (betas, unreviewed []string, _ *refusal) {
	if enc := strings.TrimSpace(h.Get("Content-Encoding")); enc != "" && !strings.EqualFold(enc, "identity") {
		return nil, nil, refuse(http.StatusBadRequest, "request body in content encoding %q is not forwarded", clip(enc, 64)).because(fixRelease)
	}
	for _, v := range h.Values("Anthropic-Beta") {
		for _, b := range strings.Split(v, ",") {
			b = strings.TrimSpace(b)
			if b == "" {
				continue
			}
			betas = append(betas, b)
			switch {
			case slices.Contains(p.Betas, b):
			case deniedBeta(b) != "":
				return betas, unreviewed, refuse(http.StatusBadRequest, "beta feature %q switches on %s, which reaches past the sandbox (gateway.betas)", clip(b, 100), deniedBeta(b)).
					because("add %q to gateway.betas in .zerg/config.yaml if workers may use %s", b, deniedBeta(b))
			case slices.Contains(p.reviewed(), b):
			case p.Strict:
				return betas, unreviewed, refuse(http.StatusBadRequest, "beta feature %q is not one zerg has reviewed (gateway.strict)", clip(b, 100)).
					because("add %q to gateway.betas in .zerg/config.yaml, or set gateway.strict: false (zerg then forwards it and audits it)", b)
			default:
				unreviewed = append(unreviewed, "beta "+clip(b, 100))
			}
		}
	}
	return betas, unreviewed, nil
}

func (p *Policy) reviewed() []string {
	if p.Reviewed != nil {
		return p.Reviewed
	}
	return KnownBetas
}

// checkBody checks a request body against the policy and egress.allow
// (allow decides a server tool's domains and an MCP server's URL).
func (p *Policy) checkBody(body []byte, countTokens bool, allow func(host string, port int) bool) (checked, *refusal) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return checked{}, refuse(http.StatusBadRequest, "the request body is not a JSON object: %s", clip(err.Error(), 200)).because(fixRelease)
	}
	c := checked{countTokens: countTokens}
	for k := range top {
		c.fields = append(c.fields, k)
	}
	sort.Strings(c.fields)
	for _, k := range c.fields {
		inCount, known := topLevel[k]
		switch {
		case deniedFields[k] != "":
			return c, refuse(http.StatusBadRequest, "request field %q is not forwarded: it asks for %s", clip(k, 64), deniedFields[k]).because(fixRelease)
		case known && countTokens && !inCount:
			return c, refuse(http.StatusBadRequest, "request field %q is not forwarded with count_tokens", clip(k, 64)).because(fixRelease)
		case known:
		case p.Strict:
			return c, refuse(http.StatusBadRequest, "request field %q is not one zerg has reviewed (gateway.strict)", clip(k, 64)).
				because("set gateway.strict: false in .zerg/config.yaml (zerg then forwards the field and audits it)")
		default:
			c.unreviewed = append(c.unreviewed, "field "+clip(k, 64))
		}
	}
	if err := json.Unmarshal(top["model"], &c.model); err != nil || c.model == "" {
		return c, refuse(http.StatusBadRequest, "the request names no model").because(fixRelease)
	}
	if !p.ModelAllowed(c.model) {
		return c, refuse(http.StatusBadRequest, "model %q is not this task's (%s)", clip(c.model, 100), strings.Join(p.Models, " or ")).
			because("the CLI sends %q for %s: give the task (or models.*) that model id", clip(c.model, 100), strings.Join(p.Models, " or "))
	}
	if !countTokens {
		if err := json.Unmarshal(top["max_tokens"], &c.maxTokens); err != nil || c.maxTokens <= 0 {
			return c, refuse(http.StatusBadRequest, "max_tokens is missing or not a positive integer").because(fixRelease)
		}
		if p.MaxTokens > 0 && c.maxTokens > p.MaxTokens {
			return c, refuse(http.StatusBadRequest, "max_tokens %d is above the cap of %d (gateway.max_tokens)", c.maxTokens, p.MaxTokens).
				because("set gateway.max_tokens in .zerg/config.yaml to at least %d, or to 0 (the default: what the CLI asks for)", c.maxTokens)
		}
	}
	if raw, ok := top["container"]; ok && !isNull(raw) && !slices.Contains(p.ServerTools, ServerToolCodeExecution) {
		return c, refuse(http.StatusBadRequest, "a code-execution container is not allowed (gateway.server_tools)").
			because("add %s to gateway.server_tools in .zerg/config.yaml if workers may run code in Anthropic's containers", ServerToolCodeExecution)
	}
	if r := p.checkMCP(top["mcp_servers"], allow); r != nil {
		return c, r
	}
	if r := p.checkTools(top["tools"], allow); r != nil {
		return c, r
	}
	if raw, ok := top["system"]; ok && !isNull(raw) {
		if r := p.checkContent(&c, raw, "system", 0); r != nil {
			return c, r
		}
	}
	var msgs []struct {
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(top["messages"], &msgs); err != nil {
		return c, refuse(http.StatusBadRequest, "messages is not a list of messages").because(fixRelease)
	}
	for i, m := range msgs {
		if r := p.checkContent(&c, m.Content, fmt.Sprintf("messages.%d", i), 0); r != nil {
			return c, r
		}
	}
	return c, nil
}

// ModelAllowed reports whether a request's model is one the attempt may
// use. An alias allows every model id of its family ("sonnet" allows
// claude-sonnet-5-5) and the ids the launch probe saw the CLI send for it;
// a full id allows itself.
func (p *Policy) ModelAllowed(model string) bool {
	if len(p.Models) == 0 {
		return true
	}
	m := strings.ToLower(strings.TrimSpace(model))
	for _, a := range p.Models {
		a = strings.ToLower(strings.TrimSpace(a))
		if a == m {
			return true
		}
		a = strings.TrimSuffix(a, "[1m]")
		for _, f := range aliasFamilies[a] {
			if strings.HasPrefix(m, "claude-"+f+"-") {
				return true
			}
		}
		for alias, ids := range p.Resolved {
			if strings.TrimSuffix(strings.ToLower(alias), "[1m]") != a {
				continue
			}
			for _, id := range ids {
				if strings.ToLower(id) == m {
					return true
				}
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
		return refuse(http.StatusBadRequest, "tools is not a list of tool definitions").because(fixRelease)
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
			r := refuse(http.StatusBadRequest, "tools.%d: server-side tool %q is not allowed (gateway.server_tools)", i, clip(typ, 64))
			if kind == "" {
				return r.because(fixRelease)
			}
			return r.because("add %s to gateway.server_tools in .zerg/config.yaml if workers may have the API run it", kind)
		}
		if kind != ServerToolWebSearch && kind != ServerToolWebFetch {
			continue
		}
		var domains []string
		_ = json.Unmarshal(t["allowed_domains"], &domains)
		if len(domains) == 0 {
			return refuse(http.StatusBadRequest, "tools.%d: %s must name its allowed_domains, each in egress.allow", i, typ).because(fixRelease)
		}
		for _, d := range domains {
			if !allow(d, 443) {
				return refuse(http.StatusBadRequest, "tools.%d: %s domain %q is not in egress.allow", i, typ, clip(d, 100)).because("add %q to egress.allow in .zerg/config.yaml if workers may reach it", d)
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
		return refuse(http.StatusBadRequest, "mcp_servers is not a list of servers").because(fixRelease)
	}
	if len(servers) > 0 && !slices.Contains(p.ServerTools, ServerToolMCP) {
		return refuse(http.StatusBadRequest, "MCP servers are not allowed (gateway.server_tools)").because("add %s to gateway.server_tools in .zerg/config.yaml if workers may use MCP servers", ServerToolMCP)
	}
	for i, s := range servers {
		u, err := url.Parse(s.URL)
		if err != nil || u.Scheme != "https" || u.Hostname() == "" {
			return refuse(http.StatusBadRequest, "mcp_servers.%d: url %q is not an https URL", i, clip(s.URL, 100)).because(fixRelease)
		}
		port := 443
		if ps := u.Port(); ps != "" {
			if n, err := parsePort(ps); err == nil {
				port = n
			}
		}
		if !allow(u.Hostname(), port) {
			return refuse(http.StatusBadRequest, "mcp_servers.%d: %s is not in egress.allow", i, clip(u.Host, 100)).because("add %q to egress.allow in .zerg/config.yaml if workers may reach it", u.Host)
		}
	}
	return nil
}

// maxContentDepth bounds how deep content blocks nest (a tool result holds
// blocks, a document holds blocks); the CLI never goes past 2.
const maxContentDepth = 4

// checkContent checks a message's (or the system prompt's) content: a
// string, or blocks whose sources carry their data, none of a denied type
// and, under a strict policy, none zerg has not reviewed. Nested content
// (a tool result's, a document's) is checked the same way.
func (p *Policy) checkContent(c *checked, raw json.RawMessage, where string, depth int) *refusal {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] == '"' || isNull(raw) {
		return nil
	}
	if depth > maxContentDepth {
		return refuse(http.StatusBadRequest, "%s: content nested too deep", where).because(fixRelease)
	}
	var blocks []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return refuse(http.StatusBadRequest, "%s: content is neither text nor a list of blocks", where).because(fixRelease)
	}
	for i, b := range blocks {
		at := fmt.Sprintf("%s.content.%d", where, i)
		var typ string
		_ = json.Unmarshal(b["type"], &typ)
		switch {
		case deniedBlocks[typ] != "":
			return refuse(http.StatusBadRequest, "%s: content block type %q is not forwarded: it %s", at, clip(typ, 64), deniedBlocks[typ]).because(fixRelease)
		case blockTypes[typ]:
		case typ == "":
			return refuse(http.StatusBadRequest, "%s: a content block without a type is not forwarded", at).because(fixRelease)
		case p.Strict:
			return refuse(http.StatusBadRequest, "%s: content block type %q is not one zerg has reviewed (gateway.strict)", at, clip(typ, 64)).
				because("set gateway.strict: false in .zerg/config.yaml (zerg then forwards the block and audits it)")
		default:
			if u := "block " + clip(typ, 64); !slices.Contains(c.unreviewed, u) {
				c.unreviewed = append(c.unreviewed, u)
			}
		}
		if src, ok := b["source"]; ok && !isNull(src) {
			var s struct {
				Type    string          `json:"type"`
				Content json.RawMessage `json:"content"`
			}
			if err := json.Unmarshal(src, &s); err != nil || !sourceTypes[s.Type] {
				return refuse(http.StatusBadRequest, "%s: a %q source is not forwarded (only data in the request: base64, text)", at, clip(s.Type, 64)).because(fixRelease)
			}
			if r := p.checkContent(c, s.Content, at+".source", depth+1); r != nil {
				return r
			}
		}
		if inner, ok := b["content"]; ok {
			if r := p.checkContent(c, inner, at, depth+1); r != nil {
				return r
			}
		}
	}
	return nil
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }
