package config

import (
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestDefaultIsValid(t *testing.T) {
	if err := Default().Validate(); err != nil {
		t.Fatalf("Default() is invalid:\n%v", err)
	}
}

// The predecessor's init wrote a config its own loader rejected; this is the
// test that would have caught it.
func TestTemplateLoadsToDefault(t *testing.T) {
	got, err := Parse(Template(), FileName)
	if err != nil {
		t.Fatalf("template does not load:\n%v", err)
	}
	if !reflect.DeepEqual(got, Default()) {
		t.Fatalf("template differs from Default():\n got  %+v\n want %+v", got, Default())
	}
}

// leafPaths lists every option path of Config that is built (not tagged
// zerg:"unavailable"); list elements appear as "gates[].name".
func leafPaths(t reflect.Type, prefix string) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if isUnavailable(f) {
			continue
		}
		p := join(prefix, tagName(f))
		switch {
		case f.Type == durationType:
			out = append(out, p)
		case f.Type.Kind() == reflect.Struct:
			out = append(out, leafPaths(f.Type, p)...)
		case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Struct:
			out = append(out, p)
			out = append(out, leafPaths(f.Type.Elem(), p+"[]")...)
		default:
			out = append(out, p)
		}
	}
	return out
}

// unavailablePaths lists the options tagged zerg:"unavailable", and checks
// each has its entry in unavailable.
func unavailablePaths(t *testing.T) []string {
	t.Helper()
	var out []string
	walkUnavailable(reflect.ValueOf(Default()), "", false, func(p string, _ reflect.Value) {
		if _, ok := unavailable[p]; !ok {
			t.Errorf("%s is tagged unavailable but has no entry in unavailable", p)
		}
		out = append(out, p)
	})
	if len(out) != len(unavailable) {
		t.Errorf("tagged %v, but unavailable has %d entries", out, len(unavailable))
	}
	return out
}

