package claude

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestInteractive: the interactive session gets the same settings, hook
// policy and tools as a -p session, without the stream-json flags, with
// the prompt as its first message and the user's HOME and TERM.
func TestInteractive(t *testing.T) {
	t.Setenv("HOME", "/home/someone")
	t.Setenv("TERM", "xterm-256color")
	s := baseSpec(t)
	s.Tools = []string{"Read", "Write"}
	s.AppendSystemPrompt = "ask first"
	cmd, err := Interactive(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	args := cmd.Args[1:]
	for _, gone := range []string{"-p", "--output-format", "stream-json", "--verbose"} {
		if slices.Contains(args, gone) {
			t.Errorf("argv has %s: %q", gone, args)
		}
	}
	if v, _ := argValue(args, "--settings"); v != s.AttemptDir+"/settings.json" {
		t.Errorf("--settings %q", v)
	}
	if v, _ := argValue(args, "--tools"); v != "Read,Write" {
		t.Errorf("--tools %q", v)
	}
	if v, _ := argValue(args, "--append-system-prompt"); v != "ask first" {
		t.Errorf("--append-system-prompt %q", v)
	}
	if args[len(args)-2] != "--" || args[len(args)-1] != "do the task" {
		t.Errorf("prompt: %q", args)
	}
	if _, err := os.Stat(s.AttemptDir + "/policy.json"); err != nil {
		t.Errorf("no policy written: %v", err)
	}
	env := strings.Join(cmd.Env, "\n")
	for _, want := range []string{"HOME=/home/someone", "TERM=xterm-256color"} {
		if !strings.Contains(env, want) {
			t.Errorf("env lacks %s", want)
		}
	}
	if strings.Contains(env, "TERM=dumb") || strings.Contains(env, "HOME="+s.AttemptDir) {
		t.Errorf("env keeps the driver's HOME or TERM:\n%s", env)
	}
	s.RunAs = &WorkerUser{Name: "w", UID: 1000, GID: 1000}
	if _, err := Interactive(context.Background(), s); err == nil {
		t.Error("RunAs accepted")
	}
}
