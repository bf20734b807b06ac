package claude

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// writeExe writes an executable of size bytes (a stand-in binary).
func writeExe(t *testing.T, path string, size int) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	data := []byte("#!/bin/sh\necho '9.9.9 (Claude Code)'\n")
	if size > len(data) {
		data = append(data, make([]byte, size-len(data))...)
	}
	if err := os.WriteFile(path, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// pinnedNative is this platform's first native binary.
func pinnedNative(t *testing.T) string {
	pkgs := nativePackages(runtime.GOOS, runtime.GOARCH)
	if len(pkgs) == 0 {
		t.Skipf("the CLI ships no binary for %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	return nativeBinary(pkgs[0])
}

// The platform packages of every platform the CLI ships for zerg's
// builds: the names npm installs (tools/claude/package-lock.json lists
// them), glibc's before musl's on Linux.
func TestNativePackages(t *testing.T) {
	for _, c := range []struct {
		goos, goarch string
		want         []string
	}{
		{"darwin", "arm64", []string{"claude-code-darwin-arm64"}},
		{"darwin", "amd64", []string{"claude-code-darwin-x64"}},
		{"linux", "amd64", []string{"claude-code-linux-x64", "claude-code-linux-x64-musl"}},
		{"linux", "arm64", []string{"claude-code-linux-arm64", "claude-code-linux-arm64-musl"}},
		{"linux", "386", nil},
		{"freebsd", "amd64", nil},
	} {
		if got := nativePackages(c.goos, c.goarch); !slices.Equal(got, c.want) {
			t.Errorf("%s/%s: %v, want %v", c.goos, c.goarch, got, c.want)
		}
	}
	lock, err := os.ReadFile("../../tools/claude/package-lock.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range [][2]string{{"darwin", "arm64"}, {"darwin", "amd64"}, {"linux", "amd64"}, {"linux", "arm64"}} {
		for _, pkg := range nativePackages(p[0], p[1]) {
			if !strings.Contains(string(lock), `"node_modules/@anthropic-ai/`+pkg+`"`) {
				t.Errorf("%s/%s: %s is not in the pinned lockfile", p[0], p[1], pkg)
			}
		}
	}
}

// A musl system's install has only the -musl package: its binary is the
// one used when the wrapper is a stub.
func TestPinnedBinaryOfAMuslInstall(t *testing.T) {
	pkgs := nativePackages(runtime.GOOS, runtime.GOARCH)
	if len(pkgs) < 2 {
		t.Skipf("%s/%s has one platform package", runtime.GOOS, runtime.GOARCH)
	}
	root := makeRepo(t, 100, 0)
	musl := writeExe(t, filepath.Join(root, nativeBinary(pkgs[1])), stubLimit+1)
	if got := pinnedBinary(root); got != musl {
		t.Fatalf("pinnedBinary = %q, want %q", got, musl)
	}
}

func makeRepo(t *testing.T, wrapperSize, nativeSize int) string {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "tools/claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "tools/claude/package.json"), []byte(`{"dependencies":{"@anthropic-ai/claude-code":"2.1.197"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if wrapperSize > 0 {
		writeExe(t, filepath.Join(root, pinnedWrapper), wrapperSize)
	}
	if nativeSize > 0 {
		writeExe(t, filepath.Join(root, pinnedNative(t)), nativeSize)
	}
	return root
}

func TestLocateOrder(t *testing.T) {
	big := stubLimit + 1
	full := makeRepo(t, big, big)
	stub := makeRepo(t, 100, big)
	noInstall := makeRepo(t, 0, 0)
	elsewhere := t.TempDir()
	cfgBin := writeExe(t, filepath.Join(elsewhere, "cfg/claude"), 10)
	envBin := writeExe(t, filepath.Join(elsewhere, "env/claude"), 10)
	pathBin := writeExe(t, filepath.Join(elsewhere, "path/claude"), 10)
	notExec := filepath.Join(elsewhere, "noexec")
	if err := os.WriteFile(notExec, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name      string
		config    string
		env       string
		exe, wd   string // where zerg runs from, the cwd
		onPath    bool
		want      string
		source    Source
		wantErr   bool
		wantRoot  string
		errString string
	}{
		{name: "config wins", config: cfgBin, env: envBin, exe: full + "/bin/zerg", onPath: true, want: cfgBin, source: SourceConfig, wantRoot: full},
		{name: "config name on PATH", config: "claude", env: envBin, exe: full + "/bin/zerg", onPath: true, want: pathBin, source: SourceConfig, wantRoot: full},
		{name: "config name not on PATH", config: "claude", env: envBin, wantErr: true, errString: "claude from config"},
		{name: "env next", env: envBin, exe: full + "/bin/zerg", onPath: true, want: envBin, source: SourceEnv, wantRoot: full},
		{name: "repo from binary location", exe: full + "/bin/zerg", wd: elsewhere, onPath: true, want: filepath.Join(full, pinnedWrapper), source: SourceRepo, wantRoot: full},
		{name: "repo from cwd", exe: elsewhere + "/zerg", wd: filepath.Join(full, "internal", "x"), onPath: true, want: filepath.Join(full, pinnedWrapper), source: SourceRepo, wantRoot: full},
		{name: "stub wrapper uses native", exe: stub + "/bin/zerg", onPath: true, want: filepath.Join(stub, pinnedNative(t)), source: SourceRepo, wantRoot: stub},
		{name: "repo without install falls to PATH", exe: noInstall + "/bin/zerg", onPath: true, want: pathBin, source: SourcePath, wantRoot: noInstall},
		{name: "PATH last", exe: elsewhere + "/zerg", wd: elsewhere, onPath: true, want: pathBin, source: SourcePath},
		{name: "nothing", exe: elsewhere + "/zerg", wd: elsewhere, wantErr: true, errString: "make claude"},
		{name: "bad config path is an error", config: notExec, env: envBin, onPath: true, wantErr: true, errString: "not an executable"},
		{name: "missing env path is an error", env: filepath.Join(elsewhere, "missing"), exe: full + "/bin/zerg", wantErr: true, errString: "ZERG_CLAUDE"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := Locator{
				Getenv: func(k string) string {
					if k == EnvClaude {
						return tc.env
					}
					return ""
				},
				Executable: func() (string, error) {
					if tc.exe == "" {
						return "", errors.New("no exe")
					}
					return tc.exe, nil
				},
				Getwd: func() (string, error) {
					if tc.wd == "" {
						return elsewhere, nil
					}
					return tc.wd, nil
				},
				LookPath: func(string) (string, error) {
					if tc.onPath {
						return pathBin, nil
					}
					return "", errors.New("not on PATH")
				},
			}
			loc, err := l.Locate(tc.config)
			if tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), tc.errString) {
					t.Fatalf("Locate() = %+v, %v; want error containing %q", loc, err, tc.errString)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if loc.Path != tc.want || loc.Source != tc.source || loc.RepoRoot != tc.wantRoot {
				t.Fatalf("Locate() = %+v, want path %s source %s root %q", loc, tc.want, tc.source, tc.wantRoot)
			}
		})
	}
}