func TestUnavailableOptions(t *testing.T) {
	got := unavailablePaths(t)
	want := []string{"models.debug", "launch.stagger"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("unavailable options %v, want %v", got, want)
	}
	// Earlier templates set them; such a file loads, and the options read as
	// zero whatever the accepted value was.
	old, err := os.ReadFile(filepath.Join("testdata", "old-template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := Parse(old, "old.yaml")
	if err != nil {
		t.Fatalf("a config written by an earlier zerg init no longer loads:\n%v", err)
	}
	// It chose subprocess mode, the only mode then; it keeps it.
	wantCfg := Default()
	wantCfg.Mode = "subprocess"
	// The models of plan, design and review were written then too; they
	// are built now, so they keep what the file says.
	wantCfg.Models.Plan, wantCfg.Models.Design, wantCfg.Models.Review = "sonnet", "opus", "sonnet"
	// So were models.simple and the run budget and confirmation, built now.
	wantCfg.Models.Simple, wantCfg.Budget.RunUSD, wantCfg.Budget.ConfirmAboveUSD = "haiku", 50, 10
	if !reflect.DeepEqual(cfg, wantCfg) {
		t.Fatalf("old template loads to %+v, want the defaults with mode subprocess %+v", cfg, wantCfg)
	}
	pos, err := positions(old)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range want {
		if _, ok := pos[p]; !ok {
			t.Errorf("the old template fixture does not set %s", p)
		}
	}
	// Neither config show nor its JSON prints them.
	out, err := cfg.YAML()
	if err != nil {
		t.Fatal(err)
	}
	m := cfg.Map()
	for _, key := range []string{"debug", "launch", "stagger"} {
		if strings.Contains(string(out), key+":") {
			t.Errorf("config show prints %s:\n%s", key, out)
		}
	}
	if _, ok := m["launch"]; ok {
		t.Error("Map() has launch")
	}

	if _, ok := m["models"].(map[string]any)["debug"]; ok {
		t.Error("Map() has models.debug")
	}
}

func TestTemplateShowsEveryOption(t *testing.T) {
	pos, err := positions(Template())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range unavailablePaths(t) {
		if _, ok := pos[p]; ok {
			t.Errorf("template sets %s, which this version does not build", p)
		}
	}
	for _, p := range leafPaths(reflect.TypeOf(Config{}), "") {
		if strings.Contains(p, "[]") {
			// List element options are shown in the commented gate example.
			field := p[strings.LastIndex(p, ".")+1:]
			if !strings.Contains(string(Template()), "#       "+field+":") && !strings.Contains(string(Template()), "#     - "+field+":") {
				t.Errorf("template example does not show %s", p)
			}
			continue
		}
		if _, ok := pos[p]; !ok {
			t.Errorf("template does not set %s", p)
		}
	}
}

// The commented gate example in the template must itself be valid config.
func TestTemplateGateExampleIsValid(t *testing.T) {
	var lines []string
	for _, l := range strings.Split(string(Template()), "\n") {
		if rest, ok := strings.CutPrefix(l, "#   "); ok {
			lines = append(lines, rest)
		}
	}
	cfg, err := Parse([]byte(strings.Join(lines, "\n")), "example")
	if err != nil {
		t.Fatalf("gate example is invalid:\n%v", err)
	}
	want := []Gate{{Name: "test", Command: "go test ./...", Timeout: DefaultGateTimeout, Required: DefaultGateRequired, When: GateEveryLevel}}
	if !reflect.DeepEqual(cfg.Gates, want) {
		t.Fatalf("gate example = %+v, want %+v", cfg.Gates, want)
	}
}

func TestDocsListEveryOption(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range leafPaths(reflect.TypeOf(Config{}), "") {
		if !strings.Contains(string(doc), "`"+p+"`") {
			t.Errorf("docs/configuration.md does not document `%s`", p)
		}
	}
	for _, p := range unavailablePaths(t) {
		if strings.Contains(string(doc), p) {
			t.Errorf("docs/configuration.md documents %s, which this version does not build", p)
		}
	}
	for _, word := range []string{"stagger"} {
		if strings.Contains(string(doc), word) {
			t.Errorf("docs/configuration.md mentions %q, which this version does not build", word)
		}
	}
}

func TestMissingKeysTakeDefaults(t *testing.T) {
	cfg, err := Parse([]byte("workers: 8\nbreaker:\n  cooldown: 90s\ngates:\n  - name: test\n    command: go test ./...\n"), "c.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	want.Workers = 8
	want.Breaker.Cooldown = 90 * time.Second
	want.Gates = []Gate{{Name: "test", Command: "go test ./...", Timeout: DefaultGateTimeout, Required: true}}
	if !reflect.DeepEqual(cfg, want) {
		t.Fatalf("got %+v\nwant %+v", cfg, want)
	}
}

func TestEmptyAndNullKeepDefaults(t *testing.T) {
	for _, in := range []string{"", "# only a comment\n", "---\n", "workers:\nbreaker:\n  cooldown:\n", "~\n"} {
		cfg, err := Parse([]byte(in), "c.yaml")
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if !reflect.DeepEqual(cfg, Default()) {
			t.Fatalf("%q: got %+v", in, cfg)
		}
	}
}

func TestAliasesResolve(t *testing.T) {
	cfg, err := Parse([]byte("retry:\n  infra_backoff_max: &long 10m\nverification:\n  timeout: *long\n"), "c.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Verification.Timeout != 10*time.Minute {
		t.Fatalf("alias not resolved: %v", cfg.Verification.Timeout)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte("workers: 2\nschedule: fifo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	var ce *Error
	if !errors.As(err, &ce) || len(ce.Problems) != 1 {
		t.Fatalf("want one problem, got %v", err)
	}
	if got, want := ce.Problems[0].String(), path+`:2: schedule: "fifo" is not a schedule; use level or dag`; got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}

	if _, err := Load(filepath.Join(dir, "missing.yaml")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: want fs.ErrNotExist, got %v", err)
	}
}

// Each case is a file and the exact problem lines it must produce, in order.
func TestParseProblems(t *testing.T) {
	const f = ".zerg/config.yaml"
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"unknown top-level key", "workers: 4\nwrokers: 5\n",
			[]string{f + `:2: wrokers: unknown option "wrokers"; did you mean workers? (see docs/configuration.md)`}},
		{"unknown key without a near match", "frobnicate: 1\n",
			[]string{f + `:1: frobnicate: unknown option "frobnicate"; known options here: version, workers, mode, schedule, claude, models, budget, retry, breaker, backpressure, heartbeat, verification, design, gates, env, egress, gateway, sandbox, container, tasks, cluster, disk, toolchains, caches, worker_policy, security, commits, security_rules, context`}},
		{"unknown key in a section with no built option", "launch:\n  burst: 2\n",
			[]string{f + `:2: launch.burst: unknown option "burst"; remove it`}},
		{"unknown nested key", "breaker:\n  failures: 5\n  cooldwn: 60s\n",
			[]string{f + `:3: breaker.cooldwn: unknown option "cooldwn"; did you mean cooldown? (see docs/configuration.md)`}},
		{"unknown gate key", "gates:\n  - name: t\n    command: x\n    timout: 5s\n",
			[]string{f + `:4: gates[0].timout: unknown option "timout"; did you mean timeout? (see docs/configuration.md)`}},
		{"key set twice", "workers: 4\nworkers: 5\n",
			[]string{f + `:2: workers: set twice (first on line 1); keep one`}},
		{"bad duration", "breaker:\n  cooldown: abc\n",
			[]string{f + `:2: breaker.cooldown: "abc" is not a duration; write it like 60s, 5m or 1h30m`}},
		{"duration without unit", "heartbeat:\n  stall_timeout: 120\n",
			[]string{f + `:2: heartbeat.stall_timeout: "120" is not a duration; write it like 60s, 5m or 1h30m`}},
		{"stall timeout at the CLI's own watchdog", "heartbeat:\n  stall_timeout: 300s\n",
			[]string{f + `:2: heartbeat.stall_timeout: 5m is not below the Claude Code CLI's own stream watchdog (5m), so it would never fire first; use less, like the default 120s`}},
		{"stall timeout above the CLI's own watchdog", "heartbeat:\n  stall_timeout: 10m\n",
			[]string{f + `:2: heartbeat.stall_timeout: 10m is not below the Claude Code CLI's own stream watchdog (5m), so it would never fire first; use less, like the default 120s`}},
		{"zero duration", "breaker:\n  cooldown: 0s\n",
			[]string{f + `:2: breaker.cooldown: 0s must be longer than 0; write it like 60s`}},
		{"negative duration", "verification:\n  timeout: -5s\n",
			[]string{f + `:2: verification.timeout: -5s must be longer than 0; write it like 60s`}},
		{"negative stagger", "launch:\n  stagger: -1s\n",
			[]string{f + `:2: launch.stagger: is not available in this version; workers start together; remove the line`}},
		{"backoff initial above max", "retry:\n  infra_backoff_initial: 10m\n  infra_backoff_max: 1m\n",
			[]string{f + `:2: retry.infra_backoff_initial: 10m is longer than retry.infra_backoff_max (1m); make it shorter`}},
		{"worker user root", "security:\n  worker_user: root\n",
			[]string{f + `:2: security.worker_user: must not be root: workers would run with full privileges; use an unprivileged account such as zerg-worker`}},
		{"worker user bad name", "security:\n  worker_user: Bad User\n",
			[]string{f + `:2: security.worker_user: "Bad User" is not a user name; use lower-case letters, digits, _ and - (at most 26, since sandbox mode adds -N for each worker slot; not starting with a digit or -), e.g. zerg-worker`}},
		{"bad mode", "mode: docker\n",
			[]string{f + `:1: mode: "docker" is not a mode; use sandbox, subprocess, container or tasks`}},
		{"bad schedule", "schedule: fast\n",
			[]string{f + `:1: schedule: "fast" is not a schedule; use level or dag`}},
		{"mode container", "workers: 4\n\nmode: container\n", nil},
		{"container runtime", "container:\n  runtime: lxc\n  image: \"-v /:/x\"\n",
			[]string{f + `:2: container.runtime: "lxc" is not a container engine zerg drives; use auto, podman or docker`,
				f + `:3: container.image: "-v /:/x" is not an image reference; write one like localhost/myproject:dev, or leave it empty for the repository's devcontainer`}},
		{"mode sandbox", "mode: sandbox\n", nil},
		{"mode subprocess", "mode: subprocess\n", nil},
		{"sandbox limits", "sandbox:\n  memory_mb: -1\n  max_commit_file_mb: 0\n",
			[]string{f + `:2: sandbox.memory_mb: -1 is out of range; use a whole number from 0 to 1073741824`, f + `:3: sandbox.max_commit_file_mb: 0 is out of range; use a whole number from 1 to 4096`}},
		{"protected path outside", "security:\n  protected_paths: [/etc/passwd]\n",
			[]string{f + `:2: security.protected_paths[0]: "/etc/passwd" is not a repository-relative glob; write one like deploy/** or Makefile`}},
		{"protected path that is no path", "security:\n  protected_paths: [\"./\"]\n",
			[]string{f + `:2: security.protected_paths[0]: "./" is not a repository-relative glob; write one like deploy/** or Makefile`}},
		{"mode tasks", "mode: tasks\ntasks:\n  lease: 0s\n",
			[]string{f + `:3: tasks.lease: 0s must be longer than 0; write it like 60s`}},
		{"schedule dag", "schedule: dag\n", nil},
		{"schedule unknown", "schedule: fifo\n",
			[]string{f + `:1: schedule: "fifo" is not a schedule; use level or dag`}},
		{"built mode and schedule", "mode: subprocess\nschedule: level\n", nil},
		{"journey model not a model", "models:\n  design: \"not a model\"\n",
			[]string{f + `:2: models.design: "not a model" is not a model; use haiku, sonnet, opus, a model id, or leave it empty for models.implement`}},
		{"design rounds out of range", "design:\n  max_rounds: 0\n",
			[]string{f + `:2: design.max_rounds: 0 is out of range; use a whole number from 1 to 20`}},
		{"simple role built", "models:\n  simple: sonnet\n", nil},
		{"simple role checked", "models:\n  simple: \"a b\"\n",
			[]string{f + `:2: models.simple: "a b" is not a model; use haiku, sonnet, opus, a model id, or leave it empty for models.implement`}},
		{"plan and review roles built, debug not", "models:\n  plan: opus\n  review: haiku\n  debug: x\n",
			[]string{
				f + `:4: models.debug: is not available in this version; there is no zerg debug command; remove the line`,
			}},
		{"model roles at their old defaults", "models:\n  simple: haiku\n  plan: sonnet\n  design: opus\n  review: sonnet\n  debug: sonnet\n", nil},
		{"model roles empty", "models:\n  simple: \"\"\n  design: \"\"\n", nil},
		{"run budget built", "budget:\n  task_usd: 3\n  run_usd: 100\n  on_exceed: cancel\n", nil},
		{"on_exceed checked", "budget:\n  on_exceed: stop\n",
			[]string{f + `:2: budget.on_exceed: "stop" is not a choice; use finish (running attempts finish) or cancel (they are stopped)`}},
		{"confirmation built", "budget:\n  confirm_above_usd: 20\n  max_workers_without_confirm: 8\n", nil},
		{"negative run budget", "budget:\n  run_usd: -1\n",
			[]string{f + `:2: budget.run_usd: -1 must be 0 (no limit) or a positive amount in USD`}},
		{"run budget and confirmation at their old defaults", "budget:\n  run_usd: 50\n  confirm_above_usd: 10\n", nil},
		{"run budget still type-checked", "budget:\n  run_usd: lots\n",
			[]string{f + `:2: budget.run_usd: "lots" is not a number; write it like 2.5`}},
		{"stagger not built", "launch:\n  stagger: 5s\n",
			[]string{f + `:2: launch.stagger: is not available in this version; workers start together; remove the line`}},
		{"stagger zero", "launch:\n  stagger: 0s\n", nil},
		{"egress in sandbox mode", "egress:\n  allow: [proxy.golang.org, \"*.npmjs.org\", \"host:8080\"]\n", nil},
		{"egress in subprocess mode", "mode: subprocess\negress:\n  allow: [proxy.golang.org]\n",
			[]string{f + `:3: egress.allow: applies to sandbox mode only: subprocess mode cannot restrict the network; use mode: sandbox or remove the list`}},
		{"egress not a host", "egress:\n  allow: [\"http://x.org/\"]\n",
			[]string{f + `:2: egress.allow[0]: "http://x.org/" is not a host; write a name like proxy.golang.org, name:port, or *.example.com`}},
		{"egress empty", "egress:\n  allow: []\n", nil},
		{"workers zero", "workers: 0\n",
			[]string{f + `:1: workers: 0 is out of range; use a whole number from 1 to 64`}},
		{"workers too many", "workers: 65\n",
			[]string{f + `:1: workers: 65 is out of range; use a whole number from 1 to 64`}},
		{"workers not a number", "workers: four\n",
			[]string{f + `:1: workers: "four" is not a whole number; write it like 4`}},
		{"workers a fraction", "workers: 2.5\n",
			[]string{f + `:1: workers: "2.5" is not a whole number; write it like 4`}},
		{"workers a list", "workers: [1, 2]\n",
			[]string{f + `:1: workers: expected a whole number, found a list`}},
		{"version", "version: 2\n",
			[]string{f + `:1: version: 2 is not a config version this zerg reads; write version: 1`}},
		{"claude path with spaces", "claude:\n  path: \" claude\"\n",
			[]string{f + `:2: claude.path: " claude" has leading or trailing spaces; write the path alone, or leave it empty to find the pinned install`}},
		{"bad base url", "claude:\n  base_url: localhost:8080\n",
			[]string{f + `:2: claude.base_url: "localhost:8080" is not an http(s) URL; write it like https://api.anthropic.com or leave it empty`}},
		{"api key value instead of name", "claude:\n  api_key_env: sk-ant-api03-SECRET\n",
			[]string{f + `:2: claude.api_key_env: must be the NAME of an environment variable (like ANTHROPIC_API_KEY), never the key itself`}},
		{"oauth token value instead of name", "claude:\n  oauth_token_env: sk-ant-oat01-SECRET\n",
			[]string{f + `:2: claude.oauth_token_env: must be the NAME of an environment variable (like CLAUDE_CODE_OAUTH_TOKEN), never the token itself`}},
		{"empty model", "models:\n  implement: \"\"\n",
			[]string{f + `:2: models.implement: "" is not a model; use haiku, sonnet, opus or a model id like claude-sonnet-5`}},
		{"bad fallback", "models:\n  fallback: \"two words\"\n",
			[]string{f + `:2: models.fallback: "two words" is not a model; use haiku, sonnet, opus, a model id, or leave it empty for none`}},
		{"negative budget", "budget:\n  task_usd: -1\n",
			[]string{f + `:2: budget.task_usd: -1 must be 0 (no limit) or a positive amount in USD`}},
		{"budget not a number", "budget:\n  task_usd: lots\n",
			[]string{f + `:2: budget.task_usd: "lots" is not a number; write it like 2.5`}},
		{"budget infinite", "budget:\n  task_usd: .inf\n",
			[]string{f + `:2: budget.task_usd: ".inf" is not a finite number; write it like 2.5`}},
		{"negative max turns", "budget:\n  max_turns: -3\n",
			[]string{f + `:2: budget.max_turns: -3 must be 0 (no limit) or a positive number of turns`}},
		{"task retries", "retry:\n  task_retries: -1\n",
			[]string{f + `:2: retry.task_retries: -1 is out of range; use a whole number from 0 to 20`}},
		{"infra attempts", "retry:\n  infra_max_attempts: 0\n",
			[]string{f + `:2: retry.infra_max_attempts: 0 is out of range; use a whole number from 1 to 100`}},
		{"reset wait past a week", "retry:\n  wait_for_reset_max: 200h\n",
			[]string{f + `:2: retry.wait_for_reset_max: 200h is longer than a week (168h); a limit that far ahead is not waited for in a running process: use at most 168h and resume the run later`}},
		{"no reset wait", "retry:\n  wait_for_reset_max: 0s\n",
			[]string{f + `:2: retry.wait_for_reset_max: 0s must be longer than 0; write it like 60s`}},
		{"breaker failures", "breaker:\n  failures: 0\n",
			[]string{f + `:2: breaker.failures: 0 is out of range; use a whole number from 1 to 1000`}},
		{"window", "backpressure:\n  window: 0\n",
			[]string{f + `:2: backpressure.window: 0 is out of range; use a whole number from 1 to 10000`}},
		{"min samples above window", "backpressure:\n  window: 10\n  min_samples: 11\n",
			[]string{f + `:3: backpressure.min_samples: 11 is out of range; use a whole number from 1 to 10`}},
		{"yellow not below red", "backpressure:\n  yellow: 0.6\n  red: 0.5\n",
			[]string{f + `:2: backpressure.yellow: 0.6 must be below backpressure.red (0.5)`}},
		{"yellow equal red", "backpressure:\n  yellow: 0.5\n",
			[]string{f + `:2: backpressure.yellow: 0.5 must be below backpressure.red (0.5)`}},
		{"negative yellow", "backpressure:\n  yellow: -0.1\n",
			[]string{f + `:2: backpressure.yellow: -0.1 is not a failure rate; use a fraction from 0 to 1, below backpressure.red`}},
		{"red above one", "backpressure:\n  red: 1.5\n",
			[]string{f + `:2: backpressure.red: 1.5 is not a failure rate; use a fraction from 0 to 1, above backpressure.yellow`}},
		{"gates not a list", "gates: go test\n",
			[]string{f + `:1: gates: expected a list, found a single value; write it like [a, b] or one '- item' per line`}},
		{"gate not a mapping", "gates:\n  - go test ./...\n",
			[]string{f + `:2: gates[0]: expected a mapping of options (name, command, timeout, required, when), found a single value; this must be 'key: value' lines`}},
		{"gate empty item", "gates:\n  -\n",
			[]string{f + `:2: gates[0]: empty list item; remove it`}},
		{"gate without name or command", "gates:\n  - timeout: 5s\n",
			[]string{
				f + `:2: gates[0].name: every gate needs a name (like test or lint)`,
				f + `:2: gates[0].command: is empty; write the shell command that runs the gate, like go test ./...`,
			}},
		{"gate duplicate names", "gates:\n  - name: test\n    command: a\n  - name: test\n    command: b\n",
			[]string{f + `:4: gates[1].name: "test" is already the name of gates[0]; gate names must be unique`}},
		{"gate bad name", "gates:\n  - name: my gate\n    command: a\n",
			[]string{f + `:2: gates[0].name: "my gate" is not a gate name; use letters, digits, '.', '_' or '-' (up to 64)`}},
		{"gate blank command", "gates:\n  - name: t\n    command: \"  \"\n",
			[]string{f + `:3: gates[0].command: is empty; write the shell command that runs the gate, like go test ./...`}},
		{"gate zero timeout", "gates:\n  - name: t\n    command: x\n    timeout: 0s\n",
			[]string{f + `:4: gates[0].timeout: 0s must be longer than 0; write it like 60s`}},
		{"gate required not a bool", "gates:\n  - name: t\n    command: x\n    required: sometimes\n",
			[]string{f + `:4: gates[0].required: "sometimes" is not true or false; write true or false`}},
		{"env bad name", "env:\n  pass: [GOOD, 1BAD]\n",
			[]string{f + `:2: env.pass[1]: "1BAD" is not an environment variable name; use letters, digits and '_'`}},
		{"env with value", "env:\n  pass:\n    - GITHUB_TOKEN=ghp_secret\n",
			[]string{f + `:3: env.pass[0]: "GITHUB_TOKEN"=… is not a variable name; list names only, the values come from zerg's own environment`}},
		{"env twice", "env:\n  pass: [A, A]\n",
			[]string{f + `:2: env.pass[1]: "A" is listed twice; keep one`}},
		{"env pass a scalar", "env:\n  pass: HOME\n",
			[]string{f + `:2: env.pass: expected a list, found a single value; write it like [a, b] or one '- item' per line`}},
		{"env a list", "env: [HOME]\n",
			[]string{f + `:1: env: expected a mapping of options (pass, allow_dangerous), found a list; this must be 'key: value' lines`}},
		{"dangerous env name", "env:\n  pass: [GOPATH, LD_PRELOAD]\n",
			[]string{f + `:2: env.pass[1]: "LD_PRELOAD" changes how every program is loaded (LD_PRELOAD, LD_LIBRARY_PATH); workers do not get it unless you also list it under env.allow_dangerous`}},
		{"override not passed", "env:\n  allow_dangerous: [GITHUB_TOKEN]\n",
			[]string{f + `:2: env.allow_dangerous[0]: "GITHUB_TOKEN" is not in env.pass; list it there too, or remove it here`}},
		{"rules branch", "security_rules:\n  commit: main\n",
			[]string{f + `:2: security_rules.commit: "main" is not a full commit id; pin the rules to a full 40-character lower-case commit hash, not a branch or tag`}},
		{"rules empty url", "security_rules:\n  url: \"\"\n",
			[]string{f + `:2: security_rules.url: is empty; write a git repository URL like https://github.com/TikiTribe/claude-secure-coding-rules, or set security_rules.enabled: false`}},
		{"rules bad url", "security_rules:\n  url: \"ftp://x/y\"\n",
			[]string{f + `:2: security_rules.url: "ftp://x/y" is not a git URL; write a git repository URL like https://github.com/TikiTribe/claude-secure-coding-rules`}},
		{"rules bad checksum", "security_rules:\n  sha256: abc\n",
			[]string{f + `:2: security_rules.sha256: "abc" is not a SHA-256; write 64 lower-case hex digits or leave it empty`}},
		{"token budget", "context:\n  token_budget: 0\n",
			[]string{f + `:2: context.token_budget: 0 is out of range; use a number of tokens from 1 to 1000000 (default 4000)`}},
		{"top level a list", "- workers: 4\n",
			[]string{f + `:1: expected a mapping of options (version, workers, mode, schedule, claude, models, budget, retry, breaker, backpressure, heartbeat, verification, design, gates, env, egress, gateway, sandbox, container, tasks, cluster, disk, toolchains, caches, worker_policy, security, commits, security_rules, context), found a list; the top level must be 'key: value' lines`}},
		{"section a scalar", "breaker: 5\n",
			[]string{f + `:1: breaker: expected a mapping of options (failures, cooldown), found a single value; this must be 'key: value' lines`}},
		{"syntax error", "workers: 4\nmode: [subprocess\n",
			[]string{f + `:2: invalid YAML: did not find expected ',' or ']'; fix the syntax (indent with spaces, quote values containing ': ' or '#')`}},
		{"list item in a mapping", "workers: 4\nmode: level\n- x\n",
			[]string{f + `:3: invalid YAML: did not find expected key; fix the syntax (indent with spaces, quote values containing ': ' or '#')`}},
		{"bad indentation", "workers: 4\n mode: level\n",
			[]string{f + `:2: invalid YAML: mapping values are not allowed in this context; fix the syntax (indent with spaces, quote values containing ': ' or '#')`}},
		{"tab indentation", "breaker:\n\tcooldown: 60s\n",
			[]string{f + `:2: invalid YAML: found character that cannot start any token; fix the syntax (indent with spaces, quote values containing ': ' or '#')`}},
		{"two documents", "workers: 4\n---\nworkers: 5\n",
			[]string{f + `:2: invalid YAML: only one YAML document is allowed; remove the '---' separator and what follows; fix the syntax (indent with spaces, quote values containing ': ' or '#')`}},
		{"every problem, in file order", "mode: docker\nbreaker:\n  cooldown: abc\nwrokers: 5\nbackpressure:\n  yellow: 0.9\n",
			[]string{
				f + `:1: mode: "docker" is not a mode; use sandbox, subprocess, container or tasks`,
				f + `:3: breaker.cooldown: "abc" is not a duration; write it like 60s, 5m or 1h30m`,
				f + `:4: wrokers: unknown option "wrokers"; did you mean workers? (see docs/configuration.md)`,
				f + `:6: backpressure.yellow: 0.9 must be below backpressure.red (0.5)`,
			}},
		{"rules disabled needs no source", "security_rules:\n  enabled: false\n  url: \"\"\n  commit: \"\"\n", nil},
		{"local rules mirror", "security_rules:\n  url: /srv/mirror/rules\n", nil},
		{"zero budgets mean no limit", "budget:\n  task_usd: 0\n  run_usd: 0\n  max_turns: 0\n  confirm_above_usd: 0\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.in), f)
			var got []string
			if err != nil {
				var ce *Error
				if !errors.As(err, &ce) {
					t.Fatalf("error is %T, want *Error: %v", err, err)
				}
				for _, p := range ce.Problems {
					got = append(got, p.String())
				}
				if err.Error() != strings.Join(got, "\n") {
					t.Fatalf("Error() does not list the problems one per line:\n%s", err)
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("problems:\n  got  %q\n  want %q", got, tt.want)
			}
			for _, l := range got {
				if strings.Contains(l, "SECRET") || strings.Contains(l, "ghp_secret") {
					t.Fatalf("a problem echoes a secret value: %s", l)
				}
			}
		})
	}
}

func TestValidateInMemory(t *testing.T) {
	c := Default()
	c.Workers = 100
	c.Schedule = "fifo"
	c.Budget.RunUSD = 100
	c.Egress.Allow = []string{"proxy.golang.org"}
	c.Breaker.Cooldown = 0
	c.Backpressure.Red = math.NaN()
	c.Gates = []Gate{{Name: "a", Command: "x", Timeout: time.Second}, {Name: "a", Command: "", Timeout: time.Second}}
	err := c.Validate()
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("want *Error, got %v", err)
	}
	want := []string{
		`workers: 100 is out of range; use a whole number from 1 to 64`,
		`schedule: "fifo" is not a schedule; use level or dag`,
		`breaker.cooldown: 0s must be longer than 0; write it like 60s`,
		`backpressure.red: NaN is not a failure rate; use a fraction from 0 to 1, above backpressure.yellow`,
		`gates[1].name: "a" is already the name of gates[0]; gate names must be unique`,
		`gates[1].command: is empty; write the shell command that runs the gate, like go test ./...`,
	}
	var got []string
	for _, p := range ce.Problems {
		got = append(got, p.String())
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}

func TestTooLarge(t *testing.T) {
	big := make([]byte, MaxFileSize+1)
	for i := range big {
		big[i] = '#'
	}
	_, err := Parse(big, "c.yaml")
	if err == nil || !strings.Contains(err.Error(), "c.yaml: the file is larger than") {
		t.Fatalf("got %v", err)
	}
}

func TestYAMLRoundTrip(t *testing.T) {
	c := Default()
	c.Workers = 9
	c.Claude.BaseURL = "http://127.0.0.1:8080"
	c.Models.Fallback = "claude-opus-4-8[1m]"
	c.Budget.TaskUSD = 1.25
	c.Retry.InfraBackoffInitial = 1500 * time.Millisecond
	c.Heartbeat.StallTimeout = 90 * time.Second
	c.Gates = []Gate{
		{Name: "test", Command: "go test ./... && echo '# done: ok'", Timeout: 2 * time.Hour, Required: true},
		{Name: "lint", Command: "true", Timeout: time.Minute},
	}
	c.Env.Pass = []string{"GOPATH", "NO_PROXY"}
	c.SecurityRules.SHA256 = strings.Repeat("0", 64)
	out, err := c.YAML()
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse(out, "show")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !reflect.DeepEqual(got, c) {
		t.Fatalf("round trip changed the config:\n%s\ngot  %+v\nwant %+v", out, got, c)
	}
	if m := c.Map(); m["breaker"].(map[string]any)["cooldown"] != "1m" || m["workers"] != 9 {
		t.Fatalf("Map() = %v", m)
	}
}

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                                  "0s",
		60 * time.Second:                   "1m",
		90 * time.Second:                   "1m30s",
		120 * time.Second:                  "2m",
		2 * time.Hour:                      "2h",
		90 * time.Minute:                   "1h30m0s",
		5 * time.Second:                    "5s",
		1500 * time.Millisecond:            "1.5s",
		-5 * time.Second:                   "-5s",
		time.Hour + 30*time.Minute + 1e9*5: "1h30m5s",
	} {
		if got := FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%v) = %q, want %q", time.Duration(d), got, want)
		}
		if back, err := time.ParseDuration(FormatDuration(d)); err != nil || back != d {
			t.Errorf("FormatDuration(%v) does not parse back: %v %v", time.Duration(d), back, err)
		}
	}
}

