package toolchain

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestDetect(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"go.mod", "Makefile", "uv.lock"} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A directory named like a marker file, and a marker below the root,
	// reveal nothing.
	if err := os.MkdirAll(filepath.Join(dir, "package.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sub", "Cargo.toml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tc := range Detect(dir) {
		got = append(got, tc.Name+":"+tc.Evidence)
	}
	want := []string{"go:go.mod", "python:uv.lock", "make:Makefile"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Detect = %v, want %v", got, want)
	}
	if tcs := Detect(dir); !Has(tcs, "go") || Has(tcs, "rust") {
		t.Fatalf("Has is wrong on %v", tcs)
	}
}

func TestRunners(t *testing.T) {
	for _, n := range []string{"pytest", "cargo", "npm", "pnpm", "cargo-nextest", "python3", "tox", "nox"} {
		if !IsRunner(n) {
			t.Errorf("%s is not a runner", n)
		}
	}
	// A package's program is the repository's package.json's to provide.
	for _, n := range []string{"greet-all", "run.sh", "lib", "jest", "tsc"} {
		if IsRunner(n) {
			t.Errorf("%s is a runner", n)
		}
	}
	for cmd, want := range map[string][2]string{
		"python3 -m pytest -q tests/":               {"python3", "pytest"},
		"cd src && /usr/bin/python3.11 -m mypy pkg": {"/usr/bin/python3.11", "mypy"},
		"pytest -q":                    {"", ""},
		"python3 tests/run.py -m fast": {"", ""},
	} {
		if in, mod := PythonModule(cmd); in != want[0] || mod != want[1] {
			t.Errorf("PythonModule(%q) = %q, %q; want %q", cmd, in, mod, want)
		}
	}
}
