package mockapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zergrush/zerg/internal/textx"
	"go.yaml.in/yaml/v3"
)

// Scenario is a parsed, validated script for the server. The format is
// documented in docs/mockapi.md; field names here mirror the YAML keys.
type Scenario struct {
	// APIKey, when set, is the only credential the scripted API takes (as
	// x-api-key or a bearer token): any other request is answered 401
	// authentication_error, as the real API answers a wrong key.
	APIKey string `yaml:"api_key"`
	// OAuthToken, when set, is a subscription token the scripted API takes
	// only in the shape the CLI sends one: "Authorization: Bearer <token>",
	// no x-api-key, and the beta oauth-2025-04-20 in anthropic-beta. With
	// APIKey also set, either credential is taken.
	OAuthToken string   `yaml:"oauth_token"`
	Seed       int64    `yaml:"seed"`
	Title      string   `yaml:"title"`
	Classifier string   `yaml:"classifier"`
	Usage      *Usage   `yaml:"usage"`
	Tasks      []*Task  `yaml:"tasks"`
	Default    *Script  `yaml:"default"`
	Faults     []*Fault `yaml:"faults"`
}

// RehearsalTimeout is the API timeout a rehearsal's workers get against s:
// 30 s past the longest think time a turn scripts (its delay), so that a
// slow scripted turn is waited for as a real answer would be, while an
// injected stall still costs seconds, not the CLI's default ten minutes.
// Faults' delays are not think times and do not count.
func (s *Scenario) RehearsalTimeout() time.Duration {
	longest := time.Duration(0)
	scripts := []*Script{s.Default}
	for _, t := range s.Tasks {
		scripts = append(scripts, &t.Script)
	}
	for _, sc := range scripts {
		if sc == nil {
			continue
		}
		for _, t := range sc.Turns {
			longest = max(longest, time.Duration(t.Delay))
		}
	}
	return longest + 30*time.Second
}

// Script is a sequence of turns plus the faults that apply to it.
type Script struct {
	Turns  []*Turn  `yaml:"turns"`
	Faults []*Fault `yaml:"faults"`
}

// Task is a script selected by the prompt of the first user message.
type Task struct {
	Name        string `yaml:"name"`
	Match       string `yaml:"match"`
	MatchRegexp string `yaml:"match_regexp"`
	Script      `yaml:",inline"`

	re *regexp.Regexp
}

// Turn is one assistant message: optional text and tool calls.
type Turn struct {
	Text   string     `yaml:"text"`
	Tools  []ToolCall `yaml:"tools"`
	Usage  *Usage     `yaml:"usage"`
	Delay  Duration   `yaml:"delay"`
	Faults []*Fault   `yaml:"faults"`
}

// ToolCall is one tool_use block. Input is sent verbatim as the tool input,
// but for {{NAME}} in its strings, where Captures names NAME: a Go regexp
// whose first group, in its last match in the tool results the request
// carries (newest first), takes its place. A scripted model can so pass
// on what a tool printed, as a real one would (a lease zerg tasks next
// printed, say).
type ToolCall struct {
	Name     string            `yaml:"name"`
	Input    map[string]any    `yaml:"input"`
	Captures map[string]string `yaml:"captures"`

	inputJSON []byte
	captures  map[string]*regexp.Regexp
}

// Usage holds token counts; nil fields fall back to the next level
// (turn → scenario → estimate).
type Usage struct {
	InputTokens              *int64 `yaml:"input_tokens"`
	OutputTokens             *int64 `yaml:"output_tokens"`
	CacheCreationInputTokens *int64 `yaml:"cache_creation_input_tokens"`
	CacheReadInputTokens     *int64 `yaml:"cache_read_input_tokens"`
}

// Fault selects requests (the selector fields) and says what to do with
// them (exactly one effect, inline or through AnyOf).
type Fault struct {
	Turn       int      `yaml:"turn"`
	Kinds      []string `yaml:"kinds"`
	Model      string   `yaml:"model"`
	First      int      `yaml:"first"`
	After      int      `yaml:"after"`
	Rate       *float64 `yaml:"rate"`
	MaxPerTurn int      `yaml:"max_per_turn"`
	// Sessions limits the fault to the first N sessions (workers, attempts)
	// that reach it, across the whole server: "the first 5 attempts fail".
	Sessions int `yaml:"sessions"`
	// AfterRequests: only once the server has had more than N requests of
	// the fault's kinds, from any session: "the account ran out of credit
	// after N requests".
	AfterRequests int `yaml:"after_requests"`
	Effect        `yaml:",inline"`
	AnyOf         []Effect `yaml:"any_of"`

	id string // stable identity for counters, hashing and the log
}