// Load must never panic, and every rejection must be an *Error whose
// problems are one non-empty line each, naming the file.
func FuzzParse(f *testing.F) {
	f.Add(Template())
	if old, err := os.ReadFile(filepath.Join("testdata", "old-template.yaml")); err == nil {
		f.Add(old)
	}
	f.Add([]byte("workers: 4\nwrokers: 5\n"))
	f.Add([]byte("breaker:\n  cooldown: abc\n"))
	f.Add([]byte("gates:\n  - name: t\n    command: x\n  - &a {name: u, command: y}\n  - *a\n"))
	f.Add([]byte("a: &x [*x]\n"))
	f.Add([]byte("? [a, b]\n: c\n"))
	f.Add([]byte("workers: !!binary aGVsbG8=\n"))
	f.Add([]byte("{\"workers\": 3, \"env\": {\"pass\": [\"A\"]}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse(data, "f.yaml")
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) || len(ce.Problems) == 0 {
				t.Fatalf("rejection without problems: %T %v", err, err)
			}
			for _, p := range ce.Problems {
				s := p.String()
				if p.Message == "" || strings.ContainsAny(s, "\n\r") || !strings.HasPrefix(s, "f.yaml") {
					t.Fatalf("bad problem line %q", s)
				}
			}
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("accepted a config that does not validate: %v", err)
		}
		out, err := cfg.YAML()
		if err != nil {
			t.Fatal(err)
		}
		back, err := Parse(out, "show")
		if err != nil || !reflect.DeepEqual(back, cfg) {
			t.Fatalf("round trip failed: %v\n%s", err, out)
		}
	})
}

