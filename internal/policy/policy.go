package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/zergrush/zerg/internal/policy/bash"
	"github.com/zergrush/zerg/internal/policy/resolve"
	"github.com/zergrush/zerg/internal/security"
	"github.com/zergrush/zerg/internal/spec"
	"github.com/zergrush/zerg/internal/textx"
)

// Version is the only policy file version this build understands.
// Version 2 added the read scope, the protected paths and the Bash rules;
// a version-1 file is refused (it would silently allow every read).
const Version = 2

// Policy is what one attempt's worker may do through its tools: which files
// inside the workspace the file-editing tools may write, where the read tools
// may look, and which shell commands the Bash tool may run. It is written by
// the driver next to the attempt's settings file, outside the workspace, and
// read by the PreToolUse hook for every tool call.
type Policy struct {
	Version int `json:"version"`
	// Workspace is the absolute path of the worker's checkout. Nothing outside
	// it is ever writable through a tool, and nothing outside it and ReadDirs
	// is readable.
	Workspace string `json:"workspace"`
	// Allow lists repo-relative paths or doublestar globs ("internal/x/**",
	// "docs/*.md") the write tools may touch. A pattern ending in "/" means
	// the whole directory.
	Allow []string `json:"allow"`
	// ReadDirs are extra absolute directories the read tools (and Bash
	// arguments) may read, e.g. a shared context directory. Usually empty.
	ReadDirs []string `json:"read_dirs,omitempty"`
	// Protected are absolute paths (files or directories) never writable,
	// whatever Allow says: the attempt's own policy and settings files.
	Protected []string `json:"protected,omitempty"`
	// Protect are the repository-relative globs no worker may write,
	// whatever Allow says: the very list the check of a result's commit
	// uses (security.DefaultProtected and security.protected_paths). nil:
	// security.DefaultProtected().
	Protect []string `json:"protect,omitempty"`
	// Opened are the task's own entries that security.allow_protected
	// opens: a write there is allowed although Protect covers it.
	Opened []string `json:"opened,omitempty"`
	// Bash says which commands the Bash tool may run.
	Bash bash.Policy `json:"bash"`
}

// ErrBad marks a policy that cannot be used; the hook denies everything then.
var ErrBad = errors.New("bad policy")

// Validate checks that the policy can be enforced: an absolute workspace,
// patterns that are relative, free of "..", and valid globs, absolute
// read and protected paths, and well-formed Bash rules.
func (p *Policy) Validate() error {
	if p.Version != Version {
		return fmt.Errorf("%w: version %d, want %d", ErrBad, p.Version, Version)
	}
	if p.Workspace == "" || !filepath.IsAbs(p.Workspace) {
		return fmt.Errorf("%w: workspace %q is not an absolute path", ErrBad, p.Workspace)
	}
	for _, pat := range p.Allow {
		if err := validatePattern(pat); err != nil {
			return fmt.Errorf("%w: allow pattern %q: %v", ErrBad, pat, err)
		}
	}
	for i, dirs := range [][]string{p.ReadDirs, p.Protected} {
		for _, d := range dirs {
			if !filepath.IsAbs(d) {
				return fmt.Errorf("%w: %s %q is not an absolute path", ErrBad, []string{"read dir", "protected path"}[i], d)
			}
		}
	}
	if _, err := security.ProtectionOf(p.Protect); err != nil {
		return fmt.Errorf("%w: %v", ErrBad, err)
	}
	if err := p.Bash.Validate(); err != nil {
		return fmt.Errorf("%w: %v", ErrBad, err)
	}
	return nil
}

func validatePattern(pat string) error {
	switch {
	case strings.TrimSpace(pat) == "":
		return errors.New("empty")
	case strings.HasPrefix(pat, "/"), filepath.IsAbs(pat):
		return errors.New("must be relative to the workspace")
	case strings.Contains(pat, "\\"):
		return errors.New("use forward slashes")
	}
	for _, seg := range strings.Split(strings.TrimSuffix(pat, "/"), "/") {
		if seg == ".." {
			return errors.New(`must not contain ".."`)
		}
	}
	if !doublestar.ValidatePattern(pat) {
		return errors.New("invalid glob")
	}
	return nil
}

// Load reads and validates a policy file. Unknown fields are errors:
// a newer driver's rule this hook does not know must not be ignored.
func Load(path string) (*Policy, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read policy: %w", err)
	}
	var p Policy
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("%w: parse %s: %v", ErrBad, path, err)
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &p, nil
}

// Write writes p as JSON to path after validating it. The file is
// 0644: the hook runs as the worker's user and must read it, and nothing in
// it is secret; it must not be writable by that user (the caller owns it).
func Write(path string, p *Policy) error {
	if err := p.Validate(); err != nil {
		return err
	}
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return fmt.Errorf("encode policy: %w", err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write policy: %w", err)
	}
	// WriteFile keeps the mode of an existing file; make it exact.
	if err := os.Chmod(path, 0o644); err != nil {
		return fmt.Errorf("write policy: %w", err)
	}
	return nil
}

