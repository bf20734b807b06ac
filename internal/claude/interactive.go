package claude

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
)

// Interactive prepares the attempt directory exactly as Start does (the
// same settings file, PreToolUse hook and policy) and returns the command of
// an interactive Claude Code session on zerg's terminal: the same flags
// without -p and the stream-json output, the prompt as the first message.
// The session is the user's, so it keeps the user's HOME, Claude Code
// config directory and TERM (a logged-in CLI stays logged in); every other
// variable is the driver's allowlist. Isolation and RunAs are not supported.
func Interactive(ctx context.Context, spec Spec) (*exec.Cmd, error) {
	if spec.Isolation != nil || spec.RunAs != nil {
		return nil, fmt.Errorf("%w: an interactive session runs as the user, without a sandbox", ErrBadSpec)
	}
	s, err := spec.normalize()
	if err != nil {
		return nil, err
	}
	if s.promptOnStdin() {
		return nil, fmt.Errorf("%w: the first message of an interactive session is at most %d bytes", ErrBadSpec, maxArgPrompt)
	}
	if err := s.prepare(); err != nil {
		return nil, err
	}
	args := s.args()
	// Drop "-p --output-format stream-json --verbose": the rest is the
	// same session, with a terminal for a UI.
	if len(args) < 4 || args[0] != "-p" {
		return nil, fmt.Errorf("%w: unexpected argv %q", ErrBadSpec, args[:min(4, len(args))])
	}
	args = args[4:]
	cmd := exec.CommandContext(ctx, s.Binary, args...)
	cmd.Dir = s.Workdir
	env := s.env(os.Getenv, newMarker())
	keep := map[string]string{"HOME": os.Getenv("HOME"), "TERM": os.Getenv("TERM"), "CLAUDE_CONFIG_DIR": os.Getenv("CLAUDE_CONFIG_DIR")}
	env = slices.DeleteFunc(env, func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		_, ours := keep[name]
		return ours
	})
	for name, v := range keep {
		if v != "" {
			env = append(env, name+"="+v)
		}
	}
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	return cmd, nil
}
