package projectinit

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/config"
)

func TestMissingIgnoreEntries(t *testing.T) {
	want := []string{".zerg/runs/", ".zerg/cache/"}
	tests := []struct {
		name, content string
		missing       []string
	}{
		{"empty", "", want},
		{"both present", ".zerg/runs/\n.zerg/cache/\n", nil},
		{"other spellings", "/.zerg/runs\r\n  .zerg/cache  \n", nil},
		{"a parent is not the entry", ".zerg/\n", want},
		{"negated is not the entry", "!.zerg/runs/\n", want},
		{"one present", "x\n.zerg/cache/", []string{".zerg/runs/"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MissingIgnoreEntries([]byte(tt.content), want); !reflect.DeepEqual(got, tt.missing) {
				t.Fatalf("got %q, want %q", got, tt.missing)
			}
		})
	}
}

func TestUpdateGitignoreKeepsCRLF(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, ".gitignore")
	if err := os.WriteFile(path, []byte("bin/\r\nobj/"), 0o644); err != nil {
		t.Fatal(err)
	}
	o, err := UpdateGitignore(root)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	want := "bin/\r\nobj/\r\n" + GitignoreHeader + "\r\n.zerg/runs/\r\n.zerg/cache/\r\n.zerg/tasks/\r\n.zerg/audit.jsonl*\r\n"
	if string(got) != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	if o.Kind != Updated || o.Path != ".gitignore" {
		t.Fatalf("outcome: %+v", o)
	}
	// A second run finds everything and writes nothing.
	if o, err = UpdateGitignore(root); err != nil {
		t.Fatal(err)
	}
	again, _ := os.ReadFile(path)
	if string(again) != want || o.Kind != Existing || o.Path != ".gitignore" {
		t.Fatalf("second run changed the file or the outcome: %q %+v", again, o)
	}
}

// With a devcontainer, init's config says container mode is an option,
// right above mode, and keeps sandbox; without one, it is the template.
func TestInitConfigNotesDevcontainer(t *testing.T) {
	for _, tt := range []struct {
		name, devcontainer, note string
	}{
		{"none", "", ""},
		{"in .devcontainer/", ".devcontainer/devcontainer.json", ".devcontainer/devcontainer.json"},
		{"at the root", ".devcontainer.json", ".devcontainer.json"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			if tt.devcontainer != "" {
				p := filepath.Join(root, filepath.FromSlash(tt.devcontainer))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(`{"image": "x"}`), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			o, err := WriteConfig(root)
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join(root, ".zerg", "config.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			want := string(config.Template())
			if tt.note != "" {
				want = string(config.TemplateWithDevcontainer(tt.note))
				if !strings.Contains(o.Detail, "a devcontainer was found at "+tt.note) {
					t.Fatalf("outcome: %+v", o)
				}
			}
			if string(got) != want {
				t.Fatalf("config:\n%s", got)
			}
			if !strings.Contains(string(got), "\nmode: sandbox\n") {
				t.Fatal("mode is not sandbox")
			}
		})
	}
}

// A file where init needs a directory or a regular file stops the checks.
func TestChecksRefuseWrongFileTypes(t *testing.T) {
	root := t.TempDir()
	if err := CheckSpecsDir(root); err != nil {
		t.Fatalf("absent specs dir: %v", err)
	}
	if o, err := MakeSpecsDir(root); err != nil || o.Kind != Created || o.Path != SpecsDir {
		t.Fatalf("make specs dir: %+v %v", o, err)
	}
	if o, err := MakeSpecsDir(root); err != nil || o.Kind != Existing {
		t.Fatalf("make specs dir again: %+v %v", o, err)
	}
	if err := os.WriteFile(filepath.Join(root, ".zerg", "cache"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := CheckRulesCache(root); err == nil || err.Error() != ".zerg/cache/ exists but is not a directory; move it away and run zerg init again" {
		t.Errorf("cache file: %v", err)
	}
	if err := os.Mkdir(filepath.Join(root, ".gitignore"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := CheckGitignore(root); err == nil {
		t.Error("a .gitignore directory passed the check")
	}
	if err := os.Mkdir(filepath.Join(root, ".zerg", "config.yaml"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := CheckConfig(root); err == nil || !strings.Contains(err.Error(), "is not a regular file") {
		t.Errorf("config directory: %v", err)
	}
}

// An existing config's problems come back as the *config.Error; an absent
// or valid one passes.
func TestCheckConfig(t *testing.T) {
	root := t.TempDir()
	if err := CheckConfig(root); err != nil {
		t.Fatalf("no config: %v", err)
	}
	if _, err := WriteConfig(root); err != nil {
		t.Fatal(err)
	}
	if err := CheckConfig(root); err != nil {
		t.Fatalf("the template: %v", err)
	}
	if o, err := WriteConfig(root); err != nil || o.Kind != Existing {
		t.Fatalf("second write: %+v %v", o, err)
	}
	if err := os.WriteFile(filepath.Join(root, ".zerg", "config.yaml"), []byte("workers: -1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var ce *config.Error
	if err := CheckConfig(root); !errors.As(err, &ce) {
		t.Fatalf("invalid config: %v, want a *config.Error", err)
	}
}
