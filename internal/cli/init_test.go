package cli

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
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
			if got := missingIgnoreEntries([]byte(tt.content), want); !reflect.DeepEqual(got, tt.missing) {
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
	r := &initReport{}
	if err := updateGitignore(&initEnv{root: root}, r); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	want := "bin/\r\nobj/\r\n" + gitignoreHeader + "\r\n.zerg/runs/\r\n.zerg/cache/\r\n.zerg/audit.jsonl*\r\n"
	if string(got) != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	if !reflect.DeepEqual(r.Updated, []string{".gitignore"}) {
		t.Fatalf("report: %+v", r)
	}
	// A second run finds everything and writes nothing.
	r = &initReport{}
	if err := updateGitignore(&initEnv{root: root}, r); err != nil {
		t.Fatal(err)
	}
	again, _ := os.ReadFile(path)
	if string(again) != want || !reflect.DeepEqual(r.Existing, []string{".gitignore"}) {
		t.Fatalf("second run changed the file or the report: %q %+v", again, r)
	}
}
