package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/cliprobe"
	"github.com/zergrush/zerg/internal/mockapi"
)

// Facts are what clidrift measured of one release.
type Facts struct {
	Binary, Version string
	// Betas, Fields and Unreviewed are over every model's session with an
	// API key; SubscriptionBetas a session with a subscription token.
	Betas, SubscriptionBetas, Fields, Unreviewed []string
	Resolved                                     map[string]string // alias → model id
	MaxTokens                                    map[string]int64  // alias → max_tokens asked
	Events                                       []string          // stream events, "type" or "type/subtype"
	UnknownEvents                                int
	HookKeys                                     []string // keys of the PreToolUse hook's input
	Flags                                        []string // flags its --help lists
	SettingsKeys                                 []string // top-level keys of its settings schema
	Platforms                                    []string // its npm package's platform packages
	// Problems are what breaks a promise zerg relies on.
	Problems []string
}

// The models of the sessions: zerg's defaults and opus.
var aliases = []string{"opus", "sonnet", "haiku"}

// What zerg relies on (docs/claude-code.md).
var (
	// zergSettings are the settings keys zerg writes for a worker.
	zergSettings = []string{"hooks", "permissions"}
	// zergHookKeys are the hook input keys zerg's hooks read.
	zergHookKeys = []string{"session_id", "cwd", "hook_event_name", "tool_name", "tool_input", "tool_use_id"}
	// zergFlags are the flags zerg passes. (--max-turns works but the
	// tested releases do not list it in --help.)
	zergFlags = []string{"-p", "--output-format", "--verbose", "--setting-sources", "--settings", "--strict-mcp-config",
		"--session-id", "--permission-mode", "--tools", "--model", "--fallback-model", "--max-budget-usd", "--append-system-prompt"}
	// zergPlatform is the platform package zerg's install finder knows.
	zergPlatform = "@anthropic-ai/claude-code-linux-x64"
)

// session is the scripted session of each model: every tool a worker has,
// with a rate limit on the first request (the api_retry event) and a
// refusal of the last turn (what the CLI prints when the model refuses).
const session = `{"usage": {"input_tokens": 10, "output_tokens": 2},
 "tasks": [{"name": "drift", "match": "zerg drift session:",
  "faults": [{"http": 429, "retry_after": 1, "first": 1}, {"stop": "refusal", "turn": 6}],
  "turns": [
   {"tools": [{"name": "Write", "input": {"file_path": "a.txt", "content": "one\n"}}]},
   {"tools": [{"name": "Read", "input": {"file_path": "a.txt"}}]},
   {"tools": [{"name": "Edit", "input": {"file_path": "a.txt", "old_string": "one", "new_string": "two"}}]},
   {"tools": [{"name": "Glob", "input": {"pattern": "*.txt"}}, {"name": "Grep", "input": {"pattern": "two"}}]},
   {"tools": [{"name": "Bash", "input": {"command": "cat a.txt", "description": "show"}}]},
   {"text": "done"}]}]}`

const sessionPrompt = "zerg drift session: write, read, edit, search and show a.txt."

