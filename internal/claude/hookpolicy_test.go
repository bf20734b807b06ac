package claude

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/policy"
)

// The subprocess-mode policy allows the programs of the toolchains found in
// the workdir (and one directory down), the verification's programs and
// worker_policy.allow_commands, less toolchains.off; worker_policy's
// deny_commands hold in both modes; sandbox mode only refuses what reaches
// outside.
func TestPolicyToolchainsAndWorkerPolicy(t *testing.T) {
	s := baseSpec(t)
	for f, body := range map[string]string{
		"go.mod":                    "module x\n",
		"Makefile":                  "all:\n",
		"assets/package.json":       "{}",
		"node_modules/x/Cargo.toml": "",
		"deps/Cargo.toml":           "",
		".tools/mix.exs":            "",
	} {
		p := filepath.Join(s.Workdir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s.Hook.BashCommands = []string{"timeout 600 python -m pytest && curl -s http://127.0.0.1:1/ok"}
	s.Hook.AllowCommands = []string{"bd"}
	s.Hook.DenyCommands = []string{"make", "terraform"}
	p, err := s.Policy()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"go", "gofmt", "make", "node", "npm", "npx", "python", "python -m pytest", "bd", "ls", "git commit"} {
		if !slices.Contains(p.Bash.Allow, want) {
			t.Errorf("rules lack %q: %v", want, p.Bash.Allow)
		}
	}
	for _, not := range []string{"curl", "timeout", "cargo", "mix"} {
		if slices.Contains(p.Bash.Allow, not) {
			t.Errorf("rules hold %q (reaches outside, a wrapper, or found only in a dependency or hidden directory): %v", not, p.Bash.Allow)
		}
	}
	if !slices.Equal(p.Bash.Deny, []string{"make", "terraform"}) || p.Bash.Sandboxed || p.Bash.Unrestricted ||
		p.Bash.SharedTmp != "/tmp" || !slices.Equal(p.Bash.Scratch, []string{filepath.Join(s.AttemptDir, "tmp")}) {
		t.Errorf("bash policy %+v", p.Bash)
	}
	// deny_commands beat the make toolchain; allow_commands never beat
	// what reaches outside.
	decide := func(p *policy.Policy, cmd string) policy.Decision {
		input, _ := json.Marshal(map[string]any{"command": cmd})
		return p.Decide(&policy.HookInput{Cwd: s.Workdir, ToolName: "Bash", ToolInput: input})
	}
	if d := decide(p, "make all"); d.Allow || !strings.Contains(d.Reason, "worker_policy.deny_commands") {
		t.Errorf("make all: %s", d.Reason)
	}
	if d := decide(p, "bd sync"); d.Allow {
		t.Errorf("bd sync: %s", d.Reason)
	}
	if d := decide(p, "npm test"); !d.Allow {
		t.Errorf("npm test (assets/package.json): %s", d.Reason)
	}

	// toolchains.off leaves a detected toolchain's programs out.
	s.Hook.ToolchainsOff = []string{"node", "go"}
	p, err = s.Policy()
	if err != nil {
		t.Fatal(err)
	}
	for _, not := range []string{"node", "npm", "gofmt"} {
		if slices.Contains(p.Bash.Allow, not) {
			t.Errorf("toolchains.off: rules hold %q", not)
		}
	}

	// Sandbox mode: no rules, the same deny list and verification command.
	s.Hook.BashSandboxed = true
	p, err = s.Policy()
	if err != nil {
		t.Fatal(err)
	}
	if !p.Bash.Sandboxed || len(p.Bash.Allow) != 0 || !slices.Equal(p.Bash.Deny, []string{"make", "terraform"}) ||
		!slices.Equal(p.Bash.Commands, s.Hook.BashCommands) || p.Bash.SharedTmp != "" {
		t.Errorf("sandbox bash policy %+v", p.Bash)
	}
	if d := decide(p, "python3 -c 'print(1)'"); !d.Allow {
		t.Errorf("sandbox mode: %s", d.Reason)
	}
	if d := decide(p, "make all"); d.Allow {
		t.Errorf("sandbox mode: deny_commands: %s", d.Reason)
	}
	if d := decide(p, "git push"); d.Allow {
		t.Errorf("sandbox mode: git push: %s", d.Reason)
	}

	// A deny list entry that is no program name makes the spec unlaunchable.
	s.Hook.DenyCommands = []string{"git push"}
	if _, err := s.Policy(); err == nil {
		t.Error("a deny list entry with a space was accepted")
	}
}
