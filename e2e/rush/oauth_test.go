package rush

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/mockapi"
	"github.com/zergrush/zerg/internal/security"
)

// The subscription token of the runs below: shaped like the real ones, so
// every redactor and scanner treats it as a secret.
const subToken = "sk-ant-oat01-E2E-subscription-token-0123456789abcdef"

// envDump are the turns the names task runs first: a script, written where
// the task writes anyway, that prints every environment the worker's
// processes can see, rot13'd so that no redactor on the way out (stream
// records, the gateway's scrubber) hides what it holds; then run with sh,
// which the hook allows in both modes. The task's own turns rewrite the
// file after.
const envDump = `      - tools: [{name: Write, input: {file_path: data/names.txt, content: "cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | tr A-Za-z N-ZA-Mn-za-m; echo dumped-env\\n"}}]
      - tools: [{name: Bash, input: {command: "sh data/names.txt"}}]
`

func rot13(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return 'a' + (r-'a'+13)%26
		case r >= 'A' && r <= 'Z':
			return 'A' + (r-'A'+13)%26
		}
		return r
	}, s)
}

// oauthRun is one real-API rush of the demo in mode with only
// CLAUDE_CODE_OAUTH_TOKEN set, against a scripted API that takes only
// subToken, and only as the CLI sends a subscription token.
type oauthRun struct {
	p    *project
	srv  *mockapi.Server
	r    result
	dump string // the names task's tool results
}

func rushWithToken(t *testing.T, mode, token string) oauthRun {
	t.Helper()
	p := newProject(t, func(dir string) {
		editFile(t, filepath.Join(dir, ".zerg", "config.yaml"), func(s string) string { return s + modeLines(mode) })
		editFile(t, scenarioPath(dir), func(s string) string {
			const names = "    match: \"Task L1-names:\"\n    turns:\n"
			if !strings.Contains(s, names) {
				t.Fatal("the demo scenario has no names task to add the dump to")
			}
			return strings.Replace(s, names, names+envDump, 1)
		})
	})
	sc, err := mockapi.LoadScenario(scenarioPath(p.dir))
	if err != nil {
		t.Fatal(err)
	}
	sc.OAuthToken = subToken
	srv := mockapi.NewServer(sc)
	url, err := srv.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	p.setConfig("claude:\n  base_url: " + url + "\n")
	env := append(p.env(), "CLAUDE_CODE_OAUTH_TOKEN="+token)
	for _, kv := range env {
		if strings.HasPrefix(kv, "ANTHROPIC_") {
			t.Fatalf("the run's environment holds %s: it must have the subscription token alone", kv)
		}
	}
	r := p.zergEnv(env, "rush", "demo", "--yes")
	run := oauthRun{p: p, srv: srv, r: r}
	if r.code == 0 {
		run.dump = strings.Join(toolResults(t, filepath.Join(p.dir, ".zerg", "runs", "demo"))["L1-names"], "\n")
	}
	return run
}

// tokenValues are the values of CLAUDE_CODE_OAUTH_TOKEN in a rot13'd
// environment dump, decoded; zerg's redaction of one stays as it is.
func tokenValues(dump string) []string {
	var out []string
	prefix := rot13("CLAUDE_CODE_OAUTH_TOKEN=")
	for _, l := range strings.Split(dump, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), prefix); ok {
			if v != security.Redacted {
				v = rot13(v)
			}
			out = append(out, v)
		}
	}
	return out
}

