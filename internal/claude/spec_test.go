package claude

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

const testKey = "sk-ant-test-SECRET-0123456789"
const testToken = "tok-SECRET-abcdefghijkl"

func baseSpec(t *testing.T) Spec {
	t.Helper()
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	return Spec{
		Binary:     "/usr/bin/claude",
		Workdir:    ws,
		AttemptDir: filepath.Join(root, "attempt"),
		Prompt:     "do the task",
		API:        APISettings{BaseURL: "http://127.0.0.1:9", APIKey: testKey, AuthToken: testToken},
		Hook:       HookSpec{ZergBinary: "/opt/zerg/bin/zerg", AllowedPaths: []string{"src/**"}},
	}
}

// argValue returns the word after flag in argv.
func argValue(args []string, flag string) (string, bool) {
	i := slices.Index(args, flag)
	if i < 0 || i+1 >= len(args) {
		return "", false
	}
	return args[i+1], true
}

func TestArgs(t *testing.T) {
	cases := []struct {
		name   string
		mod    func(*Spec)
		want   map[string]string // flag → value
		absent []string
		last   []string // expected tail of argv
	}{
		{
			name:   "defaults",
			mod:    func(*Spec) {},
			want:   map[string]string{"--permission-mode": "acceptEdits", "--tools": "Bash,Edit,Read,Write,Glob,Grep", "--setting-sources": "", "--output-format": "stream-json"},
			absent: []string{"--model", "--fallback-model", "--max-turns", "--max-budget-usd", "--append-system-prompt", "--allowedTools", "--disallowedTools", "--dangerously-skip-permissions", "--bare"},
			last:   []string{"--", "do the task"},
		},
		{
			name: "everything",
			mod: func(s *Spec) {
				s.Model, s.FallbackModel = "sonnet", "haiku"
				s.MaxTurns, s.MaxBudgetUSD = 40, 2.5
				s.Tools = []string{" Bash ", "Read", "", "Read", "Write "}
				s.PermissionMode = "dontAsk"
				s.AppendSystemPrompt = "be brief"
				s.SessionID = "0b9a3c4e-1111-4222-8333-444455556666"
				s.Prompt = "-starts with a dash"
			},
			want: map[string]string{"--model": "sonnet", "--fallback-model": "haiku", "--max-turns": "40", "--max-budget-usd": "2.5",
				"--tools": "Bash,Read,Write", "--permission-mode": "dontAsk", "--append-system-prompt": "be brief",
				"--session-id": "0b9a3c4e-1111-4222-8333-444455556666"},
			last: []string{"--", "-starts with a dash"},
		},
		{
			name: "no tools",
			mod:  func(s *Spec) { s.Tools = []string{} },
			want: map[string]string{"--tools": ""},
		},
		{
			name: "huge prompt goes to stdin",
			mod:  func(s *Spec) { s.Prompt = strings.Repeat("x", maxArgPrompt+1) },
			last: []string{"--tools", "Bash,Edit,Read,Write,Glob,Grep"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := baseSpec(t)
			tc.mod(&s)
			n, err := s.normalize()
			if err != nil {
				t.Fatal(err)
			}
			args := n.args()
			for _, must := range []string{"-p", "--verbose", "--strict-mcp-config"} {
				if !slices.Contains(args, must) {
					t.Errorf("argv lacks %s: %q", must, args)
				}
			}
			if v, _ := argValue(args, "--settings"); v != filepath.Join(n.AttemptDir, "settings.json") {
				t.Errorf("--settings %q", v)
			}
			if v, _ := argValue(args, "--session-id"); !validSessionID(v) {
				t.Errorf("--session-id %q is not a UUID", v)
			}
			for flag, want := range tc.want {
				if got, ok := argValue(args, flag); !ok || got != want {
					t.Errorf("%s = %q (present %v), want %q", flag, got, ok, want)
				}
			}
			for _, flag := range tc.absent {
				if slices.Contains(args, flag) {
					t.Errorf("argv has %s: %q", flag, args)
				}
			}
			if tc.last != nil && !slices.Equal(args[len(args)-len(tc.last):], tc.last) {
				t.Errorf("argv ends %q, want %q", args[len(args)-len(tc.last):], tc.last)
			}
			if n.promptOnStdin() == slices.Contains(args, n.Prompt) {
				t.Errorf("prompt on stdin %v but in argv %v", n.promptOnStdin(), slices.Contains(args, n.Prompt))
			}
			assertNoSecret(t, strings.Join(args, "\x00"))
		})
	}
}