// Measure runs the sessions and reads the binary.
func Measure(ctx context.Context, bin string) (*Facts, error) {
	f := &Facts{Binary: bin, Resolved: map[string]string{}, MaxTokens: map[string]int64{}}
	dir, err := os.MkdirTemp("", "zerg-clidrift-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	hook, err := recorder(dir)
	if err != nil {
		return nil, err
	}
	sc, err := mockapi.ParseScenario([]byte(session))
	if err != nil {
		return nil, err
	}
	worker := claude.Spec{Binary: bin, FallbackModel: "haiku", Hook: claude.HookSpec{ZergBinary: hook}}
	rep, err := cliprobe.Run(ctx, cliprobe.Config{Worker: worker, Models: aliases, Scenario: sc, Prompt: sessionPrompt, Timeout: 3 * time.Minute})
	if err != nil {
		return nil, err
	}
	f.Version, f.Betas, f.Fields, f.Unreviewed, f.UnknownEvents = rep.Version, rep.Betas, rep.Fields, rep.Unreviewed, rep.UnknownEvents
	f.Events = slices.Sorted(maps.Keys(rep.Events))
	for _, m := range rep.Models {
		if len(m.Resolved) > 0 {
			f.Resolved[m.Model] = m.Resolved[0]
		}
		f.MaxTokens[m.Model] = m.MaxTokens
		if m.Refused != nil {
			f.Problems = append(f.Problems, fmt.Sprintf("%s: zerg's gateway (default policy) refused the CLI's own request: %s", m.Model, m.Refused.Reason))
		}
		if m.Problem != "" {
			f.Problems = append(f.Problems, fmt.Sprintf("%s: %s", m.Model, m.Problem))
		}
	}
	sub := worker
	sub.API = claude.APISettings{OAuthToken: "subscription"}
	srep, err := cliprobe.Run(ctx, cliprobe.Config{Worker: sub, Models: []string{"sonnet"}})
	if err != nil {
		return nil, err
	}
	f.SubscriptionBetas = srep.Betas
	if _, r := srep.Refusal(); r != nil {
		f.Problems = append(f.Problems, "with a subscription token: zerg's gateway refused the CLI's own request: "+r.Reason)
	}
	if f.HookKeys, err = hookKeys(dir); err != nil {
		return nil, err
	}
	if f.Flags, err = helpFlags(ctx, bin); err != nil {
		return nil, err
	}
	if data, err := os.ReadFile(nativeBinary(bin)); err == nil {
		f.SettingsKeys = SettingsKeys(data)
	}
	f.Platforms = platforms(bin)
	f.check()
	return f, nil
}

// check lists what breaks a promise zerg relies on.
func (f *Facts) check() {
	missing := func(what string, want, have []string) {
		for _, w := range want {
			if !slices.Contains(have, w) {
				f.Problems = append(f.Problems, fmt.Sprintf("%s %q is gone", what, w))
			}
		}
	}
	if len(f.SettingsKeys) == 0 {
		f.Problems = append(f.Problems, "the settings schema could not be read from the binary")
	} else {
		missing("settings key", zergSettings, f.SettingsKeys)
	}
	if len(f.HookKeys) == 0 {
		f.Problems = append(f.Problems, "the PreToolUse hook never ran")
	} else {
		missing("hook input key", zergHookKeys, f.HookKeys)
	}
	missing("flag", zergFlags, f.Flags)
	missing("platform package", []string{zergPlatform}, f.Platforms)
}

// recorder writes a hook that keeps each input it gets in dir and allows
// the call (exit 0 with nothing on stdout: the permission mode decides).
func recorder(dir string) (string, error) {
	p := filepath.Join(dir, "hook.sh")
	script := fmt.Sprintf("#!/bin/sh\ncat > %q/hook-input.$$.json\nexit 0\n", dir)
	return p, os.WriteFile(p, []byte(script), 0o755)
}

// hookKeys are the keys of every hook input kept in dir.
func hookKeys(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "hook-input.*.json"))
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(data, &m) != nil {
			continue
		}
		for k := range m {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	return keys, nil
}

var flagRE = regexp.MustCompile(`(?m)^\s+(?:(-[a-zA-Z]), )?(--[a-z][a-z0-9-]*)`)

// helpFlags are the flags --help lists (short ones as -x).
func helpFlags(ctx context.Context, bin string) ([]string, error) {
	home, err := os.MkdirTemp("", "zerg-clidrift-home-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(home)
	cmd := exec.CommandContext(ctx, bin, "--help")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "CLAUDE_CONFIG_DIR=" + filepath.Join(home, "c"),
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "TERM=dumb", "COLUMNS=200"}
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s --help: %w", bin, err)
	}
	var flags []string
	for _, m := range flagRE.FindAllStringSubmatch(string(out), -1) {
		for _, fl := range m[1:] {
			if fl != "" && !slices.Contains(flags, fl) {
				flags = append(flags, fl)
			}
		}
	}
	sort.Strings(flags)
	return flags, nil
}

// nativeBinary is the platform binary behind the npm wrapper, where the
// settings schema is (the wrapper itself when it is the binary).
func nativeBinary(bin string) string {
	real, err := filepath.EvalSymlinks(bin)
	if err != nil {
		return bin
	}
	if fi, err := os.Stat(real); err == nil && fi.Size() > 1<<20 {
		return real
	}
	// node_modules/@anthropic-ai/claude-code/bin/claude.exe → ../../claude-code-linux-x64/claude
	return filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(real))), "claude-code-linux-x64", "claude")
}

// platforms are the platform packages of the npm package the binary is
// from (its package.json's optionalDependencies).
func platforms(bin string) []string {
	real, err := filepath.EvalSymlinks(bin)
	if err != nil {
		return nil
	}
	for d := filepath.Dir(real); d != filepath.Dir(d); d = filepath.Dir(d) {
		data, err := os.ReadFile(filepath.Join(d, "package.json"))
		if err != nil {
			continue
		}
		var pkg struct {
			Name     string            `json:"name"`
			Optional map[string]string `json:"optionalDependencies"`
		}
		if json.Unmarshal(data, &pkg) == nil && pkg.Name == "@anthropic-ai/claude-code" {
			return slices.Sorted(maps.Keys(pkg.Optional))
		}
	}
	return nil
}