// HookInput is the part of Claude Code's PreToolUse hook stdin the policy needs.
type HookInput struct {
	SessionID     string          `json:"session_id"`
	Cwd           string          `json:"cwd"`
	HookEventName string          `json:"hook_event_name"`
	ToolName      string          `json:"tool_name"`
	ToolInput     json.RawMessage `json:"tool_input"`
	ToolUseID     string          `json:"tool_use_id"`
}

// maxHookInput bounds what the hook reads: a Write carries the whole file.
const maxHookInput = 64 << 20

// ReadHookInput decodes the hook JSON from r. Anything malformed is an error,
// which the hook turns into a deny.
func ReadHookInput(r io.Reader) (*HookInput, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxHookInput+1))
	if err != nil {
		return nil, fmt.Errorf("read hook input: %w", err)
	}
	if len(data) > maxHookInput {
		return nil, fmt.Errorf("hook input larger than %d bytes", maxHookInput)
	}
	var in HookInput
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, fmt.Errorf("parse hook input: %w", err)
	}
	if in.ToolName == "" {
		return nil, errors.New("hook input has no tool_name")
	}
	return &in, nil
}

// Decision is the policy's verdict on one tool call.
type Decision struct {
	Allow bool
	// Path is the resolved absolute target path when the tool names one.
	Path string
	// Reason is one line, naming the path or command, for the model and the
	// audit log.
	Reason string
}

// pathFields maps each file-writing tool to the input field holding its target.
var pathFields = map[string]string{
	"Write":        "file_path",
	"Edit":         "file_path",
	"MultiEdit":    "file_path",
	"NotebookEdit": "notebook_path",
}

// readFields maps each file-reading tool to the input field holding its target.
var readFields = map[string]string{
	"Read":         "file_path",
	"NotebookRead": "notebook_path",
}

// searchTools look under a directory (the "path" input, default the cwd)
// with a pattern.
var searchTools = set("Glob Grep LS")

// passTools touch neither files nor the network nor a shell, so they are
// allowed as they are. Agent/Task start a subagent whose own tool calls go
// through this hook again.
var passTools = set(`TodoWrite TodoRead Task Agent TaskCreate TaskGet TaskList TaskUpdate TaskOutput TaskStop
	ExitPlanMode EnterPlanMode StructuredOutput`)