// Effect is what a fault does to the response.
type Effect struct {
	HTTP        int    `yaml:"http"`
	RetryAfter  *int   `yaml:"retry_after"`
	ErrorType   string `yaml:"error_type"`
	Message     string `yaml:"message"`
	ShouldRetry *bool  `yaml:"should_retry"`
	// Headers are sent with an http fault (e.g. anthropic-ratelimit-*-reset).
	Headers map[string]string `yaml:"headers"`
	// ResetIn fills the API's reset headers (ResetHeaders) with the moment
	// the answer is sent plus this, in RFC 3339: a usage limit that resets
	// soon, which a fixed time in headers cannot script.
	ResetIn   Duration `yaml:"reset_in"`
	Malformed string   `yaml:"malformed"`
	Stall     string   `yaml:"stall"`
	Duration  Duration `yaml:"duration"`
	Drop      string   `yaml:"drop"`
	Stop      string   `yaml:"stop"`
	Delay     Duration `yaml:"delay"`
}

// Duration accepts a Go duration string ("1.5s") or a number of seconds.
type Duration time.Duration

// UnmarshalYAML implements yaml.Unmarshaler.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: want a duration like \"2s\" or a number of seconds", n.Line)
	}
	s := strings.TrimSpace(n.Value)
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if f < 0 || f > 86400 || math.IsNaN(f) {
			return fmt.Errorf("line %d: duration %q out of range; use 0 to 86400 seconds", n.Line, s)
		}
		*d = Duration(f * float64(time.Second))
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return fmt.Errorf("line %d: bad duration %q; write it like \"500ms\" or \"2s\"", n.Line, s)
	}
	*d = Duration(v)
	return nil
}

// Request kinds, as recorded in Request.Kind and used by Fault.Kinds.
const (
	KindMain        = "main"
	KindFallback    = "fallback"
	KindTitle       = "title"
	KindClassifier  = "classifier"
	KindCountTokens = "count_tokens"
	KindHead        = "head"
	KindOther       = "other"
)

// ResetHeaders are the headers a fault's reset_in fills: the ones the
// Messages API sends with a limit's reset time.
var ResetHeaders = []string{"anthropic-ratelimit-requests-reset", "anthropic-ratelimit-tokens-reset"}

var (
	malformedKinds = []string{"garbage", "bad_json", "no_message_start", "truncated", "error_event"}
	stallKinds     = []string{"before_headers", "after_headers", "after_message_start"}
	dropKinds      = []string{"before_headers", "mid_stream"}
	stopKinds      = []string{"max_tokens", "refusal", "empty"}
	faultKinds     = []string{KindMain, KindFallback, KindTitle, KindClassifier}
)

// LoadScenario reads and validates a scenario file; errors name the file.
func LoadScenario(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read scenario: %w", err)
	}
	sc, err := ParseScenario(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return sc, nil
}

// ParseScenario decodes a YAML or JSON scenario and validates it. The error
// is one line naming the task, turn and field and what to do.
func ParseScenario(data []byte) (sc *Scenario, err error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("scenario is empty; add tasks or a default script (see docs/mockapi.md)")
	}
	// The YAML decoder has panicked on hostile input in the past; a scenario
	// error is better than a crashed server.
	defer func() {
		if r := recover(); r != nil {
			sc, err = nil, fmt.Errorf("scenario is not valid YAML or JSON (%v)", r)
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	sc = new(Scenario)
	if err := dec.Decode(sc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("scenario is empty; add tasks or a default script (see docs/mockapi.md)")
		}
		return nil, yamlError(err)
	}
	if err := sc.validate(); err != nil {
		return nil, err
	}
	return sc, nil
}

var notFoundRE = regexp.MustCompile(`field (\S+) not found in type mockapi\.(\w+)`)