// mainBetas is the anthropic-beta header of the scripted API's main
// requests (the credential headers are not recorded).
func mainBetas(reqs []mockapi.Request) []string {
	var out []string
	for _, q := range reqs {
		if q.Kind == mockapi.KindMain {
			out = append(out, q.Headers.Get("Anthropic-Beta"))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// TestSubscriptionToken: a rush with only a subscription token delivers in
// the isolated mode; the API got the real token on every request, in the
// shape the CLI sends it in subprocess mode; no process in the sandbox held
// it (the worker had a placeholder), while in subprocess mode (the
// control) the same dump finds it.
func TestSubscriptionToken(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("no /proc")
	}
	iso := rushWithToken(t, isolated, subToken)
	t.Logf("%s: exit %d\n%s", isolated, iso.r.code, tail(iso.r.stderr, 8))
	if iso.r.code != 0 {
		t.Fatalf("%s: the run was not delivered: exit %d\n%s%s", isolated, iso.r.code, iso.r.stdout, iso.r.stderr)
	}
	files := iso.p.integrationFiles()
	for _, f := range allDemoFiles {
		if !files[f] {
			t.Errorf("%s is missing from the delivered branch", f)
		}
	}
	// The run's first line (after the check of the base): what it does and
	// with which credential.
	first := ""
	for _, l := range strings.Split(iso.r.stderr, "\n") {
		if strings.HasPrefix(l, "zerg: demo: ") {
			first = l
			break
		}
	}
	if !strings.Contains(first, "subscription token from CLAUDE_CODE_OAUTH_TOKEN") || strings.Contains(iso.r.stderr, subToken) {
		t.Errorf("the first line does not name the credential (or shows it): %q", first)
	}

	// Prices do not apply: the report and zerg cost say so.
	if !strings.Contains(iso.r.stdout, "subscription: usage, not dollars") {
		t.Errorf("the rush's report does not say the dollars are usage:\n%s", iso.r.stdout)
	}
	if c := iso.p.zergEnv(iso.p.env(), "cost", "demo"); c.code != 0 || !strings.Contains(c.stdout, "subscription: usage, not dollars") {
		t.Errorf("zerg cost: exit %d\n%s%s", c.code, c.stdout, c.stderr)
	}

	// Every request the API answered carried the real token as the CLI
	// sends a subscription token; none was refused.
	reqs := iso.srv.Requests()
	mains := 0
	for _, q := range reqs {
		if q.Kind == mockapi.KindHead {
			continue
		}
		if !q.OAuth || q.APIKey || q.Status == 401 {
			t.Errorf("%s %s (%s): oauth %v, x-api-key %v, status %d; want the real token as a bearer with the oauth beta", q.Method, q.Path, q.Kind, q.OAuth, q.APIKey, q.Status)
		}
		if q.Kind == mockapi.KindMain {
			mains++
		}
	}
	if mains < len(allDemoFiles) {
		t.Errorf("%d main requests; the workers did not talk to the scripted API", mains)
	}

	// Nothing in the sandbox held the token: every CLAUDE_CODE_OAUTH_TOKEN
	// the dump shows is the placeholder (there is one: the control that it
	// read the CLI's environment), and nothing in it was redacted (zerg's
	// redactor knows the token's forms, rot13 too, and would have hidden it).
	if vals := tokenValues(iso.dump); len(vals) == 0 || slices.ContainsFunc(vals, func(v string) bool { return v != "sk-ant-zerg-sandbox-placeholder" }) {
		t.Errorf("the CLAUDE_CODE_OAUTH_TOKEN values inside the %s boundary are %q; want the placeholder alone:\n%.3000s", isolated, vals, iso.dump)
	}
	if strings.Contains(iso.dump, security.Redacted) || strings.Contains(iso.dump, rot13(subToken)) || strings.Contains(iso.dump, subToken) {
		t.Errorf("the subscription token was inside the %s boundary:\n%.3000s", isolated, iso.dump)
	}

	// Subprocess mode: the same run; the worker holds the token itself, so
	// the dump finds it (the control that the check above can fail), and
	// the API saw the same OAuth betas as through the gateway.
	sub := rushWithToken(t, "subprocess", subToken)
	if sub.r.code != 0 {
		t.Fatalf("subprocess: the run was not delivered: exit %d\n%s%s", sub.r.code, sub.r.stdout, sub.r.stderr)
	}
	if vals := tokenValues(sub.dump); !slices.ContainsFunc(vals, func(v string) bool { return v == subToken || v == security.Redacted }) {
		t.Errorf("control: in subprocess mode the dump does not find the token the worker holds (values %q):\n%.3000s", vals, sub.dump)
	}
	for _, q := range sub.srv.Requests() {
		if q.Kind != mockapi.KindHead && !q.OAuth {
			t.Errorf("subprocess: %s %s (%s) without the token in the CLI's shape", q.Method, q.Path, q.Kind)
		}
	}
	isoB, subB := mainBetas(reqs), mainBetas(sub.srv.Requests())
	if !slices.Equal(isoB, subB) || len(isoB) == 0 || !strings.Contains(strings.Join(isoB, ","), "oauth-2025-04-20") {
		t.Errorf("the API saw these betas through the gateway:\n%s\nand these from the CLI itself:\n%s", strings.Join(isoB, "\n"), strings.Join(subB, "\n"))
	}

	// Control: a token the API does not take is refused before anything is
	// written, naming the variable (the scripted API's check can fail).
	bad := rushWithToken(t, isolated, "sk-ant-oat01-E2E-the-wrong-token-0123456789")
	if bad.r.code != 2 || !strings.Contains(bad.r.stderr, "refused the key in CLAUDE_CODE_OAUTH_TOKEN") {
		t.Errorf("control: a wrong token: exit %d\n%s", bad.r.code, bad.r.stderr)
	}
	bad.p.nothingWritten("a wrong token")
}