// schemaAnchor is the description of the settings schema's first key,
// $schema: the object it opens lists every setting.
var schemaAnchor = []byte("JSON Schema reference for Claude Code settings")

// SettingsKeys reads the top-level keys of the settings schema embedded in
// a Claude Code binary: the object whose first key is "$schema" described
// by schemaAnchor, walked to its closing brace. Nil when it is not found.
// (The bundler writes it in several shapes: key:schema, key:()=>schema.)
func SettingsKeys(data []byte) []string {
	start := -1
	for from := 0; ; {
		i := bytes.Index(data[from:], schemaAnchor)
		if i < 0 {
			return nil
		}
		at := from + i
		if j := bytes.LastIndex(data[max(0, at-300):at], []byte("{$schema:")); j >= 0 {
			start = max(0, at-300) + j
			break
		}
		from = at + 1
	}
	var keys []string
	key := func(k int) {
		if m := keyRE.Find(data[k+1 : min(len(data), k+100)]); m != nil {
			keys = append(keys, string(m[:len(m)-1]))
		}
	}
	depth := 0
	var quote byte
	for k := start; k < len(data); k++ {
		c := data[k]
		switch {
		case quote != 0:
			if c == '\\' {
				k++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'' || c == '`':
			quote = c
		case c == '{' || c == '(' || c == '[':
			depth++
			if depth == 1 {
				key(k)
			}
		case c == '}' || c == ')' || c == ']':
			depth--
			if depth == 0 {
				sort.Strings(keys)
				return keys
			}
		case c == ',' && depth == 1:
			key(k)
		}
	}
	return nil
}

var keyRE = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*:`)

// Report prints what changed from old to cur, then cur's problems; it
// returns false when cur has a problem.
func Report(w io.Writer, old, cur *Facts) bool {
	fmt.Fprintf(w, "Claude Code %s (%s) against %s (%s)\n", cur.Version, cur.Binary, old.Version, old.Binary)
	diff := func(what string, was, is []string) {
		added, gone := minus(is, was), minus(was, is)
		switch {
		case len(added) == 0 && len(gone) == 0:
			fmt.Fprintf(w, "  %s: no change (%d)\n", what, len(is))
		default:
			fmt.Fprintf(w, "  %s: %d new, %d gone\n", what, len(added), len(gone))
			if len(added) > 0 {
				fmt.Fprintf(w, "    new:  %s\n", strings.Join(added, " "))
			}
			if len(gone) > 0 {
				fmt.Fprintf(w, "    gone: %s\n", strings.Join(gone, " "))
			}
		}
	}
	diff("betas", old.Betas, cur.Betas)
	diff("betas with a subscription token", old.SubscriptionBetas, cur.SubscriptionBetas)
	diff("body fields", old.Fields, cur.Fields)
	diff("stream events", old.Events, cur.Events)
	diff("hook input keys", old.HookKeys, cur.HookKeys)
	diff("settings keys", old.SettingsKeys, cur.SettingsKeys)
	diff("flags in --help", old.Flags, cur.Flags)
	diff("platform packages", old.Platforms, cur.Platforms)
	for _, a := range aliases {
		fmt.Fprintf(w, "  %s: %s, max_tokens %d (was %s, %d)\n", a, cur.Resolved[a], cur.MaxTokens[a], old.Resolved[a], old.MaxTokens[a])
	}
	if len(cur.Unreviewed) > 0 {
		fmt.Fprintf(w, "  not reviewed by zerg (forwarded and audited; gateway.strict refuses them): %s\n", strings.Join(cur.Unreviewed, ", "))
	}
	if cur.UnknownEvents > 0 {
		fmt.Fprintf(w, "  %d stream events of a type zerg's driver does not know (ignored, counted)\n", cur.UnknownEvents)
	}
	if len(cur.Problems) == 0 {
		fmt.Fprintln(w, "  no problem: every assumption zerg makes holds")
		return true
	}
	fmt.Fprintf(w, "  %d problem(s):\n", len(cur.Problems))
	for _, p := range cur.Problems {
		fmt.Fprintf(w, "    %s\n", p)
	}
	return false
}

// minus is what a holds that b does not.
func minus(a, b []string) []string {
	var out []string
	for _, s := range a {
		if !slices.Contains(b, s) {
			out = append(out, s)
		}
	}
	return out
}
