package security

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/logging"
)

var (
	scannerOnce sync.Once
	testScanner *Scanner
	scannerErr  error
)

// sharedScanner builds the rules once for the whole package's tests, the way
// zerg builds them once at start-up.
func sharedScanner(t testing.TB) *Scanner {
	t.Helper()
	scannerOnce.Do(func() { testScanner, scannerErr = NewScanner() })
	if scannerErr != nil {
		t.Fatal(scannerErr)
	}
	return testScanner
}

// leaks reports whether s contains any 8-character run of secret: more than
// the 4-character redaction hint ever shows.
func leaks(s, secret string) bool {
	const w = 8
	if len(secret) < w {
		return strings.Contains(s, secret)
	}
	for i := 0; i+w <= len(secret); i++ {
		if strings.Contains(s, secret[i:i+w]) {
			return true
		}
	}
	return false
}

// newFileDiff is what `git diff --cached` prints for a new file.
func newFileDiff(path, content string) string {
	lines := strings.Split(strings.TrimSuffix(content, "\n"), "\n")
	var b strings.Builder
	fmt.Fprintf(&b, "diff --git a/%s b/%s\nnew file mode 100644\nindex 0000000..1234567\n--- /dev/null\n+++ b/%s\n@@ -0,0 +1,%d @@\n", path, path, path, len(lines))
	for _, l := range lines {
		b.WriteString("+" + l + "\n")
	}
	return b.String()
}

func TestCorpusDetectionRate(t *testing.T) {
	t.Parallel()
	s := sharedScanner(t)
	corpus := secretCorpus(1)
	if len(corpus) < 20 {
		t.Fatalf("corpus has %d kinds, want at least 20", len(corpus))
	}
	detected := 0
	var missed []string
	for _, c := range corpus {
		fs := s.ScanFile(c.path, []byte(c.content))
		ds := s.ScanDiff(newFileDiff(c.path, c.content))
		var rules []string
		for _, f := range fs {
			rules = append(rules, f.RuleID)
		}
		ok := len(fs) > 0
		t.Logf("%-32s %-5v %s", c.kind, ok, strings.Join(rules, ","))
		if ok {
			detected++
		} else {
			missed = append(missed, c.kind)
		}
		// A diff adding the file finds what a scan of the file finds, on the same lines.
		if len(ds) != len(fs) {
			t.Errorf("%s: file scan found %v, diff scan %v", c.kind, fs, ds)
		} else {
			for i := range fs {
				if fs[i].Line != ds[i].Line || fs[i].File != ds[i].File || fs[i].RuleID != ds[i].RuleID {
					t.Errorf("%s: file finding %v, diff finding %v", c.kind, fs[i], ds[i])
				}
			}
		}
		if c.anthropic && !ok {
			t.Errorf("%s: an Anthropic credential was not detected", c.kind)
		}
		for _, f := range fs {
			if f.File != c.path || f.Line < 1 {
				t.Errorf("%s: finding %v: want file %s and a line number", c.kind, f, c.path)
			}
		}
	}
	rate := float64(detected) / float64(len(corpus))
	t.Logf("detected %d of %d kinds (%.0f %%); missed: %v", detected, len(corpus), rate*100, missed)
	if rate < 0.9 {
		t.Fatalf("detection rate %.0f %% is below the 90 %% floor; missed %v", rate*100, missed)
	}
}

// TestCorpusAcrossSeeds guards against a rule that only matches some random
// draws (an entropy threshold, a character class): Anthropic credentials are
// detected for every seed.
func TestCorpusAcrossSeeds(t *testing.T) {
	t.Parallel()
	s := sharedScanner(t)
	for seed := uint64(2); seed < 22; seed++ {
		for _, c := range secretCorpus(seed) {
			if c.anthropic && len(s.ScanFile(c.path, []byte(c.content))) == 0 {
				t.Errorf("seed %d: %s not detected", seed, c.kind)
			}
		}
	}
}