// Every problem carries the code of its kind, for --json consumers.
func TestProblemCodes(t *testing.T) {
	for in, want := range map[string]string{
		"wrokers: 4\n":                      CodeUnknown,
		"workers: 4\nworkers: 5\n":          CodeDuplicate,
		"workers: four\n":                   CodeType,
		"breaker:\n  cooldown: abc\n":       CodeType,
		"gates: go test\n":                  CodeType,
		"workers: 0\n":                      CodeBadValue,
		"budget:\n  task_usd: .inf\n":       CodeBadValue,
		"mode: docker\n":                    CodeBadValue,
		"schedule: fast\n":                  CodeBadValue,
		"budget:\n  run_usd: -100\n":        CodeBadValue,
		"egress:\n  allow: [\"x y\"]\n":     CodeBadValue,
		"workers: 4\n mode: level\n":        CodeInvalidYAML,
		"workers: 4\n---\nworkers: 5\n":     CodeInvalidYAML,
		string(make([]byte, MaxFileSize+1)): CodeTooLarge,
	} {
		_, err := Parse([]byte(in), "c.yaml")
		var ce *Error
		if !errors.As(err, &ce) || len(ce.Problems) != 1 {
			t.Errorf("%.40q: want one problem, got %v", in, err)
			continue
		}
		if got := ce.Problems[0].Code; got != want {
			t.Errorf("%.40q: code %q, want %q (%s)", in, got, want, ce.Problems[0])
		}
	}
}