// yamlError turns the decoder's multi-line errors into one actionable line.
func yamlError(err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg := textx.OneLine(te.Errors[0])
		if m := notFoundRE.FindStringSubmatch(msg); m != nil {
			where := map[string]string{"Scenario": "at the top level", "Task": "in a task", "Script": "in the default script",
				"Turn": "in a turn", "ToolCall": "in a tool call", "Usage": "in usage", "Fault": "in a fault", "Effect": "in an any_of effect"}[m[2]]
			msg = strings.Replace(msg, m[0], fmt.Sprintf("unknown field %q %s", m[1], where), 1)
			return fmt.Errorf("%s; check the spelling against docs/mockapi.md", msg)
		}
		return fmt.Errorf("%s; fix the value's type", msg)
	}
	return fmt.Errorf("%s; fix the YAML/JSON syntax", strings.TrimPrefix(textx.OneLine(err.Error()), "yaml: "))
}

func (sc *Scenario) validate() error {
	switch sc.Classifier {
	case "", "allow", "block":
	default:
		return fmt.Errorf("classifier: %q is not allowed; use allow or block", sc.Classifier)
	}
	if err := sc.Usage.validate("usage"); err != nil {
		return err
	}
	names := map[string]bool{}
	for i, t := range sc.Tasks {
		where := fmt.Sprintf("tasks[%d]", i)
		if t == nil {
			return fmt.Errorf("%s: empty task; give it a name, a match and turns", where)
		}
		if t.Name != "" {
			where += fmt.Sprintf(" (%q)", t.Name)
		}
		if t.Name == "" {
			return fmt.Errorf("%s.name: missing; give every task a unique name", where)
		}
		if names[t.Name] {
			return fmt.Errorf("%s.name: duplicate task name; task names must be unique", where)
		}
		names[t.Name] = true
		switch {
		case t.Match != "" && t.MatchRegexp != "":
			return fmt.Errorf("%s: both match and match_regexp are set; keep one", where)
		case t.Match == "" && t.MatchRegexp == "":
			return fmt.Errorf("%s.match: missing; give a substring of the prompt (or match_regexp)", where)
		case t.MatchRegexp != "":
			re, err := regexp.Compile(t.MatchRegexp)
			if err != nil {
				return fmt.Errorf("%s.match_regexp: %s; fix the Go regular expression", where, textx.OneLine(err.Error()))
			}
			t.re = re
		}
		if err := t.Script.validate(where, "tasks["+strconv.Itoa(i)+"]"); err != nil {
			return err
		}
	}
	if sc.Default != nil {
		if err := sc.Default.validate("default", "default"); err != nil {
			return err
		}
	}
	for i, f := range sc.Faults {
		if err := f.validate(fmt.Sprintf("faults[%d]", i), 0); err != nil {
			return err
		}
		f.id = fmt.Sprintf("faults[%d]", i)
	}
	return nil
}