func assertNoSecret(t *testing.T, s string) {
	t.Helper()
	for _, secret := range []string{testKey, testToken, "SECRET"} {
		if strings.Contains(s, secret) {
			t.Fatalf("secret %q leaked into %q", secret, s)
		}
	}
}

// allowedEnv is every name a worker may receive by default.
var allowedEnv = []string{"PATH", "HOME", "TERM", "LANG", "LANGUAGE", "TZ", "LC_ALL", "LC_CTYPE", "LC_COLLATE", "LC_MESSAGES",
	"LC_MONETARY", "LC_NUMERIC", "LC_TIME", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CONFIG_DIR",
	"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "CLAUDE_CODE_MAX_RETRIES", "API_TIMEOUT_MS", "CLAUDE_CODE_TMPDIR", "TMPDIR", EnvRunMarker,
	"CLAUDE_CODE_DISABLE_AUTO_MEMORY", "CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS"}

func envMap(env []string) map[string]string {
	m := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

func TestEnvAllowlist(t *testing.T) {
	// A hostile parent environment: everything here that is not allowlisted
	// must stay out.
	parent := map[string]string{
		"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C", "TZ": "UTC", "TERM": "xterm-256color",
		"LD_PRELOAD": "/evil.so", "LD_LIBRARY_PATH": "/evil", "DYLD_INSERT_LIBRARIES": "x", "NODE_OPTIONS": "--require /evil.js",
		"BASH_ENV": "/evil.sh", "ENV": "/evil.sh", "IS_SANDBOX": "1", "GIT_DIR": "/other/.git", "GIT_SSH_COMMAND": "evil",
		"SSH_AUTH_SOCK": "/tmp/agent", "AWS_SECRET_ACCESS_KEY": "aws", "GITHUB_TOKEN": "ghp_x", "GOOGLE_APPLICATION_CREDENTIALS": "/k.json",
		"ANTHROPIC_API_KEY": "parent-key-should-not-be-used", "HOME": "/root", "CLAUDE_CONFIG_DIR": "/root/.claude", "GOCACHE": "/root/.cache/go",
		"HTTPS_PROXY": "http://proxy:3128",
	}
	getenv := func(k string) string { return parent[k] }
	s := baseSpec(t)
	s.APITimeout = 2500 * time.Millisecond
	n, err := s.normalize()
	if err != nil {
		t.Fatal(err)
	}
	env := n.env(getenv, "marker123")
	m := envMap(env)
	for k := range m {
		if !slices.Contains(allowedEnv, k) {
			t.Errorf("env has %s, which is not allowlisted", k)
		}
	}
	want := map[string]string{
		"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C", "TZ": "UTC", "TERM": "dumb",
		"HOME":               filepath.Join(n.AttemptDir, "home"),
		"CLAUDE_CONFIG_DIR":  filepath.Join(n.AttemptDir, "config"),
		"CLAUDE_CODE_TMPDIR": filepath.Join(n.AttemptDir, "tmp"),
		"TMPDIR":             filepath.Join(n.AttemptDir, "tmp"),
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
		"CLAUDE_CODE_MAX_RETRIES":                  "3",
		"CLAUDE_CODE_DISABLE_AUTO_MEMORY":          "1",
		"CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS":     "1",
		"API_TIMEOUT_MS":                           "2500",
		"ANTHROPIC_BASE_URL":                       "http://127.0.0.1:9",
		"ANTHROPIC_API_KEY":                        testKey,
		"ANTHROPIC_AUTH_TOKEN":                     testToken,
		EnvRunMarker:                               "marker123",
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %q, want %q", k, m[k], v)
		}
	}
	if len(m) != len(want) {
		t.Errorf("env has %d entries, want %d: %q", len(m), len(want), env)
	}

	// Caller-listed names pass through; explicit values are set.
	s.PassEnv = []string{"GOCACHE", "HTTPS_PROXY", "NOT_SET_ANYWHERE"}
	s.SetEnv = map[string]string{"IS_SANDBOX": "1", "CLAUDE_CODE_MAX_OUTPUT_TOKENS": "8000"}
	s.MaxRetries = 1
	n, err = s.normalize()
	if err != nil {
		t.Fatal(err)
	}
	m = envMap(n.env(getenv, "m"))
	if m["GOCACHE"] != "/root/.cache/go" || m["HTTPS_PROXY"] != "http://proxy:3128" || m["IS_SANDBOX"] != "1" ||
		m["CLAUDE_CODE_MAX_OUTPUT_TOKENS"] != "8000" || m["CLAUDE_CODE_MAX_RETRIES"] != "1" {
		t.Errorf("pass-through/set env wrong: %v", m)
	}
	if _, ok := m["NOT_SET_ANYWHERE"]; ok {
		t.Error("unset pass-through variable appeared")
	}

	// No key configured: none is invented, the parent's is not used.
	s = baseSpec(t)
	s.API = APISettings{}
	n, _ = s.normalize()
	m = envMap(n.env(getenv, "m"))
	for _, k := range []string{EnvAPIKey, EnvAuthToken, EnvOAuthToken, EnvBaseURL, "API_TIMEOUT_MS"} {
		if _, ok := m[k]; ok {
			t.Errorf("%s set without being configured", k)
		}
	}
	// Empty PATH gets a sane default.
	if m := envMap(n.env(func(string) string { return "" }, "m")); m["PATH"] == "" {
		t.Error("empty PATH")
	}
}

