package diagnose

import (
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

func TestProjectNames(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "// comment\nmodule github.com/acme/widget/v2\n\ngo 1.22\n")
	write("package.json", `{"name": "@acme/widget", "version": "1.0.0"}`)
	write("Cargo.toml", "[package]\nname = \"acme-widget\"\n")
	write("pyproject.toml", "[project]\nname = \"widget\"\n")
	write("widget/__init__.py", "")
	write("docs/index.md", "")
	got := ProjectNames(dir)
	want := []string{"github.com/acme/widget/v2", "@acme/widget", "acme-widget", "acme_widget", "widget", "widget"}
	if !slices.Equal(got, want) {
		t.Errorf("ProjectNames = %q, want %q", got, want)
	}
	// A FIFO named like a manifest is not read (the read would block).
	fifo := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(fifo, "go.mod"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := ProjectNames(fifo); len(got) != 0 {
		t.Errorf("a FIFO gave names %q", got)
	}
	if got := ProjectNames(filepath.Join(dir, "nope")); len(got) != 0 {
		t.Errorf("a missing directory has names %q", got)
	}
}

// A project's own name tells a wrong import of its own package from a
// dependency it does not declare: the messages are the same.
func TestOwnNamesTellImportFromDependency(t *testing.T) {
	missing := func(pkg string) Input {
		out := "cast.go:12:2: no required module provides package " + pkg + "; to add it:\n\tgo get " + pkg + "\n"
		return Input{Output: out, Command: "go build ./...", Exit: 1, Own: []string{"github.com/spf13/cast"}}
	}
	if got := Diagnose(missing("github.com/spf13/cast/conv")).Top().Pattern; got != ImportMissing {
		t.Errorf("the project's own package: %s, want %s", got, ImportMissing)
	}
	if got := Diagnose(missing("github.com/spf13/afero")).Top().Pattern; got != DependencyMissing {
		t.Errorf("another module's package: %s, want %s", got, DependencyMissing)
	}
}