// set is the set of the space-separated words in s.
func set(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// HookMatcher is the PreToolUse matcher the driver installs: every tool goes
// through the hook, so a tool the policy does not know is denied rather than
// silently allowed.
func HookMatcher() string { return "*" }

// Decide applies the policy to one PreToolUse call. Write tools must land
// inside the workspace, outside protected paths, on an allowed pattern; read
// and search tools must stay inside the workspace (or ReadDirs); Bash
// commands must parse and match the Bash rules; a few tools without reach
// pass; every other tool is denied. A panic is a deny.
func (p *Policy) Decide(in *HookInput) (d Decision) {
	defer func() {
		if r := recover(); r != nil {
			d = deny("", "internal error: %v", r)
		}
	}()
	var input map[string]any
	if err := json.Unmarshal(in.ToolInput, &input); err != nil || input == nil {
		return deny("", "%s: unreadable tool_input", in.ToolName)
	}
	if field, ok := pathFields[in.ToolName]; ok {
		return p.decideWrite(in, input, field)
	}
	if field, ok := readFields[in.ToolName]; ok {
		return p.decideRead(in, input, field)
	}
	if searchTools[in.ToolName] {
		return p.decideSearch(in, input)
	}
	if in.ToolName == "Bash" {
		cmd, _ := input["command"].(string)
		d := p.Bash.Decide(in.Cwd, cmd, func() (bash.Scope, error) {
			sc, err := p.scope()
			return sc.Scope, err
		})
		return Decision{Allow: d.Allow, Reason: d.Reason}
	}
	if passTools[in.ToolName] {
		return Decision{Allow: true, Reason: in.ToolName + " reaches no files"}
	}
	return deny("", "%s is not a tool workers may use", in.ToolName)
}

// scope is the policy's directories with symlinks resolved: the Bash
// check's (bash.Scope) and what the write check adds.
type scope struct {
	bash.Scope
	// protect and opened are Policy.Protect and Policy.Opened.
	protect *security.Protection
	opened  []string
}

func (p *Policy) scope() (scope, error) {
	ws, err := filepath.EvalSymlinks(filepath.Clean(p.Workspace))
	if err != nil {
		return scope{}, fmt.Errorf("workspace: %v", err)
	}
	sc := scope{Scope: bash.Scope{Workspace: ws, NeverWritten: protectedRel}, opened: p.Opened}
	if sc.protect, err = security.ProtectionOf(p.Protect); err != nil {
		return scope{}, err
	}
	sc.WriteProtected = sc.writeProtected
	for _, d := range p.ReadDirs {
		if r, err := filepath.EvalSymlinks(filepath.Clean(d)); err == nil {
			sc.Reads = append(sc.Reads, r)
		}
	}
	for _, d := range p.Bash.Scratch {
		if r, err := resolve.Path(filepath.Clean(d)); err == nil {
			sc.Scratch = append(sc.Scratch, r)
		}
	}
	if p.Bash.SharedTmp != "" {
		if r, err := filepath.EvalSymlinks(filepath.Clean(p.Bash.SharedTmp)); err == nil {
			sc.SharedTmp = r
		}
	}
	for _, d := range p.Protected {
		sc.Protected = append(sc.Protected, filepath.Clean(d))
		if r, err := resolve.Path(filepath.Clean(d)); err == nil {
			sc.Protected = append(sc.Protected, r)
		}
	}
	return sc, nil
}

// writeProtected says why a workspace-relative path may not be written
// (security.Protection.RefusesWrite: the run's protection, which the
// policy file carries as Protect, less what the task's opened entries
// own). The hook refuses at once what the check of the result would
// refuse later. Empty when writable.
func (sc scope) writeProtected(rel string) string {
	return sc.protect.RefusesWrite(rel, func(rel string) bool {
		return slices.ContainsFunc(sc.opened, func(e string) bool { return spec.EntryOwns(e, rel) })
	})
}

// protectedRel is security.NeverWritten, as the Bash check asks it of a
// command's targets.
func protectedRel(rel string) string { return security.NeverWritten(rel) }

// target resolves a tool's path argument, absolute or relative to the
// hook's absolute cwd, both ways (resolve.From): the first is the kernel's
// reading.
func target(cwd, raw string) ([]string, error) {
	if !filepath.IsAbs(raw) && (cwd == "" || !filepath.IsAbs(cwd)) {
		return nil, errors.New("relative path and no absolute cwd")
	}
	all, _, err := resolve.From(cwd, raw)
	return all, err
}

func (p *Policy) decideWrite(in *HookInput, input map[string]any, field string) Decision {
	raw, _ := input[field].(string)
	if raw == "" {
		return deny("", "%s: no %s in tool_input", in.ToolName, field)
	}
	all, err := target(in.Cwd, raw)
	if err != nil {
		return deny(raw, "%s %s: %v", in.ToolName, raw, err)
	}
	sc, err := p.scope()
	if err != nil {
		return deny(all[0], "%s %s: %v", in.ToolName, raw, err)
	}
	// Both readings must be writable; the kernel's names the path.
	d := p.writeDecision(in.ToolName, sc, all[0])
	for _, resolved := range all[1:] {
		if d2 := p.writeDecision(in.ToolName, sc, resolved); d.Allow && !d2.Allow {
			return d2
		}
	}
	return d
}

func (p *Policy) writeDecision(tool string, sc scope, resolved string) Decision {
	if sc.IsProtected(resolved) {
		return deny(resolved, "%s %s: a protected file", tool, resolved)
	}
	rel, ok := sc.Rel(resolved)
	if !ok {
		return deny(resolved, "%s %s: outside the workspace %s", tool, resolved, sc.Workspace)
	}
	if why := sc.writeProtected(rel); why != "" {
		return deny(resolved, "%s %s: %s", tool, rel, why)
	}
	if pat, ok := p.match(rel); ok {
		return Decision{Allow: true, Path: resolved, Reason: fmt.Sprintf("%s %s: allowed by %q", tool, rel, pat)}
	}
	return deny(resolved, "%s %s: not in the paths this task may write", tool, rel)
}

// match returns the first allow pattern matching the slash-separated rel path.
func (p *Policy) match(rel string) (string, bool) {
	for _, pat := range p.Allow {
		if spec.EntryOwns(pat, rel) {
			return pat, true
		}
	}
	return "", false
}

func deny(path, format string, a ...any) Decision {
	return Decision{Allow: false, Path: path, Reason: "denied: " + textx.OneLine(fmt.Sprintf(format, a...))}
}

// HookAllowOutput is the JSON the hook prints on stdout when the policy
// allows a call. An explicit "allow" makes the policy the decision: with a
// silent exit 0 the CLI would apply its own permission mode on top, which in
// -p mode denies every command it would have asked about (sh, go test, …)
// and so would refuse what the task's rules allow.
func HookAllowOutput(d Decision) []byte {
	out := map[string]any{"hookSpecificOutput": map[string]any{
		"hookEventName":            "PreToolUse",
		"permissionDecision":       "allow",
		"permissionDecisionReason": "zerg policy: " + d.Reason,
	}}
	data, _ := json.Marshal(out)
	return append(data, '\n')
}