func TestNormalizeRejects(t *testing.T) {
	isRootOld := isRoot
	defer func() { isRoot = isRootOld }()
	cases := []struct {
		name string
		mod  func(*Spec)
		root bool
	}{
		{"no binary", func(s *Spec) { s.Binary = "" }, false},
		{"relative workdir", func(s *Spec) { s.Workdir = "ws" }, false},
		{"relative attempt dir", func(s *Spec) { s.AttemptDir = "a" }, false},
		{"attempt dir inside workdir", func(s *Spec) { s.AttemptDir = filepath.Join(s.Workdir, ".zerg") }, false},
		{"empty prompt", func(s *Spec) { s.Prompt = "  " }, false},
		{"bad permission mode", func(s *Spec) { s.PermissionMode = "yolo" }, false},
		{"bypass as root", func(s *Spec) { s.PermissionMode = "bypassPermissions" }, true},
		{"bad session id", func(s *Spec) { s.SessionID = "nope" }, false},
		{"negative turns", func(s *Spec) { s.MaxTurns = -1 }, false},
		{"tool with comma", func(s *Spec) { s.Tools = []string{"Bash,Read"} }, false},
		{"pass key by name", func(s *Spec) { s.PassEnv = []string{"ANTHROPIC_API_KEY"} }, false},
		{"set HOME", func(s *Spec) { s.SetEnv = map[string]string{"HOME": "/root"} }, false},
		{"bad env name", func(s *Spec) { s.PassEnv = []string{"A=B"} }, false},
		{"hook without zerg", func(s *Spec) { s.Hook.ZergBinary = "" }, false},
		{"hook with relative zerg", func(s *Spec) { s.Hook.ZergBinary = "zerg" }, false},
		{"bad allowed path", func(s *Spec) { s.Hook.AllowedPaths = []string{"../x"} }, false},
		{"huge system prompt", func(s *Spec) { s.AppendSystemPrompt = strings.Repeat("x", maxArgPrompt+1) }, false},
		{"relative read dir", func(s *Spec) { s.Hook.ReadDirs = []string{"ctx"} }, false},
		{"empty bash rule", func(s *Spec) { s.Hook.BashAllow = []string{" "} }, false},
		{"run as root user", func(s *Spec) { s.RunAs = &WorkerUser{Name: "r", UID: 0, GID: 5} }, true},
		{"run as group 0", func(s *Spec) { s.RunAs = &WorkerUser{Name: "r", UID: 5, GID: 0} }, true},
		{"switch user without root", func(s *Spec) { s.RunAs = &WorkerUser{Name: "w", UID: os.Geteuid() + 1, GID: 5} }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			isRoot = func() bool { return tc.root }
			s := baseSpec(t)
			tc.mod(&s)
			if _, err := s.normalize(); !errors.Is(err, ErrBadSpec) {
				t.Fatalf("normalize() = %v, want ErrBadSpec", err)
			} else {
				assertNoSecret(t, err.Error())
			}
		})
	}
	// bypassPermissions is fine for a non-root user.
	isRoot = func() bool { return false }
	s := baseSpec(t)
	s.PermissionMode = "bypassPermissions"
	if _, err := s.normalize(); err != nil {
		t.Fatal(err)
	}
}

