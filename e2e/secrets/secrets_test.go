// Package secrets holds the secret scanner's checks on inputs too large
// for the unit tier's time budget (docs/testing.md): gitleaks' rules cost
// about a CPU-second per megabyte scanned, so a 5 MB blob, the whole of
// zerg's own source and the commit docs/secrets.md times are scanned here,
// through internal/security's exported API, and the unit tests of
// internal/security keep small inputs.
package secrets_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/security"
)

var (
	scannerOnce sync.Once
	scanner     *security.Scanner
	scannerErr  error
)

// sharedScanner builds the rules once for the package, the way zerg builds
// them once at start-up.
func sharedScanner(t *testing.T) *security.Scanner {
	t.Helper()
	scannerOnce.Do(func() { scanner, scannerErr = security.NewScanner() })
	if scannerErr != nil {
		t.Fatal(scannerErr)
	}
	return scanner
}

// fakeAnthropicKey is a key of the Anthropic API's shape, made at run time
// from a seed and split literals, so this file holds nothing a secret
// scanner flags.
func fakeAnthropicKey(seed uint64) string {
	const urlSafe = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, 93)
	for i := range b {
		b[i] = urlSafe[r.IntN(len(urlSafe))]
	}
	return strings.Join([]string{"sk-", "ant-", "api03-", string(b), "AA"}, "")
}

// leaks reports whether s contains any 8-character run of secret: more
// than the 4-character redaction hint ever shows.
func leaks(s, secret string) bool {
	for i := 0; i+8 <= len(secret); i++ {
		if strings.Contains(s, secret[i:i+8]) {
			return true
		}
	}
	return false
}

func reverse(s string) string {
	b := []byte(s)
	slices.Reverse(b)
	return string(b)
}

// repo is a git repository with a base commit, for CheckCommit.
type repo struct {
	t   *testing.T
	git *gitx.Runner
	dir string
}

func newRepo(t *testing.T) *repo {
	t.Helper()
	r := &repo{t: t, dir: t.TempDir()}
	r.git = gitx.New(r.dir)
	r.run("init", "--quiet", "-b", "main")
	r.write("README.md", "# demo\n")
	r.write("src/main.go", "package main\n\nfunc main() {}\n")
	r.write(".zerg/secrets-allow", "fixtures/** *\n")
	return r
}

func (r *repo) run(args ...string) {
	r.t.Helper()
	if _, err := r.git.Run(context.Background(), args...); err != nil {
		r.t.Fatal(err)
	}
}

func (r *repo) write(p, content string) {
	r.t.Helper()
	full := filepath.Join(r.dir, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func (r *repo) commit(msg string) string {
	r.t.Helper()
	r.run("add", "--all")
	id, err := r.git.Commit(context.Background(), msg, nil)
	if err != nil {
		r.t.Fatal(err)
	}
	return id
}

// textAround is about size bytes of ordinary text with insert near the end.
func textAround(size int, insert string) string {
	line := "lorem ipsum dolor sit amet, consectetur adipiscing elit 0123456789\n"
	body := strings.Repeat(line, size/len(line))
	return body[:len(body)-3*len(line)] + insert + "\n" + body[len(body)-3*len(line):]
}

// TestCheckCommitKeyNearTheEndOfA5MBFile: CheckCommit reads and scans
// every blob whole, up to the size limit: a key a few lines before the end
// of a 5 MB file (half the default limit) is found, and the report does not
// show it. (internal/security's TestCheckCommit has the same case on a file
// of a few hundred KiB.)
func TestCheckCommitKeyNearTheEndOfA5MBFile(t *testing.T) {
	t.Parallel()
	leaked := fakeAnthropicKey(11) // a key zerg does not know: the rules find it
	worker := fakeAnthropicKey(12) // the worker's own key
	allow, err := security.ParseAllowlist("allow", strings.NewReader("fixtures/** *\n"))
	if err != nil {
		t.Fatal(err)
	}
	r := newRepo(t)
	base := r.commit("base")
	size := 5 << 20
	if size > security.DefaultMaxFileBytes {
		t.Fatalf("a %d-byte file is over the %d-byte limit: it would not be read", size, security.DefaultMaxFileBytes)
	}
	r.write("big/log.txt", textAround(size, "api_key="+leaked))
	head := r.commit("change")
	problems, err := security.CheckCommit(context.Background(), r.git, base, head,
		security.CommitCheckOptions{Scanner: sharedScanner(t), Secrets: []string{worker}, Allowlist: allow})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.Path+" "+p.Kind)
		for _, k := range []string{leaked, worker} {
			if leaks(p.String(), k) || leaks(p.String(), reverse(k)) {
				t.Errorf("problem %v shows a key", p)
			}
		}
	}
	if want := []string{"big/log.txt secret"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q\n%v", got, want, problems)
	}
}

// TestCheckCommitTimings logs what a large commit costs; the figures go
// into docs/secrets.md.
func TestCheckCommitTimings(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	base := r.commit("base")
	for i := range 200 {
		r.write(fmt.Sprintf("src/f%03d.go", i), strings.Repeat("package main // some code here\n", 60))
	}
	r.write("big.bin", string(bytes.Repeat([]byte{0, 1, 2, 3, 'a', 'b'}, 1<<20)))
	head := r.commit("change")
	start := time.Now()
	ps, err := security.CheckCommit(context.Background(), r.git, base, head,
		security.CommitCheckOptions{Scanner: sharedScanner(t), Secrets: []string{fakeAnthropicKey(1)}})
	if err != nil || len(ps) != 0 {
		t.Fatalf("%v %v", ps, err)
	}
	t.Logf("200 files of 2 KB and a 6 MB binary: %v", time.Since(start).Round(time.Millisecond))
}

// repoFiles lists this repository's source and docs: tracked files plus
// new, not ignored ones.
func repoFiles(t *testing.T) (root string, files []string) {
	t.Helper()
	out, err := exec.Command("git", "-c", "core.hooksPath=/dev/null", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatalf("find the repository root: %v", err)
	}
	root = strings.TrimSpace(string(out))
	cmd := exec.Command("git", "-c", "core.hooksPath=/dev/null", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	out, err = cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	for _, p := range strings.Split(string(out), "\x00") {
		switch filepath.Ext(p) {
		case ".go", ".md", ".yaml", ".yml", ".json", ".txtar":
			files = append(files, p)
		}
	}
	slices.Sort(files)
	return root, slices.Compact(files)
}

// TestNoFalsePositivesInRepoSource scans zerg's own source: it has no
// secrets, so every finding is a false positive.
func TestNoFalsePositivesInRepoSource(t *testing.T) {
	t.Parallel()
	s := sharedScanner(t)
	root, files := repoFiles(t)
	allow, err := security.LoadAllowlist(root)
	if err != nil {
		t.Fatal(err)
	}
	s = s.WithAllowlist(allow)
	start := time.Now()
	var n, size int
	var hits []string
	for _, p := range files {
		b, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			continue // deleted in the work tree
		}
		n++
		size += len(b)
		for _, f := range s.ScanFile(p, b) {
			hits = append(hits, f.String())
		}
	}
	t.Logf("scanned %d files, %d KiB in %v; %d findings", n, size/1024, time.Since(start).Round(time.Millisecond), len(hits))
	if n < 20 {
		t.Fatalf("only %d files found; the listing is wrong", n)
	}
	for _, h := range hits {
		t.Errorf("false positive: %s", h)
	}
}
