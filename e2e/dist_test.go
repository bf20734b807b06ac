package e2e

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"debug/buildinfo"
	"debug/elf"
	"debug/macho"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestMakeDist: make dist makes one archive per platform, each with a zerg
// of that platform carrying the version, and SHA256SUMS naming each
// archive's hash. The binary of this machine's platform is run; the
// others are read (their executable format, architecture and build info),
// since this machine cannot run them.
func TestMakeDist(t *testing.T) {
	for _, tool := range []string{"make", "go", "tar", "gzip", "sha256sum"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s not found", tool)
		}
	}
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	const version = "v9.9.9-disttest"
	dist := t.TempDir()
	mk := exec.CommandContext(context.Background(), "make", "--no-print-directory", "dist", "DIST="+dist, "VERSION="+version)
	mk.Dir = root
	if out, err := mk.CombinedOutput(); err != nil {
		t.Fatalf("make dist: %v\n%s", err, out)
	}
	sums := readSums(t, filepath.Join(dist, "SHA256SUMS"))
	platforms := [][2]string{{"darwin", "arm64"}, {"darwin", "amd64"}, {"linux", "amd64"}, {"linux", "arm64"}}
	if len(sums) != len(platforms) {
		t.Errorf("SHA256SUMS lists %d archives, want %d: %v", len(sums), len(platforms), sums)
	}
	for _, p := range platforms {
		name := "zerg_" + version + "_" + p[0] + "_" + p[1]
		archive := filepath.Join(dist, name+".tar.gz")
		data, err := os.ReadFile(archive)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		sum := sha256.Sum256(data)
		if got := hex.EncodeToString(sum[:]); sums[name+".tar.gz"] != got {
			t.Errorf("%s: SHA256SUMS says %q, the archive's hash is %s", name, sums[name+".tar.gz"], got)
		}
		files := untar(t, data)
		if _, ok := files[name+"/README.md"]; !ok {
			t.Errorf("%s: no README.md in %v", name, keys(files))
		}
		bin, ok := files[name+"/zerg"]
		if !ok {
			t.Errorf("%s: no zerg in %v", name, keys(files))
			continue
		}
		checkExecutable(t, name, bin, p[0], p[1], version)
		if p[0] == runtime.GOOS && p[1] == runtime.GOARCH {
			exe := filepath.Join(t.TempDir(), "zerg")
			if err := os.WriteFile(exe, bin, 0o755); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(exe, "--version").Output()
			if err != nil {
				t.Fatalf("%s --version: %v", name, err)
			}
			if got := strings.TrimSpace(string(out)); got != "zerg "+version {
				t.Errorf("%s: zerg --version = %q, want %q", name, got, "zerg "+version)
			}
		}
	}
}

// checkExecutable reads bin as an executable of goos/goarch, built
// without cgo, carrying version.
func checkExecutable(t *testing.T, name string, bin []byte, goos, goarch, version string) {
	t.Helper()
	switch goos {
	case "darwin":
		f, err := macho.NewFile(bytes.NewReader(bin))
		if err != nil {
			t.Errorf("%s: not a Mach-O file: %v", name, err)
			return
		}
		want := map[string]macho.Cpu{"arm64": macho.CpuArm64, "amd64": macho.CpuAmd64}[goarch]
		if f.Cpu != want || f.Type != macho.TypeExec {
			t.Errorf("%s: Mach-O %v %v, want an executable for %v", name, f.Type, f.Cpu, want)
		}
	case "linux":
		f, err := elf.NewFile(bytes.NewReader(bin))
		if err != nil {
			t.Errorf("%s: not an ELF file: %v", name, err)
			return
		}
		want := map[string]elf.Machine{"arm64": elf.EM_AARCH64, "amd64": elf.EM_X86_64}[goarch]
		if f.Machine != want || f.Type != elf.ET_EXEC {
			t.Errorf("%s: ELF %v %v, want a static executable for %v", name, f.Type, f.Machine, want)
		}
	}
	bi, err := buildinfo.Read(bytes.NewReader(bin))
	if err != nil {
		t.Errorf("%s: no build info: %v", name, err)
		return
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	if settings["GOOS"] != goos || settings["GOARCH"] != goarch || settings["CGO_ENABLED"] != "0" {
		t.Errorf("%s: built for %s/%s (CGO_ENABLED=%s)", name, settings["GOOS"], settings["GOARCH"], settings["CGO_ENABLED"])
	}
	// -trimpath leaves -ldflags out of the build info (it may hold
	// paths), so the version set with -X is looked for in the binary's
	// data; this machine's binary is also run.
	if !bytes.Contains(bin, []byte(version)) {
		t.Errorf("%s: linked without the version %s", name, version)
	}
}

func readSums(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sums := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, file, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("SHA256SUMS: %q is not sha256sum's format", sc.Text())
		}
		sums[file] = sum
	}
	return sums
}

func untar(t *testing.T, data []byte) map[string][]byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	files := map[string][]byte{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			files[h.Name] = b
		}
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