func TestSettingsAndPolicyFiles(t *testing.T) {
	s := baseSpec(t)
	s.AllowedTools = []string{"Bash(go test *)"}
	s.DisallowedTools = []string{"Bash(rm *)", "Bash(curl *)"}
	n, err := s.normalize()
	if err != nil {
		t.Fatal(err)
	}
	if err := n.prepare(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(n.settingsPath())
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Type, Command string
				Timeout       int
			} `json:"hooks"`
		} `json:"hooks"`
		Permissions struct{ Allow, Deny []string } `json:"permissions"`
	}
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	pre := st.Hooks["PreToolUse"]
	if len(pre) != 1 || pre[0].Matcher != "*" || len(pre[0].Hooks) != 1 {
		t.Fatalf("PreToolUse hooks: %+v", pre)
	}
	wantCmd := fmt.Sprintf("'/opt/zerg/bin/zerg' hook pre-tool-use --policy '%s'", n.policyPath())
	if h := pre[0].Hooks[0]; h.Type != "command" || h.Command != wantCmd || h.Timeout <= 0 {
		t.Fatalf("hook %+v, want command %q", h, wantCmd)
	}
	// The caller's deny rules come first, then the driver's second layer.
	if !slices.Equal(st.Permissions.Allow, s.AllowedTools) || !slices.Equal(st.Permissions.Deny[:len(s.DisallowedTools)], s.DisallowedTools) {
		t.Fatalf("permissions %+v", st.Permissions)
	}
	for _, want := range []string{"Bash(curl:*)", "Bash(git push:*)", "Read(/" + n.AttemptDir + "/**)"} {
		if !slices.Contains(st.Permissions.Deny, want) {
			t.Errorf("deny rules lack %s: %v", want, st.Permissions.Deny)
		}
	}
	assertNoSecret(t, string(data))
	pol, err := os.ReadFile(n.policyPath())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(pol), `"src/**"`) || !strings.Contains(string(pol), n.Workdir) {
		t.Fatalf("policy %s", pol)
	}
	for _, d := range []string{n.homePath(), n.configPath(), n.tmpPath()} {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			t.Errorf("%s not created", d)
		}
	}
	// A workdir that does not exist is refused at prepare time.
	s.Workdir = filepath.Join(s.Workdir, "missing")
	n, _ = s.normalize()
	if err := n.prepare(); !errors.Is(err, ErrBadSpec) {
		t.Fatalf("prepare with missing workdir: %v", err)
	}
}