func TestPinnedVersion(t *testing.T) {
	root := makeRepo(t, 0, 0)
	v, err := PinnedVersion(root)
	if err != nil || v != "2.1.197" {
		t.Fatalf("PinnedVersion = %q, %v", v, err)
	}
	if _, err := PinnedVersion(t.TempDir()); err == nil {
		t.Fatal("no package.json accepted")
	}
}

func TestVersionFake(t *testing.T) {
	bin := writeExe(t, filepath.Join(t.TempDir(), "claude"), 10)
	v, err := Version(context.Background(), bin)
	if err != nil || v != "9.9.9" {
		t.Fatalf("Version = %q, %v", v, err)
	}
	bad := filepath.Join(t.TempDir(), "bad")
	if err := os.WriteFile(bad, []byte("#!/bin/sh\necho nope >&2; exit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Version(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("Version of a failing binary: %v", err)
	}
}

func TestSupportOf(t *testing.T) {
	for v, want := range map[string]Support{
		MinVersion: Supported, TestedVersion: Supported, "2.1.266": Supported,
		"2.1.180": OlderMin, "1.0.0": OlderMin, "2.1.333": NewerTested, "2.2.0": NewerTested, "3.0.0": NewerTested,
		"x": Unreadable, "": Unreadable,
	} {
		if got := SupportOf(v); got != want {
			t.Errorf("%q: %s, want %s", v, got, want)
		}
	}
	if err := CheckSupported("/usr/bin/claude", "2.1.100"); err == nil || !strings.Contains(err.Error(), MinVersion) || !strings.Contains(err.Error(), "/usr/bin/claude") {
		t.Errorf("an old release: %v", err)
	}
	if err := CheckSupported("/usr/bin/claude", "2.1.400"); err != nil {
		t.Errorf("a newer release: %v", err)
	}
}

// The range zerg states is the one make test runs: the pinned release is
// TestedVersion, and MinVersion is the oldest of tools/claude-compat, whose
// every release lies in between.
func TestSupportedRangeIsTheMatrix(t *testing.T) {
	root := filepath.Join("..", "..")
	pinned, err := PinnedVersion(root)
	if err != nil {
		t.Fatal(err)
	}
	if pinned != TestedVersion {
		t.Errorf("tools/claude pins %s, TestedVersion is %s", pinned, TestedVersion)
	}
	dirs, err := os.ReadDir(filepath.Join(root, "tools", "claude-compat"))
	if err != nil {
		t.Fatal(err)
	}
	var versions []string
	for _, d := range dirs {
		data, err := os.ReadFile(filepath.Join(root, "tools", "claude-compat", d.Name(), "package.json"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), `"`+pinnedPackage+`": "`+d.Name()+`"`) {
			t.Errorf("tools/claude-compat/%s/package.json does not pin %s exactly", d.Name(), d.Name())
		}
		if s := SupportOf(d.Name()); s != Supported {
			t.Errorf("tools/claude-compat/%s: %s", d.Name(), s)
		}
		versions = append(versions, d.Name())
	}
	if !slices.Contains(versions, MinVersion) {
		t.Errorf("MinVersion %s is not in the matrix %v: the oldest supported release must be one the suite runs", MinVersion, versions)
	}
	if len(versions) < 2 {
		t.Errorf("the matrix %v has fewer than the oldest release and one between", versions)
	}
}