func (s *Script) validate(where, id string) error {
	if len(s.Turns) == 0 {
		return fmt.Errorf("%s.turns: empty; add at least one turn with text or tools", where)
	}
	for i, t := range s.Turns {
		tw := fmt.Sprintf("%s.turns[%d]", where, i)
		if t == nil {
			return fmt.Errorf("%s: empty turn; give it text or tools", tw)
		}
		if t.Text == "" && len(t.Tools) == 0 {
			return fmt.Errorf("%s: neither text nor tools; give the turn text, tools or both", tw)
		}
		for j := range t.Tools {
			tc := &t.Tools[j]
			cw := fmt.Sprintf("%s.tools[%d]", tw, j)
			if tc.Name == "" {
				return fmt.Errorf("%s.name: missing; give the tool name, e.g. Write", cw)
			}
			in := tc.Input
			if in == nil {
				in = map[string]any{}
			}
			b, err := json.Marshal(normalize(in))
			if err != nil {
				return fmt.Errorf("%s.input: not representable as JSON (%s); use plain strings, numbers, lists and maps", cw, textx.OneLine(err.Error()))
			}
			tc.inputJSON = b
			for name, expr := range tc.Captures {
				re, err := regexp.Compile(expr)
				if err != nil {
					return fmt.Errorf("%s.captures.%s: %s; fix the Go regular expression", cw, name, textx.OneLine(err.Error()))
				}
				if re.NumSubexp() < 1 {
					return fmt.Errorf("%s.captures.%s: %q has no group; put what the capture takes in (parentheses)", cw, name, expr)
				}
				if !bytes.Contains(b, []byte("{{"+name+"}}")) {
					return fmt.Errorf("%s.captures.%s: the input has no {{%s}} to fill in", cw, name, name)
				}
				if tc.captures == nil {
					tc.captures = map[string]*regexp.Regexp{}
				}
				tc.captures[name] = re
			}
		}
		if err := t.Usage.validate(tw + ".usage"); err != nil {
			return err
		}
		for k, f := range t.Faults {
			fw := fmt.Sprintf("%s.faults[%d]", tw, k)
			if f != nil && f.Turn != 0 && f.Turn != i+1 {
				return fmt.Errorf("%s.turn: %d inside turn %d; drop the turn field in a turn's own faults", fw, f.Turn, i+1)
			}
			if err := f.validate(fw, len(s.Turns)); err != nil {
				return err
			}
			f.Turn = i + 1
			f.id = fmt.Sprintf("%s.turns[%d].faults[%d]", id, i, k)
		}
	}
	for k, f := range s.Faults {
		if err := f.validate(fmt.Sprintf("%s.faults[%d]", where, k), len(s.Turns)); err != nil {
			return err
		}
		f.id = fmt.Sprintf("%s.faults[%d]", id, k)
	}
	return nil
}

// normalize converts YAML's map[any]any (non-string keys) into JSON-friendly maps.
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = normalize(e)
		}
		return m
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = normalize(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = normalize(e)
		}
		return l
	default:
		return v
	}
}

func (u *Usage) validate(where string) error {
	if u == nil {
		return nil
	}
	for _, f := range []struct {
		name string
		v    *int64
	}{{"input_tokens", u.InputTokens}, {"output_tokens", u.OutputTokens},
		{"cache_creation_input_tokens", u.CacheCreationInputTokens}, {"cache_read_input_tokens", u.CacheReadInputTokens}} {
		if f.v != nil && *f.v < 0 {
			return fmt.Errorf("%s.%s: %d is negative; use a count ≥ 0", where, f.name, *f.v)
		}
	}
	return nil
}

// validate checks one fault; nturns is the script's length (0 for global
// faults, where any turn is allowed).
func (f *Fault) validate(where string, nturns int) error {
	if f == nil {
		return fmt.Errorf("%s: empty fault; give it an effect such as http: 429", where)
	}
	if f.Turn < 0 || (nturns > 0 && f.Turn > nturns) {
		return fmt.Errorf("%s.turn: %d is outside the script's turns 1..%d; use a turn number in that range", where, f.Turn, nturns)
	}
	for _, k := range f.Kinds {
		if !slices.Contains(faultKinds, k) {
			return fmt.Errorf("%s.kinds: %q is not a request kind; use %s", where, k, strings.Join(faultKinds, ", "))
		}
	}
	if f.First < 0 || f.After < 0 || f.MaxPerTurn < 0 || f.Sessions < 0 || f.AfterRequests < 0 {
		return fmt.Errorf("%s: first, after, max_per_turn, sessions and after_requests must be ≥ 0", where)
	}
	if r := f.Rate; r != nil && (*r < 0 || *r > 1 || math.IsNaN(*r)) {
		return fmt.Errorf("%s.rate: %v is not a probability; use a number from 0 to 1 (0.3 = 30%%)", where, *r)
	}
	n := f.Effect.count()
	switch {
	case n == 0 && len(f.AnyOf) == 0:
		return fmt.Errorf("%s: no effect; give one of http, malformed, stall, drop, stop, delay or any_of", where)
	case n > 0 && len(f.AnyOf) > 0:
		return fmt.Errorf("%s: both an effect and any_of; put every effect inside any_of", where)
	case n > 0:
		return f.Effect.validate(where)
	}
	for i := range f.AnyOf {
		if f.AnyOf[i].count() == 0 {
			return fmt.Errorf("%s.any_of[%d]: no effect; give one of http, malformed, stall, drop, stop or delay", where, i)
		}
		if err := f.AnyOf[i].validate(fmt.Sprintf("%s.any_of[%d]", where, i)); err != nil {
			return err
		}
	}
	return nil
}

