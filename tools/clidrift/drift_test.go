package main

import (
	"strings"
	"testing"
)

// The settings schema is found in each shape the bundler has written it
// (2.1.181: H.object({...}), 2.1.266: c({...}), 2.1.332: a thunk per key),
// with braces, parentheses and strings inside values skipped.
func TestSettingsKeys(t *testing.T) {
	for _, blob := range []string{
		`junk{$schema:1}x;return H.object({$schema:H.string().optional().describe("JSON Schema reference for Claude Code settings"),apiKeyHelper:H.string().describe("a, b: {c}"),hooks:H.record(H.object({x:1})),permissions:H.object({allow:H.array()})}).passthrough()`,
		`return{$schema:()=>r().optional().describe("JSON Schema reference for Claude Code settings"),apiKeyHelper:()=>r().describe('it\'s, x:'),hooks:()=>u({a:1}),permissions:()=>p([1,2])}`,
	} {
		got := strings.Join(SettingsKeys([]byte(blob)), " ")
		if got != "$schema apiKeyHelper hooks permissions" {
			t.Errorf("keys %q of %s", got, blob)
		}
	}
	if SettingsKeys([]byte("no schema here")) != nil {
		t.Error("keys from a binary without the schema")
	}
}

// Report names what is new and gone, and fails on a broken promise.
func TestReport(t *testing.T) {
	old := &Facts{Version: "1", Betas: []string{"a", "b"}, Resolved: map[string]string{}, MaxTokens: map[string]int64{}}
	cur := &Facts{Version: "2", Betas: []string{"b", "c"}, Resolved: map[string]string{}, MaxTokens: map[string]int64{},
		SettingsKeys: []string{"hooks"}, HookKeys: zergHookKeys, Flags: zergFlags, Platforms: []string{zergPlatform}}
	cur.check()
	var out strings.Builder
	if Report(&out, old, cur) {
		t.Error("a release without the permissions setting passed")
	}
	for _, want := range []string{"betas: 1 new, 1 gone", "new:  c", "gone: a", `settings key "permissions" is gone`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}