func TestSecretsRedacted(t *testing.T) {
	s := baseSpec(t)
	for _, out := range []string{
		fmt.Sprint(s), fmt.Sprintf("%v", s), fmt.Sprintf("%+v", s), fmt.Sprintf("%#v", s), fmt.Sprintf("%s", s.API),
		fmt.Sprintf("%v", s.API.APIKey), fmt.Sprint(&s), s.API.String(), fmt.Errorf("launch %v: boom", s.API).Error(),
	} {
		assertNoSecret(t, out)
	}
	b, err := json.Marshal(s.API)
	if err != nil {
		t.Fatal(err)
	}
	assertNoSecret(t, string(b))
	if got := s.API.redact("key=" + testKey + " token=" + testToken); strings.Contains(got, "SECRET") {
		t.Fatalf("redact: %q", got)
	}
	if string(s.API.APIKey) != testKey {
		t.Fatal("the raw value must stay reachable by conversion")
	}
	if !strings.Contains(s.API.String(), "api_key=[redacted]") || !strings.Contains(APISettings{}.String(), "api_key=unset") {
		t.Fatalf("String: %q / %q", s.API.String(), APISettings{}.String())
	}
}

// TestAPIFromGetenvPrecedence: the CLI's own precedence. An API key or an
// auth token (both kept) comes before the subscription token, which is
// then not read; a configured key variable wins over ANTHROPIC_API_KEY; a
// configured token variable replaces CLAUDE_CODE_OAUTH_TOKEN.
func TestAPIFromGetenvPrecedence(t *testing.T) {
	custom := CredentialVars{APIKey: "MY_KEY", OAuthToken: "MY_TOKEN"}
	for _, tc := range []struct {
		name             string
		env              map[string]string
		vars             CredentialVars
		key, auth, oauth Secret
	}{
		{"key", map[string]string{EnvAPIKey: "k"}, CredentialVars{}, "k", "", ""},
		{"auth token", map[string]string{EnvAuthToken: "t"}, CredentialVars{}, "", "t", ""},
		{"subscription token alone", map[string]string{EnvOAuthToken: "o"}, CredentialVars{}, "", "", "o"},
		{"a key drops the subscription token", map[string]string{EnvAPIKey: "k", EnvOAuthToken: "o"}, CredentialVars{}, "k", "", ""},
		{"an auth token drops the subscription token", map[string]string{EnvAuthToken: "t", EnvOAuthToken: "o"}, CredentialVars{}, "", "t", ""},
		{"key and auth token are both kept", map[string]string{EnvAPIKey: "k", EnvAuthToken: "t"}, CredentialVars{}, "k", "t", ""},
		{"the configured key wins", map[string]string{EnvAPIKey: "k", "MY_KEY": "mine"}, custom, "mine", "", ""},
		{"the CLI's key under a configured name", map[string]string{EnvAPIKey: "k"}, custom, "k", "", ""},
		{"the configured token replaces the CLI's", map[string]string{EnvOAuthToken: "not-this", "MY_TOKEN": "o"}, custom, "", "", "o"},
		{"only the configured token is read", map[string]string{EnvOAuthToken: "not-this"}, custom, "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{EnvBaseURL: "http://env"}
			for k, v := range tc.env {
				env[k] = v
			}
			a := APIFromGetenv(func(k string) string { return env[k] }, tc.vars)
			if a.BaseURL != "http://env" || a.APIKey != tc.key || a.AuthToken != tc.auth || a.OAuthToken != tc.oauth {
				t.Errorf("got key %q auth %q oauth %q base %q, want %q %q %q", string(a.APIKey), string(a.AuthToken), string(a.OAuthToken), a.BaseURL, string(tc.key), string(tc.auth), string(tc.oauth))
			}
		})
	}
}

