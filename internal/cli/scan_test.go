package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/security"
)

func runZerg(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestScanExitCodesAndSkips(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	key := fakeAnthropicKey(3)
	writeFile(t, "clean/a.go", []byte("package a\n"))
	// Skipped: binary (a NUL byte early), over 1 MiB, under node_modules, under .git.
	writeFile(t, "skips/bin.dat", append([]byte("x\x00y\n"), []byte("k = "+key+"\n")...))
	big := bytes.Repeat([]byte("filler line\n"), scanMaxFileSize/12+10)
	writeFile(t, "skips/big.txt", append(big, []byte("k = "+key+"\n")...))
	writeFile(t, "skips/tools/claude/node_modules/x/index.js", []byte("k = '"+key+"'\n"))
	writeFile(t, "skips/.git/config", []byte("k = "+key+"\n"))
	writeFile(t, "skips/ok.txt", []byte("fine\n"))
	writeFile(t, "leak/deep/er/k.py", []byte("\n\nKEY = '"+key+"'\n"))
	if err := os.Symlink(filepath.Join(dir, "leak"), filepath.Join(dir, "skips", "link")); err != nil {
		t.Fatal(err)
	}

	code, out, errs := runZerg(t, "scan", "clean")
	if code != ExitOK || out != "no secrets found in 1 file\n" || errs != "" {
		t.Fatalf("clean: %d %q %q", code, out, errs)
	}
	code, out, errs = runZerg(t, "scan", "skips")
	if code != ExitOK || out != "no secrets found in 1 file, 2 skipped\n" {
		t.Fatalf("skips: %d %q %q", code, out, errs)
	}
	// A skipped file named on the command line says why.
	code, _, errs = runZerg(t, "scan", "skips/big.txt")
	if code != ExitOK || !strings.Contains(errs, "skip skips/big.txt: larger than 1 MiB") {
		t.Fatalf("big: %d %q", code, errs)
	}
	code, out, errs = runZerg(t, "scan", "clean", "leak")
	if code != ExitFailed || out != "leak/deep/er/k.py:3: anthropic-api-key: "+
		"Identified an Anthropic API Key, which may compromise AI assistant integrations and expose sensitive data to unauthorized access. (sk-a…)\n" {
		t.Fatalf("leak: %d %q %q", code, out, errs)
	}
	if strings.Contains(out+errs, key[10:]) {
		t.Fatal("the key was printed")
	}
	code, out, _ = runZerg(t, "scan", "--json", "leak")
	var res struct {
		Findings []security.Finding
		Files    int
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != ExitFailed || len(res.Findings) != 1 || res.Files != 1 {
		t.Fatalf("json: %d %v %+v", code, err, res)
	}
	// A binary key store is found by its name.
	writeFile(t, "certs/client.p12", []byte{0x30, 0x82, 0x0a, 0x00, 0x02, 0x01, 0x03})
	if code, out, _ := runZerg(t, "scan", "certs"); code != ExitFailed || !strings.HasPrefix(out, "certs/client.p12:0: pkcs12-file: ") {
		t.Fatalf("p12: %d %q", code, out)
	}
	for _, args := range [][]string{{"scan", "nope"}, {"scan", "--staged", "x"}, {"scan", "--bogus"}} {
		if code, _, errs := runZerg(t, args...); code != ExitUsage || !strings.HasPrefix(errs, "zerg: ") {
			t.Errorf("%v: exit %d %q, want %d", args, code, errs, ExitUsage)
		}
	}
	// --staged outside a repository is bad input too.
	if code, _, _ := runZerg(t, "scan", "--staged"); code != ExitUsage {
		t.Errorf("--staged outside a repository: exit %d", code)
	}
	// A broken allowlist is bad input, reported with its line.
	writeFile(t, ".zerg/secrets-allow", []byte("sha256:nothex\n"))
	if code, _, errs := runZerg(t, "scan", "clean"); code != ExitUsage || !strings.Contains(errs, ".zerg/secrets-allow:1:") {
		t.Errorf("bad allowlist: exit %d %q", code, errs)
	}
}