func TestReportsNeverContainTheSecret(t *testing.T) {
	t.Parallel()
	s := sharedScanner(t)
	for _, c := range secretCorpus(3) {
		fs := append(s.ScanFile(c.path, []byte(c.content)), s.ScanDiff(newFileDiff(c.path, c.content))...)
		for _, f := range fs {
			js, err := json.Marshal(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, out := range []string{f.String(), string(js), fmt.Sprintf("%v %+v %#v", f, f, f), f.Redacted} {
				if leaks(out, c.secret) {
					t.Errorf("%s: report leaks the secret: %s", c.kind, out)
				}
			}
			if len([]rune(f.Redacted)) > 5 || !strings.HasSuffix(f.Redacted, "…") {
				t.Errorf("%s: redacted hint %q: want at most 4 characters and …", c.kind, f.Redacted)
			}
		}
	}
}

func TestGitleaksLoggingSilenced(t *testing.T) {
	sharedScanner(t)
	if lvl := logging.Logger.GetLevel(); lvl != zerolog.Disabled {
		t.Fatalf("gitleaks logger level %v, want disabled: it would print to stderr", lvl)
	}
}

func TestScanDiffOnlyAddedLines(t *testing.T) {
	s := sharedScanner(t)
	g := newFakeGen(7)
	removed := join("gh", "p_", g.s(alnum, 36))
	context := join("gh", "p_", g.s(alnum, 36))
	added := join("gh", "p_", g.s(alnum, 36))
	added2 := join("gl", "pat-", g.s(urlSafe, 20))
	diff := strings.Join([]string{
		"diff --git a/app/config.go b/app/config.go",
		"index 1111111..2222222 100644",
		"--- a/app/config.go",
		"+++ b/app/config.go",
		"@@ -10,4 +10,5 @@ func config() {",
		" 	ctx := " + context, // line 10, context: already in the file
		"-	old := " + removed, // deleting a secret is not a finding
		"+	tok := " + added,   // line 11
		" 	a := 1",            // line 12
		"+	b := 2",            // line 13
		" }",                  // line 14
		"@@ -40,2 +41,3 @@",
		" x",                                   // line 41
		"++++ b/looks/like/a/header " + added2, // line 42: content, not a header
		" y",                                   // line 43
		"diff --git a/gone.txt b/gone.txt",
		"deleted file mode 100644",
		"--- a/gone.txt",
		"+++ /dev/null",
		"@@ -1 +0,0 @@",
		"-" + removed,
		"diff --git \"a/d\\303\\251j\\303\\240.txt\" \"b/d\\303\\251j\\303\\240.txt\"",
		"--- \"a/d\\303\\251j\\303\\240.txt\"",
		"+++ \"b/d\\303\\251j\\303\\240.txt\"",
		"@@ -0,0 +1 @@",
		"+" + added,
		"\\ No newline at end of file",
	}, "\n") + "\n"
	fs := s.ScanDiff(diff)
	type got struct {
		file string
		line int
		rule string
	}
	var have []got
	for _, f := range fs {
		have = append(have, got{f.File, f.Line, f.RuleID})
		if leaks(f.String(), removed) || leaks(f.String(), context) {
			t.Errorf("finding about a line that was not added: %v", f)
		}
	}
	want := []got{
		{"app/config.go", 11, "github-pat"},
		{"app/config.go", 42, "gitlab-pat"},
		{"déjà.txt", 1, "github-pat"},
	}
	if !slices.Equal(have, want) {
		t.Fatalf("findings %+v\nwant %+v", have, want)
	}
}

func TestScanDiffUnifiedZeroAndPEMAcrossLines(t *testing.T) {
	s := sharedScanner(t)
	g := newFakeGen(8)
	block, _ := g.pem("RSA ", 300)
	lines := strings.Split(block, "\n")
	var b strings.Builder
	fmt.Fprintf(&b, "diff --git a/k.pem b/k.pem\n--- a/k.pem\n+++ b/k.pem\n@@ -3,0 +4,%d @@\n", len(lines))
	for _, l := range lines {
		b.WriteString("+" + l + "\n")
	}
	fs := s.ScanDiff(b.String())
	if len(fs) != 1 || fs[0].RuleID != "private-key" || fs[0].Line != 4 || fs[0].File != "k.pem" {
		t.Fatalf("findings %v: want one private-key at k.pem:4", fs)
	}
}

func TestScanDiffBinaryFileName(t *testing.T) {
	s := sharedScanner(t)
	diff := "diff --git a/certs/client.p12 b/certs/client.p12\nnew file mode 100644\nindex 0000000..1234567\n" +
		"Binary files /dev/null and b/certs/client.p12 differ\n" +
		"diff --git a/old.p12 b/old.p12\ndeleted file mode 100644\nindex 1234567..0000000\n" +
		"Binary files a/old.p12 and /dev/null differ\n" +
		"diff --git a/logo.png b/logo.png\nnew file mode 100644\nindex 0000000..1234567\n" +
		"Binary files /dev/null and b/logo.png differ\n"
	fs := s.ScanDiff(diff)
	if len(fs) != 1 || fs[0].RuleID != "pkcs12-file" || fs[0].File != "certs/client.p12" || fs[0].Line != 0 {
		t.Fatalf("findings %v: want pkcs12-file on certs/client.p12, line 0", fs)
	}
}

func TestURLPasswordRule(t *testing.T) {
	s := sharedScanner(t)
	g := newFakeGen(14)
	for _, tt := range []struct {
		text string
		want bool
	}{
		{"DATABASE_URL=postgres://app:" + g.s(alnum, 16) + "@db.internal:5432/app", true},
		{"amqp://svc:" + g.s(alnum, 12) + "@mq.example.net/vhost", true},
		{"redis://default:" + "Tr0ub4dor-and-3@cache:6379", true}, // split: this file must not trip the scan
		{"DATABASE_URL=postgres://postgres:postgres@localhost:5432/dev", false},
		{"url: postgres://user:password@localhost/db", false},
		{"url: mysql://root:changeme@db/app", false},
		{"url: https://user:${DB_PASSWORD}@host/x", false},
		{"url: https://user:<password>@host/x", false},
		{"see http://example.com:8080/path?q=1", false},
		{"git clone git@github.com:org/repo.git", false},
	} {
		got := len(s.ScanFile("x.env", []byte(tt.text+"\n"))) > 0
		if got != tt.want {
			t.Errorf("%q: found %v, want %v", tt.text, got, tt.want)
		}
	}
}

func TestScanFileLineNumbers(t *testing.T) {
	s := sharedScanner(t)
	g := newFakeGen(9)
	tok := join("gh", "p_", g.s(alnum, 36))
	content := "line one\n\nthird\ntoken = \"" + tok + "\"\nlast"
	fs := s.ScanFile("a/b.txt", []byte(content))
	if len(fs) != 1 || fs[0].Line != 4 || fs[0].File != "a/b.txt" || fs[0].RuleID != "github-pat" {
		t.Fatalf("findings %v: want github-pat at a/b.txt:4", fs)
	}
	// Last line without a final newline.
	fs = s.ScanFile("c.txt", []byte("x\ny\n"+tok))
	if len(fs) != 1 || fs[0].Line != 3 {
		t.Fatalf("findings %v: want one at line 3", fs)
	}
}

func TestInlineGitleaksAllowIsIgnored(t *testing.T) {
	s := sharedScanner(t)
	g := newFakeGen(10)
	ant := join("sk-", "ant-", "api03-", g.s(urlSafe, 93), "AA")
	fs := s.ScanFile("x.py", []byte("KEY = '"+ant+"'  # gitleaks"+":allow\n"))
	if len(fs) == 0 {
		t.Fatal("a gitleaks:allow comment hid a key; workers could bypass the scan that way")
	}
}

func TestEncodedSecretDetected(t *testing.T) {
	s := sharedScanner(t)
	g := newFakeGen(11)
	ant := join("sk-", "ant-", "api03-", g.s(urlSafe, 93), "AA")
	enc := base64.StdEncoding.EncodeToString([]byte("ANTHROPIC_API_KEY=" + ant + "\n"))
	fs := s.ScanFile("blob.txt", []byte("data: "+enc+"\n"))
	if len(fs) == 0 {
		t.Fatal("base64-encoded key not detected")
	}
	for _, f := range fs {
		if leaks(f.String(), ant) || leaks(f.String(), enc) {
			t.Fatalf("report leaks: %v", f)
		}
	}
}

func TestDedupeKeepsMostSpecificRule(t *testing.T) {
	s := sharedScanner(t)
	g := newFakeGen(12)
	ant := join("sk-", "ant-", "api03-", g.s(urlSafe, 93), "AA")
	fs := s.ScanFile(".env", []byte("ANTHROPIC_API_KEY="+ant+"\n"))
	if len(fs) != 1 || fs[0].RuleID != "anthropic-api-key" {
		t.Fatalf("findings %v: want gitleaks' anthropic-api-key once", fs)
	}
	// Allowing the reported rule also drops our rule's match of the same key.
	a, err := ParseAllowlist("allow", strings.NewReader(".env anthropic-api-key\n"))
	if err != nil {
		t.Fatal(err)
	}
	if fs := s.WithAllowlist(a).ScanFile(".env", []byte("ANTHROPIC_API_KEY="+ant+"\n")); len(fs) != 0 {
		t.Fatalf("allowed finding came back under another rule: %v", fs)
	}
}

func TestRedact(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "…"},
		{"short", "…"},
		{"0123456789abcdef", "01…"},
		{strings.Repeat("x", 31), "xxx…"},
		{"abcd" + strings.Repeat("y", 100), "abcd…"},
		{"ééééééééééééééééé", "éé…"},
	}
	for _, tt := range tests {
		if got := redact(tt.in); got != tt.want {
			t.Errorf("redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestAllowlist(t *testing.T) {
	s := sharedScanner(t)
	g := newFakeGen(13)
	tok := join("gh", "p_", g.s(alnum, 36))
	other := join("gh", "p_", g.s(alnum, 36))
	content := []byte("a = " + tok + "\nb = " + other + "\n")
	all := s.ScanFile("testdata/fixtures/x.txt", content)
	if len(all) != 2 {
		t.Fatalf("want 2 findings, got %v", all)
	}
	fp := all[0].Fingerprint
	if !strings.HasPrefix(fp, "sha256:") || leaks(fp, tok) {
		t.Fatalf("fingerprint %q", fp)
	}
	tests := []struct {
		name, allow string
		want        int
	}{
		{"empty", "# nothing\n\n", 2},
		{"fingerprint", fp + "  # the demo token in the fixture\n", 1},
		{"glob and rule", "testdata/** github-pat\n", 0},
		{"glob and other rule", "testdata/** gitlab-pat\n", 2},
		{"glob and star", "testdata/fixtures/*.txt *\n", 0},
		{"glob that does not match", "docs/** *\n", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := ParseAllowlist("allow", strings.NewReader(tt.allow))
			if err != nil {
				t.Fatal(err)
			}
			if got := s.WithAllowlist(a).ScanFile("testdata/fixtures/x.txt", content); len(got) != tt.want {
				t.Fatalf("got %v, want %d findings", got, tt.want)
			}
			if got := s.WithAllowlist(a).ScanDiff(newFileDiff("testdata/fixtures/x.txt", string(content))); len(got) != tt.want {
				t.Fatalf("diff: got %v, want %d findings", got, tt.want)
			}
		})
	}
	// The original scanner is unaffected.
	if len(s.ScanFile("testdata/fixtures/x.txt", content)) != 2 {
		t.Fatal("WithAllowlist changed the shared scanner")
	}
}

func TestParseAllowlistErrors(t *testing.T) {
	for _, in := range []string{
		"sha256:abc\n",
		"sha256:" + strings.Repeat("z", 64) + "\n",
		"just-a-path\n",
		"a b c\n",
		"/etc/** *\n",
		"../up/** *\n",
		"[unclosed *\n",
	} {
		_, err := ParseAllowlist("f", strings.NewReader(in))
		if err == nil || !strings.Contains(err.Error(), "f:1:") {
			t.Errorf("ParseAllowlist(%q) = %v, want an error naming f:1", in, err)
		}
	}
}

func TestLoadAllowlist(t *testing.T) {
	root := t.TempDir()
	a, err := LoadAllowlist(root)
	if err != nil || a.Len() != 0 {
		t.Fatalf("missing file: %v, %d entries", err, a.Len())
	}
	if err := os.MkdirAll(filepath.Join(root, ".zerg"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".zerg", "secrets-allow"), []byte("docs/** *\nsha256:"+strings.Repeat("a", 64)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if a, err = LoadAllowlist(root); err != nil || a.Len() != 2 {
		t.Fatalf("got %v, %d entries", err, a.Len())
	}
}

// TestConcurrentScans runs many scans at once on one scanner (run with -race)
// and checks each gets the same findings as a scan alone.
func TestConcurrentScans(t *testing.T) {
	t.Parallel()
	s := sharedScanner(t)
	corpus := secretCorpus(4)
	want := make([][]Finding, len(corpus))
	for i, c := range corpus {
		want[i] = s.ScanDiff(newFileDiff(c.path, c.content))
	}
	var wg sync.WaitGroup
	errs := make(chan string, 1000)
	for w := range 16 {
		wg.Go(func() {
			for j := range corpus {
				i := (j + w) % len(corpus)
				c := corpus[i]
				got := s.ScanDiff(newFileDiff(c.path, c.content))
				if !slices.Equal(got, want[i]) {
					errs <- fmt.Sprintf("%s: concurrent %v, alone %v", c.kind, got, want[i])
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestScanTimings logs how long a typical diff takes; the figures go into
// docs/secrets.md. It asserts only a generous bound, as a hang detector.
func TestScanTimings(t *testing.T) {
	t.Parallel()
	s := sharedScanner(t)
	// A typical worker diff: ~300 added lines across a few Go files (this
	// package's own; the whole repository is e2e/secrets' to scan).
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	added := 0
	for _, p := range files {
		if added > 300 {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil || len(data) > 8000 {
			continue
		}
		b.WriteString(newFileDiff(p, string(data)))
		added += bytes.Count(data, []byte("\n"))
	}
	start := time.Now()
	const rounds = 20
	for range rounds {
		s.ScanDiff(b.String())
	}
	per := time.Since(start) / rounds
	t.Logf("diff of %d added lines (%d KiB): %v per scan", added, b.Len()/1024, per.Round(time.Microsecond))
	if per > 10*time.Second {
		t.Fatalf("a %d-line diff took %v", added, per)
	}
	start = time.Now()
	if _, err := NewScanner(); err != nil {
		t.Fatal(err)
	}
	t.Logf("NewScanner: %v", time.Since(start).Round(time.Millisecond))
}

// TestZergRulesFillGaps measures gitleaks' default rules alone on the corpus
// and checks that each of our rules earns its place: it detects a kind the
// defaults miss.
func TestZergRulesFillGaps(t *testing.T) {
	t.Parallel()
	plain, err := newScanner("")
	if err != nil {
		t.Fatal(err)
	}
	ours := sharedScanner(t)
	if ours.Rules() <= plain.Rules() {
		t.Fatalf("zerg rules not added: %d vs %d", ours.Rules(), plain.Rules())
	}
	corpus := secretCorpus(1)
	detected := 0
	var gained []string
	for _, c := range corpus {
		if len(plain.ScanFile(c.path, []byte(c.content))) > 0 {
			detected++
		} else if len(ours.ScanFile(c.path, []byte(c.content))) > 0 {
			gained = append(gained, c.kind)
		}
	}
	t.Logf("gitleaks default rules alone (%d rules): %d of %d kinds; zerg rules (%d in all) add %v",
		plain.Rules(), detected, len(corpus), ours.Rules(), gained)
	for _, k := range []string{"anthropic-oauth-token", "anthropic-oauth-refresh-token", "anthropic-api-key-other-length"} {
		if !slices.Contains(gained, k) {
			t.Errorf("%s: expected gitleaks alone to miss it and our rule to catch it; gained %v", k, gained)
		}
	}
}

// An empty file is scanned by its name alone: a rule with a path still
// finds it; a rule whose regexp matches the empty text sends every empty
// file through all the rules.
func TestEmptyFileFindsOnlyByName(t *testing.T) {
	s := sharedScanner(t)
	if fs := s.ScanFile("keys/deploy.p12", nil); len(fs) != 1 || fs[0].RuleID != "pkcs12-file" {
		t.Errorf("findings %v: want pkcs12-file on an empty keys/deploy.p12", fs)
	}
	long := strings.Repeat("d"+strings.Repeat("x", 246)+"/", 15) + "f00001"
	if fs := s.ScanFile(long, nil); len(fs) != 0 {
		t.Errorf("findings %v in an empty file of a plain name", fs)
	}
	e := newEmptyFiles(map[string]config.Rule{"any": {RuleID: "any", Regex: regexp.MustCompile(`x*`)}})
	if !e.mayFind("notes.txt") {
		t.Error("a rule whose regexp matches the empty text must see every empty file")
	}
	if newEmptyFiles(map[string]config.Rule{"x": {RuleID: "x", Regex: regexp.MustCompile(`x+`)}}).mayFind("notes.txt") {
		t.Error("no rule may match an empty notes.txt")
	}
}