func (e *Effect) count() int {
	n := 0
	for _, set := range []bool{e.HTTP != 0, e.Malformed != "", e.Stall != "", e.Drop != "", e.Stop != "", e.Delay != 0} {
		if set {
			n++
		}
	}
	return n
}

func (e *Effect) validate(where string) error {
	if n := e.count(); n != 1 {
		return fmt.Errorf("%s: %d effects in one fault; give exactly one of http, malformed, stall, drop, stop, delay", where, n)
	}
	if e.HTTP == 0 && (e.RetryAfter != nil || e.ErrorType != "" || e.Message != "" || e.ShouldRetry != nil || len(e.Headers) > 0 || e.ResetIn != 0) {
		return fmt.Errorf("%s: retry_after, error_type, message, should_retry, headers and reset_in only go with http", where)
	}
	if e.Stall == "" && e.Duration != 0 {
		return fmt.Errorf("%s.duration: only goes with stall; use delay for a slow but normal answer", where)
	}
	switch {
	case e.HTTP != 0 && (e.HTTP < 400 || e.HTTP > 599):
		return fmt.Errorf("%s.http: %d is not an error status; use 400 to 599 (e.g. 429, 500, 529)", where, e.HTTP)
	case e.RetryAfter != nil && *e.RetryAfter < 0:
		return fmt.Errorf("%s.retry_after: %d is negative; use seconds ≥ 0 (the CLI gives up above 60)", where, *e.RetryAfter)
	case e.Malformed != "" && !slices.Contains(malformedKinds, e.Malformed):
		return fmt.Errorf("%s.malformed: %q is unknown; use %s", where, e.Malformed, strings.Join(malformedKinds, ", "))
	case e.Stall != "" && !slices.Contains(stallKinds, e.Stall):
		return fmt.Errorf("%s.stall: %q is unknown; use %s", where, e.Stall, strings.Join(stallKinds, ", "))
	case e.Drop != "" && !slices.Contains(dropKinds, e.Drop):
		return fmt.Errorf("%s.drop: %q is unknown; use %s", where, e.Drop, strings.Join(dropKinds, ", "))
	case e.Stop != "" && !slices.Contains(stopKinds, e.Stop):
		return fmt.Errorf("%s.stop: %q is unknown; use %s", where, e.Stop, strings.Join(stopKinds, ", "))
	}
	return nil
}

// String describes the effect for the request log, e.g. "http 429".
func (e *Effect) String() string {
	switch {
	case e.HTTP != 0:
		return "http " + strconv.Itoa(e.HTTP)
	case e.Malformed != "":
		return "malformed " + e.Malformed
	case e.Stall != "":
		if e.Duration > 0 {
			return fmt.Sprintf("stall %s %s", e.Stall, time.Duration(e.Duration))
		}
		return "stall " + e.Stall
	case e.Drop != "":
		return "drop " + e.Drop
	case e.Stop != "":
		return "stop " + e.Stop
	case e.Delay != 0:
		return "delay " + time.Duration(e.Delay).String()
	}
	return "none"
}

// Matches reports whether the task's script answers a session whose first
// user message is prompt: the server's own rule, for checking a scenario
// against the prompts a run will send (zerg mockapi check FEATURE).
func (t *Task) Matches(prompt string) bool { return t.matches(prompt) }

// Describe names the task and its match for a person: name (match "…").
func (t *Task) Describe() string {
	if t.MatchRegexp != "" {
		return fmt.Sprintf("%q (match_regexp %q)", t.Name, t.MatchRegexp)
	}
	return fmt.Sprintf("%q (match %q)", t.Name, t.Match)
}

// matches reports whether the task's script applies to prompt.
func (t *Task) matches(prompt string) bool {
	if t.re != nil {
		return t.re.MatchString(prompt)
	}
	return strings.Contains(prompt, t.Match)
}

// kinds are the request kinds the fault applies to.
func (f *Fault) kinds() []string {
	if len(f.Kinds) == 0 {
		return []string{KindMain, KindFallback}
	}
	return f.Kinds
}