// A subscription token reaches the worker as CLAUDE_CODE_OAUTH_TOKEN, and
// only when the spec holds one: the parent's own is never inherited.
func TestOAuthTokenEnv(t *testing.T) {
	getenv := func(k string) string {
		if k == EnvOAuthToken {
			return "the-parents-token"
		}
		return ""
	}
	s := baseSpec(t)
	s.API = APISettings{OAuthToken: "sk-ant-oat01-SECRET-worker-token"}
	n, err := s.normalize()
	if err != nil {
		t.Fatal(err)
	}
	m := envMap(n.env(getenv, "m"))
	if m[EnvOAuthToken] != "sk-ant-oat01-SECRET-worker-token" || m[EnvAPIKey] != "" {
		t.Errorf("env: %s=%q %s=%q", EnvOAuthToken, m[EnvOAuthToken], EnvAPIKey, m[EnvAPIKey])
	}
	s.API = APISettings{APIKey: "k"}
	n, _ = s.normalize()
	if v, ok := envMap(n.env(getenv, "m"))[EnvOAuthToken]; ok {
		t.Errorf("the parent's token was inherited: %q", v)
	}
	a := APISettings{OAuthToken: "sk-ant-oat01-SECRET-worker-token"}
	if !a.Subscription() || !a.HasCredential() || strings.Contains(a.String(), "SECRET") || !strings.Contains(a.String(), "oauth_token=[redacted]") {
		t.Errorf("%s: subscription %v", a, a.Subscription())
	}
	if got := a.redact("x sk-ant-oat01-SECRET-worker-token y"); strings.Contains(got, "SECRET") {
		t.Errorf("redact: %q", got)
	}
	a.APIKey = "k"
	if a.Subscription() {
		t.Error("an API key as well is no subscription run")
	}
}

func TestNewSessionID(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		id := NewSessionID()
		if !validSessionID(id) || id[14] != '4' || !strings.ContainsRune("89ab", rune(id[19])) || seen[id] {
			t.Fatalf("bad or repeated id %q", id)
		}
		seen[id] = true
	}
}

// The policy file carries the defaults, the verification command's
// toolchain, the caller's extra rules and the attempt dir as protected.
func TestPolicyComposition(t *testing.T) {
	s := baseSpec(t)
	s.Hook.BashCommands = []string{"go test ./... && sh tests/run.sh"}
	s.Hook.BashAllow = []string{"npm ci", "ls"}
	s.Hook.ReadDirs = []string{"/opt/ctx"}
	n, err := s.normalize()
	if err != nil {
		t.Fatal(err)
	}
	p := n.policy()
	for _, want := range []string{"ls", "sh {script}", "go test", "go vet", "npm ci"} {
		if !slices.Contains(p.Bash.Allow, want) {
			t.Errorf("bash rules lack %q: %v", want, p.Bash.Allow)
		}
	}
	if n := len(slices.DeleteFunc(slices.Clone(p.Bash.Allow), func(r string) bool { return r != "ls" })); n != 1 {
		t.Errorf("duplicate rules: %v", p.Bash.Allow)
	}
	if !slices.Equal(p.Bash.Commands, s.Hook.BashCommands) || p.Protected[0] != n.AttemptDir || p.ReadDirs[0] != "/opt/ctx" || p.Bash.Unrestricted {
		t.Errorf("policy %+v", p)
	}
	s.Hook.BashUnrestricted = true
	n, _ = s.normalize()
	if p := n.policy(); !p.Bash.Unrestricted || len(p.Bash.Allow) != 0 {
		t.Errorf("unrestricted policy %+v", p.Bash)
	}
	// The worker user's env trusts exactly the workdir for its own git.
	isRootOld := isRoot
	defer func() { isRoot = isRootOld }()
	isRoot = func() bool { return true }
	s.RunAs = &WorkerUser{Name: "w", UID: 12345, GID: 12345}
	n, err = s.normalize()
	if err != nil {
		t.Fatal(err)
	}
	m := envMap(n.env(func(string) string { return "" }, "m"))
	if m["GIT_CONFIG_KEY_0"] != "safe.directory" || m["GIT_CONFIG_VALUE_0"] != n.Workdir || m["GIT_CONFIG_COUNT"] != "1" {
		t.Errorf("worker git env %v", m)
	}
}
