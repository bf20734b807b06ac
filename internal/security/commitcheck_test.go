package security

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/gitx"
)

// checkRepo is a repository for one CheckCommit case: a base commit and a
// work tree to build the commit on top of it.
type checkRepo struct {
	t   *testing.T
	git *gitx.Runner
	dir string
}

func newCheckRepo(t *testing.T) *checkRepo {
	t.Helper()
	w := &checkRepo{t: t, dir: t.TempDir()}
	w.git = gitx.New(w.dir)
	w.run("init", "--quiet", "-b", "main")
	w.write("README.md", "# demo\n")
	w.write("src/main.go", "package main\n\nfunc main() {}\n")
	w.write(".zerg/secrets-allow", "fixtures/** *\n")
	w.write(".github/workflows/ci.yml", "on: push\n")
	w.symlink(".", "here") // an old in-repo link a new one may lead through
	return w
}

func (w *checkRepo) run(args ...string) string {
	w.t.Helper()
	out, err := w.git.Run(context.Background(), args...)
	if err != nil {
		w.t.Fatal(err)
	}
	return out
}

func (w *checkRepo) write(p, content string) {
	w.t.Helper()
	full := filepath.Join(w.dir, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

func (w *checkRepo) symlink(target, p string) {
	w.t.Helper()
	full := filepath.Join(w.dir, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		w.t.Fatal(err)
	}
	_ = os.Remove(full)
	if err := os.Symlink(target, full); err != nil {
		w.t.Fatal(err)
	}
}

func (w *checkRepo) remove(p string) {
	w.t.Helper()
	if err := os.RemoveAll(filepath.Join(w.dir, filepath.FromSlash(p))); err != nil {
		w.t.Fatal(err)
	}
}

func (w *checkRepo) commit(msg string) string {
	w.t.Helper()
	w.run("add", "--all")
	id, err := w.git.Commit(context.Background(), msg, nil)
	if err != nil {
		w.t.Fatal(err)
	}
	return id
}

// textAround is about size bytes of ordinary text with insert near the end.
func textAround(size int, insert string) string {
	line := "lorem ipsum dolor sit amet, consectetur adipiscing elit 0123456789\n"
	body := strings.Repeat(line, size/len(line))
	return body[:len(body)-3*len(line)] + insert + "\n" + body[len(body)-3*len(line):]
}

// goSum is a go.sum of modules whose names hold words like "auth" and
// "token" next to random hashes: what generic-api-key trips on.
func goSum(seed uint64) string {
	g := newFakeGen(seed)
	var b strings.Builder
	for _, m := range []string{"golang.org/x/oauth2 v0.15.0", "github.com/golang-jwt/jwt/v5 v5.2.0",
		"github.com/example/apikey-client v1.4.2", "github.com/example/token-store v0.3.1",
		"github.com/example/secret-manager v2.0.0", "github.com/example/auth v1.0.0"} {
		fmt.Fprintf(&b, "%s h1:%s=\n%s/go.mod h1:%s=\n", m, g.s(b64, 43), m, g.s(b64, 43))
	}
	return b.String()
}

// TestCheckCommit: each case commits something on top of a base, and
// CheckCommit reports exactly the expected problems, read from objects.
func TestCheckCommit(t *testing.T) {
	t.Parallel()
	sc := sharedScanner(t)
	leaked := fakeAnthropicKey(11) // a key zerg does not know: the rules find it
	worker := fakeAnthropicKey(12) // the worker's own key: zerg knows it exactly
	allow, err := ParseAllowlist("allow", strings.NewReader("fixtures/** *\n"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		base   func(w *checkRepo) // more base content
		change func(w *checkRepo)
		opts   func(o *CommitCheckOptions)
		staged bool     // commit the index as change left it
		want   []string // "path kind"
	}{
		// Clean commits.
		{name: "normal files, an executable, symlinks inside, a deletion", change: func(w *checkRepo) {
			w.write("src/util.go", "package main\n\nfunc util() int { return 42 }\n")
			w.write("README.md", "# demo\n\nMore words.\n")
			w.write("run.sh", "#!/bin/sh\necho hi\n")
			if err := os.Chmod(filepath.Join(w.dir, "run.sh"), 0o755); err != nil {
				t.Fatal(err)
			}
			w.symlink("../README.md", "docs/readme")
			w.symlink("src", "current")
			w.symlink("here/src/../README.md", "via-old-link")
			w.remove("src/main.go")
			w.write("go.sum", goSum(3))
		}},

		// Secrets the rules find, wherever a diff would not show them.
		{name: "key in a normal file", change: func(w *checkRepo) {
			w.write("app/.env", "ANTHROPIC_API_KEY="+leaked+"\n")
		}, want: []string{"app/.env secret"}},
		{name: "key added to a file of the base", change: func(w *checkRepo) {
			w.write("README.md", "# demo\n\nkey: "+leaked+"\n")
		}, want: []string{"README.md secret"}},
		{name: "key in a file with a NUL byte", change: func(w *checkRepo) {
			w.write("data.bin2", "\x00\x01\x02header\x00k="+leaked+"\x00\xff")
		}, want: []string{"data.bin2 secret"}},
		{name: "key in a file a .gitattributes of the base marks binary", base: func(w *checkRepo) {
			w.write(".gitattributes", "*.txt binary -diff\n")
		}, change: func(w *checkRepo) {
			w.write("notes.txt", "token = "+leaked+"\n")
		}, want: []string{"notes.txt secret"}},
		{name: "key behind a .gitattributes of the same commit", change: func(w *checkRepo) {
			w.write(".gitattributes", "*.txt binary\n")
			w.write("notes.txt", "token = "+leaked+"\n")
		}, want: []string{".gitattributes protected", "notes.txt secret"}},
		// Every blob is read and scanned whole: the key is past the first
		// pipe buffer and read chunk. Rules cost about a CPU-second per MB,
		// so the 5 MB case is in e2e/secrets.
		{name: "key near the end of a 256 KiB file", change: func(w *checkRepo) {
			w.write("big/log.txt", textAround(256<<10, "api_key="+leaked))
		}, want: []string{"big/log.txt secret"}},
		{name: "key in a file gitleaks skips by name", change: func(w *checkRepo) {
			w.write("assets/logo.png", "\x89PNG\r\n\x1a\n"+leaked)
			w.write("go.sum", "example.com/m v1.0.0 h1:"+leaked+"\n")
		}, want: []string{"assets/logo.png secret", "go.sum secret"}},
		{name: "key as a symlink target", change: func(w *checkRepo) {
			w.symlink(leaked, "config/key")
		}, want: []string{"config/key secret"}},
		{name: "key in a path name", change: func(w *checkRepo) {
			w.write("notes/"+worker[:50]+"/"+worker[50:]+".txt", "nothing here\n")
		}, want: []string{"notes/" + worker[:50] + "/" + worker[50:] + ".txt key"}},

		// The worker's own key, as written or transformed.
		{name: "worker key as written", change: func(w *checkRepo) {
			w.write("cfg.txt", "key="+worker+"\n")
		}, want: []string{"cfg.txt key", "cfg.txt secret"}},
		{name: "worker key base64", change: func(w *checkRepo) {
			w.write("cfg.txt", "blob: "+base64.StdEncoding.EncodeToString([]byte(worker))+"\n")
		}, want: []string{"cfg.txt key", "cfg.txt secret"}},
		{name: "worker key base64 after one byte", change: func(w *checkRepo) {
			// The decoded text is "x" and the key: no word boundary before
			// "sk-", so the rules miss it; the key forms do not.
			w.write("cfg.txt", "blob: "+base64.StdEncoding.EncodeToString([]byte("x"+worker))+"\n")
		}, want: []string{"cfg.txt key"}},
		{name: "worker key hex", change: func(w *checkRepo) {
			w.write("cfg.txt", "h="+strings.ToUpper(hex.EncodeToString([]byte(worker)))+"\n")
		}, want: []string{"cfg.txt key", "cfg.txt secret"}},
		{name: "worker key reversed, split over lines", change: func(w *checkRepo) {
			w.write("cfg.txt", chunked(keyReverse(worker), 7, "\n")+"\n")
		}, want: []string{"cfg.txt key"}},
		{name: "worker key in an allowlisted file", change: func(w *checkRepo) {
			w.write("fixtures/a.env", "A="+leaked+"\nB="+worker+"\n")
		}, want: []string{"fixtures/a.env key"}},

		// Symlinks.
		{name: "symlink to /etc/shadow", change: func(w *checkRepo) {
			w.symlink("/etc/shadow", "shadow")
		}, want: []string{"shadow symlink"}},
		{name: "symlink to ../../outside", change: func(w *checkRepo) {
			w.symlink("../../outside", "docs/out")
		}, want: []string{"docs/out symlink"}},
		{name: "symlink to a/../../x", change: func(w *checkRepo) {
			w.symlink("a/../../x", "up")
		}, want: []string{"up symlink"}},
		{name: "symlink out through an old in-repo link", change: func(w *checkRepo) {
			w.symlink("here/../outside", "sneaky") // "here" is ".": the .. leaves the top
		}, want: []string{"sneaky symlink"}},
		{name: "symlink into .git", change: func(w *checkRepo) {
			w.symlink("src/../.git/config", "gitconfig")
		}, want: []string{"gitconfig symlink"}},
		{name: "symlink with a Windows path", change: func(w *checkRepo) {
			w.symlink(`..\..\outside`, "win")
		}, want: []string{"win symlink"}},
		{name: "symlink with an overlong target", staged: true, change: func(w *checkRepo) {
			w.run("add", "--all")
			oid, err := w.git.RunInput(context.Background(), []byte(strings.Repeat("a", 5000)), "hash-object", "-w", "--stdin")
			if err != nil {
				t.Fatal(err)
			}
			w.run("update-index", "--add", "--cacheinfo", "120000,"+strings.TrimSpace(oid)+",long")
		}, want: []string{"long symlink"}},
		{name: "file replaced by a symlink to /etc/passwd", change: func(w *checkRepo) {
			w.remove("README.md")
			w.symlink("/etc/passwd", "README.md")
		}, want: []string{"README.md symlink"}},

		// Protected paths.
		{name: "zerg config", change: func(w *checkRepo) {
			w.write(".zerg/config.yaml", "workers: 9\n")
		}, want: []string{".zerg/config.yaml protected"}},
		{name: "claude settings", change: func(w *checkRepo) {
			w.write(".claude/settings.json", "{}\n")
		}, want: []string{".claude/settings.json protected"}},
		{name: "claude settings, other case, nested", change: func(w *checkRepo) {
			w.write("sub/.Claude/settings.json", "{}\n")
		}, want: []string{"sub/.Claude/settings.json protected"}},
		{name: ".claude as a symlink to a directory in the repository", change: func(w *checkRepo) {
			w.write("docs/evil/settings.json", "{}\n")
			w.symlink("docs/evil", ".claude")
		}, want: []string{".claude protected"}},
		{name: ".github as a symlink", change: func(w *checkRepo) {
			w.remove(".github")
			w.symlink("docs", ".github")
		}, want: []string{".github protected", ".github/workflows/ci.yml protected"}},
		{name: "workflow", change: func(w *checkRepo) {
			w.write(".github/workflows/x.yml", "on: push\n")
		}, want: []string{".github/workflows/x.yml protected"}},
		{name: "gitattributes", change: func(w *checkRepo) {
			w.write(".gitattributes", "*.go filter=x\n")
		}, want: []string{".gitattributes protected"}},
		{name: "deleting the secrets allowlist", change: func(w *checkRepo) {
			w.remove(".zerg/secrets-allow")
		}, want: []string{".zerg/secrets-allow protected"}},
		{name: "custom protected list", change: func(w *checkRepo) {
			w.write("db/migrations/001.sql", "drop table users;\n")
			w.write(".zerg/config.yaml", "workers: 9\n")
		}, opts: func(o *CommitCheckOptions) {
			o.Protected = []string{"db/migrations/**"}
		}, want: []string{"db/migrations/001.sql protected"}},

		// Gitlinks and size.
		{name: "gitlink", staged: true, change: func(w *checkRepo) {
			w.run("update-index", "--add", "--cacheinfo", "160000,"+strings.Repeat("ab", 20)+",vendor/lib")
		}, want: []string{"vendor/lib gitlink"}},
		{name: "file over the default limit", change: func(w *checkRepo) {
			w.write("huge.dat", strings.Repeat("z", DefaultMaxFileBytes+1))
		}, want: []string{"huge.dat size"}},
		{name: "file over a set limit", change: func(w *checkRepo) {
			w.write("a.txt", strings.Repeat("a", 1001))
			w.write("b.txt", strings.Repeat("b", 1000))
		}, opts: func(o *CommitCheckOptions) {
			o.MaxFileBytes = 1000
		}, want: []string{"a.txt size"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newCheckRepo(t)
			if tc.base != nil {
				tc.base(w)
			}
			base := w.commit("base")
			tc.change(w)
			if !tc.staged {
				w.run("add", "--all")
			}
			id, err := w.git.Commit(context.Background(), "change", nil)
			if err != nil {
				t.Fatal(err)
			}
			w.run("update-ref", "refs/heads/change", id)
			opts := CommitCheckOptions{Scanner: sc, Secrets: []string{worker}, Allowlist: allow}
			if tc.opts != nil {
				tc.opts(&opts)
			}
			problems, err := CheckCommit(context.Background(), w.git, base, "change", opts)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range problems {
				got = append(got, p.Path+" "+p.Kind)
				for _, k := range []string{leaked, worker} {
					if leaks(p.Detail, k) || leaks(p.String(), keyReverse(k)) {
						t.Errorf("problem %v shows the key", p)
					}
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q\n%v", got, tc.want, problems)
			}
		})
	}
}

// TestCheckCommitDiffBlind: the problems of a binary or -diff file do not
// show in git diff at all, which is why CheckCommit reads objects.
func TestCheckCommitDiffBlind(t *testing.T) {
	t.Parallel()
	leaked := fakeAnthropicKey(21)
	w := newCheckRepo(t)
	w.write(".gitattributes", "*.txt -diff\n")
	base := w.commit("base")
	w.write("notes.txt", "token = "+leaked+"\n")
	w.write("blob.dat", "\x00"+leaked)
	head := w.commit("change")
	diff, err := w.git.DiffCommits(context.Background(), base, head)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(diff, leaked) || len(sharedScanner(t).ScanDiff(diff)) != 0 {
		t.Fatalf("the diff shows the key; this test no longer shows why objects are read:\n%s", diff)
	}
	problems, err := CheckCommit(context.Background(), w.git, base, head, CommitCheckOptions{Scanner: sharedScanner(t)})
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 2 || problems[0].Path != "blob.dat" || problems[1].Path != "notes.txt" {
		t.Fatalf("problems %v", problems)
	}
}

// TestCheckCommitReplaceRefs: a replacement ref that swaps the key's blob
// for a clean one does not hide it.
func TestCheckCommitReplaceRefs(t *testing.T) {
	t.Parallel()
	leaked := fakeAnthropicKey(22)
	w := newCheckRepo(t)
	base := w.commit("base")
	w.write("a.txt", "k="+leaked+"\n")
	head := w.commit("change")
	real := strings.TrimSpace(w.run("rev-parse", head+":a.txt"))
	clean, err := w.git.RunInput(context.Background(), []byte("clean\n"), "hash-object", "-w", "--stdin")
	if err != nil {
		t.Fatal(err)
	}
	w.run("replace", real, strings.TrimSpace(clean))
	problems, err := CheckCommit(context.Background(), w.git, base, head, CommitCheckOptions{Scanner: sharedScanner(t)})
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 1 || problems[0].Kind != ProblemSecret {
		t.Fatalf("problems %v", problems)
	}
}

func TestCheckCommitErrors(t *testing.T) {
	t.Parallel()
	w := newCheckRepo(t)
	base := w.commit("base")
	ctx := context.Background()
	if _, err := CheckCommit(ctx, w.git, base, "no-such-branch", CommitCheckOptions{}); err == nil {
		t.Error("an unknown commit was checked")
	}
	if _, err := CheckCommit(ctx, w.git, "-x", base, CommitCheckOptions{}); err == nil {
		t.Error("an option as base was accepted")
	}
	for _, pat := range []string{"/etc/**", "[unclosed", ""} {
		if _, err := CheckCommit(ctx, w.git, base, base, CommitCheckOptions{Protected: []string{pat}}); err == nil {
			t.Errorf("protected pattern %q accepted", pat)
		}
	}
	// No scanner, no secrets: only the structural checks run.
	w.write("a.txt", "k="+fakeAnthropicKey(5)+"\n")
	head := w.commit("change")
	if ps, err := CheckCommit(ctx, w.git, base, head, CommitCheckOptions{}); err != nil || len(ps) != 0 {
		t.Fatalf("without a scanner: %v %v", ps, err)
	}
}

func TestReadBatches(t *testing.T) {
	for _, tc := range []struct {
		sizes []int64
		want  [][2]int
	}{
		{nil, nil},
		{[]int64{5}, [][2]int{{0, 1}}},
		{[]int64{4, 6, 1}, [][2]int{{0, 2}, {2, 3}}},
		{[]int64{11, 2, 3, 5, 1}, [][2]int{{0, 1}, {1, 4}, {4, 5}}},
		{[]int64{0, 0, 10, 0}, [][2]int{{0, 4}}},
		{[]int64{0, 0, 10, 1}, [][2]int{{0, 3}, {3, 4}}},
	} {
		if got := readBatches(tc.sizes, 10); !slices.Equal(got, tc.want) {
			t.Errorf("readBatches(%v) = %v, want %v", tc.sizes, got, tc.want)
		}
	}
}

func TestResolveLink(t *testing.T) {
	// The link under test is d/link; these are the tree's other symlinks.
	others := map[string]string{
		"top":       ".",
		"d/up":      "..",
		"d/sibling": "../src",
		"loop1":     "loop2",
		"loop2":     "loop1",
	}
	tooLong := map[string]bool{"d/long": true}
	for target, want := range map[string]bool{
		"x":             true,
		"./a/./b":       true,
		"../src/x":      true,
		"a/../../x":     true, // from d: d/a, d, the top, x
		"up/src":        true, // d/up is the top
		"sibling/x":     true,
		"../top/top/x":  true,
		"a/../../../x":  false,
		"up/..":         false,
		"../top/../x":   false, // lexically "x", but top is the top itself
		"../loop1":      false,
		"long/x":        false,
		"/x":            false,
		`C:\x`:          false,
		`..\..\x`:       false,
		"":              false,
		"a\x00b":        false,
		"../.GIT/hooks": false,
	} {
		m := map[string]string{"d/link": target}
		for k, v := range others {
			m[k] = v
		}
		why := resolveLink("d/link", m, tooLong)
		if (why == "") != want {
			t.Errorf("target %q: %q, want ok=%v", target, why, want)
		}
	}
}

// TestCheckCommitCompressed: a key gzipped, zlib-deflated, bzip2'd (a
// fixture made by the bzip2 tool is not needed: Go reads only), zipped,
// hidden in a base64 block of a gzip, or nested (a gzip in a zip) is found
// inside. The control: without unpacking, the rules see none of them.
func TestCheckCommitCompressed(t *testing.T) {
	t.Parallel()
	leaked := fakeAnthropicKey(33)
	text := []byte("config:\n  api_key: " + leaked + "\n")
	gz := func(b []byte) []byte {
		var out bytes.Buffer
		w := gzip.NewWriter(&out)
		w.Write(b)
		w.Close()
		return out.Bytes()
	}
	zl := func(b []byte) []byte {
		var out bytes.Buffer
		w := zlib.NewWriter(&out)
		w.Write(b)
		w.Close()
		return out.Bytes()
	}
	zipOf := func(name string, b []byte) []byte {
		var out bytes.Buffer
		w := zip.NewWriter(&out)
		f, _ := w.Create(name)
		f.Write(b)
		w.Close()
		return out.Bytes()
	}
	blobs := map[string][]byte{
		"a/key.gz":       gz(text),
		"a/key.zz":       zl(text),
		"a/key.zip":      zipOf("inner/config.yaml", text),
		"a/nested.zip":   zipOf("deep.gz", gz(text)),
		"a/b64.txt":      []byte("payload = \"" + base64.StdEncoding.EncodeToString(gz(text)) + "\"\n"),
		"a/b64-url.json": []byte(`{"blob":"` + base64.RawURLEncoding.EncodeToString(zl(text)) + `"}`),
	}
	sc := sharedScanner(t)
	for name, b := range blobs {
		// The control: the rules alone do not see the key.
		if f := sc.ScanFile(name, b); len(f) != 0 || bytes.Contains(b, []byte(leaked)) {
			t.Fatalf("%s: the key is visible without unpacking (%v); this case proves nothing", name, f)
		}
	}
	w := newCheckRepo(t)
	base := w.commit("base")
	for name, b := range blobs {
		w.write(name, string(b))
	}
	head := w.commit("compressed keys")
	problems, err := CheckCommit(context.Background(), w.git, base, head, CommitCheckOptions{Scanner: sc})
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]string{}
	for _, p := range problems {
		found[p.Path] = p.Detail
	}
	for name := range blobs {
		if d, ok := found[name]; !ok || !strings.Contains(d, "inside ") {
			t.Errorf("%s: %q, want a finding inside it", name, d)
		}
	}
	// A zip bomb expands to at most MaxUnpackBytes.
	bomb := gz(bytes.Repeat([]byte{0}, 64<<20))
	total := 0
	for _, u := range Unpack(bomb) {
		total += len(u.Data)
	}
	if total > MaxUnpackBytes {
		t.Errorf("a gzip of 64 MiB of zeros unpacked to %d bytes", total)
	}
}
