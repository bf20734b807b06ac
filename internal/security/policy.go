package security

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// PolicyVersion is the only policy file version this build understands.
const PolicyVersion = 1

// Policy is the write policy of one attempt: which files inside the workspace
// a file-editing tool may touch. It is written by the driver next to the
// attempt's settings file, outside the workspace, and read by the hook.
type Policy struct {
	Version int `json:"version"`
	// Workspace is the absolute path of the worker's checkout. Nothing outside
	// it is ever writable through a file tool.
	Workspace string `json:"workspace"`
	// Allow lists repo-relative paths or doublestar globs ("internal/x/**",
	// "docs/*.md"). A pattern ending in "/" means the whole directory.
	Allow []string `json:"allow"`
}

// ErrBadPolicy marks a policy that cannot be used; the hook denies everything then.
var ErrBadPolicy = errors.New("bad policy")

// Validate checks that the policy can be enforced: an absolute workspace and
// patterns that are relative, free of "..", and valid globs.
func (p *Policy) Validate() error {
	if p.Version != PolicyVersion {
		return fmt.Errorf("%w: version %d, want %d", ErrBadPolicy, p.Version, PolicyVersion)
	}
	if p.Workspace == "" || !filepath.IsAbs(p.Workspace) {
		return fmt.Errorf("%w: workspace %q is not an absolute path", ErrBadPolicy, p.Workspace)
	}
	for _, pat := range p.Allow {
		if err := validatePattern(pat); err != nil {
			return fmt.Errorf("%w: allow pattern %q: %v", ErrBadPolicy, pat, err)
		}
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

// LoadPolicy reads and validates a policy file.
func LoadPolicy(path string) (*Policy, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read policy: %w", err)
	}
	var p Policy
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("%w: parse %s: %v", ErrBadPolicy, path, err)
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &p, nil
}

// WritePolicy writes p as JSON to path (mode 0600) after validating it.
func WritePolicy(path string, p *Policy) error {
	if err := p.Validate(); err != nil {
		return err
	}
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return fmt.Errorf("encode policy: %w", err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o600); err != nil {
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
	// Path is the resolved absolute target path when the tool writes a file.
	Path string
	// Reason is one line, naming the path, for the model and the audit log.
	Reason string
}

// pathFields maps each file-writing tool to the input field holding its target.
var pathFields = map[string]string{
	"Write":        "file_path",
	"Edit":         "file_path",
	"MultiEdit":    "file_path",
	"NotebookEdit": "notebook_path",
}

// IsWriteTool reports whether the policy checks the target path of tool.
func IsWriteTool(tool string) bool { _, ok := pathFields[tool]; return ok }

// WriteToolsMatcher returns the tools whose paths the policy checks, as a
// Claude Code hook matcher.
func WriteToolsMatcher() string { return "Write|Edit|MultiEdit|NotebookEdit" }

// Decide applies the policy to one PreToolUse call. Tools that do not write
// files are outside this policy and are allowed (the hook matcher decides
// which tools reach it); every write must land inside the workspace, outside
// .git, and match an allow pattern after symlinks are resolved.
func (p *Policy) Decide(in *HookInput) Decision {
	field, ok := pathFields[in.ToolName]
	if !ok {
		return Decision{Allow: true, Reason: in.ToolName + " does not write files"}
	}
	var input map[string]any
	if err := json.Unmarshal(in.ToolInput, &input); err != nil {
		return deny("", "%s: unreadable tool_input: %v", in.ToolName, err)
	}
	raw, _ := input[field].(string)
	if raw == "" {
		return deny("", "%s: no %s in tool_input", in.ToolName, field)
	}
	target := raw
	if !filepath.IsAbs(target) {
		if in.Cwd == "" || !filepath.IsAbs(in.Cwd) {
			return deny(raw, "%s %s: relative path and no absolute cwd", in.ToolName, raw)
		}
		target = filepath.Join(in.Cwd, target)
	}
	resolved, err := resolvePath(filepath.Clean(target))
	if err != nil {
		return deny(raw, "%s %s: %v", in.ToolName, raw, err)
	}
	ws, err := filepath.EvalSymlinks(filepath.Clean(p.Workspace))
	if err != nil {
		return deny(resolved, "%s %s: workspace: %v", in.ToolName, raw, err)
	}
	rel, err := filepath.Rel(ws, resolved)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return deny(resolved, "%s %s: outside the workspace %s", in.ToolName, resolved, ws)
	}
	rel = filepath.ToSlash(rel)
	for _, seg := range strings.Split(rel, "/") {
		if seg == ".git" {
			return deny(resolved, "%s %s: inside .git", in.ToolName, rel)
		}
	}
	if pat, ok := p.match(rel); ok {
		return Decision{Allow: true, Path: resolved, Reason: fmt.Sprintf("%s %s: allowed by %q", in.ToolName, rel, pat)}
	}
	return deny(resolved, "%s %s: not in the paths this task may write", in.ToolName, rel)
}

// match returns the first allow pattern matching the slash-separated rel path.
func (p *Policy) match(rel string) (string, bool) {
	for _, pat := range p.Allow {
		if strings.HasSuffix(pat, "/") {
			if strings.HasPrefix(rel, pat) {
				return pat, true
			}
			continue
		}
		if ok, err := doublestar.Match(pat, rel); err == nil && ok {
			return pat, true
		}
	}
	return "", false
}

func deny(path, format string, a ...any) Decision {
	return Decision{Allow: false, Path: path, Reason: "denied: " + fmt.Sprintf(format, a...)}
}

// resolvePath resolves symlinks in the longest existing prefix of the clean
// absolute path p and appends the components that do not exist yet, so a
// write through a symlinked directory (or a symlink as the file itself) is
// judged by where it really lands.
func resolvePath(p string) (string, error) {
	existing := p
	var rest []string
	for {
		if _, err := os.Lstat(existing); err == nil {
			break
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("stat %s: %w", existing, err)
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			break
		}
		rest = append(rest, filepath.Base(existing))
		existing = parent
	}
	resolved, err := filepath.EvalSymlinks(existing)
	if err != nil {
		// A dangling symlink: the write would create its target somewhere we
		// cannot see yet, so refuse rather than guess.
		return "", fmt.Errorf("resolve %s: %w", existing, err)
	}
	for i := len(rest) - 1; i >= 0; i-- {
		resolved = filepath.Join(resolved, rest[i])
	}
	return resolved, nil
}