// With a devcontainer, the template says so right above mode and still
// loads to Default(): sandbox mode stays the default.
func TestTemplateWithDevcontainer(t *testing.T) {
	tmpl := TemplateWithDevcontainer(".devcontainer/devcontainer.json")
	got, err := Parse(tmpl, FileName)
	if err != nil {
		t.Fatalf("template does not load:\n%v", err)
	}
	if !reflect.DeepEqual(got, Default()) {
		t.Fatalf("template differs from Default():\n got  %+v\n want %+v", got, Default())
	}
	want := "\n# A devcontainer was found at .devcontainer/devcontainer.json: mode: container runs workers in its image (docs/container.md).\nmode: sandbox\n"
	if !strings.Contains(string(tmpl), want) {
		t.Fatalf("no note right above mode:\n%s", tmpl)
	}
	if rest := strings.Replace(string(tmpl), want, "\nmode: sandbox\n", 1); rest != string(Template()) {
		t.Fatal("the template changed elsewhere than the note")
	}
}

// The cluster section: each bad value names its option; a valid one passes.
func TestClusterValidation(t *testing.T) {
	ok := Default()
	ok.Cluster.URL, ok.Cluster.Embed = "tls://10.0.0.1:4222", true
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid cluster section refused: %v", err)
	}
	local := ok
	local.Cluster.AgentKey = AgentKeyLocal
	if err := local.Validate(); err != nil {
		t.Fatalf("agent_key local refused: %v", err)
	}
	for name, c := range map[string]struct {
		edit func(*Config)
		want string
	}{
		"no port":        {func(c *Config) { c.Cluster.URL = "tls://host" }, "cluster.url"},
		"http":           {func(c *Config) { c.Cluster.URL = "http://host:4222" }, "cluster.url"},
		"tasks mode":     {func(c *Config) { c.Mode = ModeTasks }, "cluster.url"},
		"no creds":       {func(c *Config) { c.Cluster.Embed = false }, "cluster.creds"},
		"creds embedded": {func(c *Config) { c.Cluster.Creds = "/x" }, "cluster.creds"},
		"ack wait":       {func(c *Config) { c.Cluster.AckWait = time.Second }, "cluster.ack_wait"},
		"max deliver":    {func(c *Config) { c.Cluster.MaxDeliver = 0 }, "cluster.max_deliver"},
		"listen":         {func(c *Config) { c.Cluster.Listen = "4222" }, "cluster.listen"},
		"agent key":      {func(c *Config) { c.Cluster.AgentKey = "agent" }, "cluster.agent_key"},
	} {
		c2 := ok
		c.edit(&c2)
		err := c2.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want a problem naming %s", name, err, c.want)
		}
	}
}
