package gitx

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// hostileDiffConfig sets the repository config a user might have (or a
// hostile one) that changes git diff's output or runs programs: the typed
// diffs must come out plain anyway. It returns the marker a configured
// program would create.
func hostileDiffConfig(t *testing.T, r *Runner) string {
	t.Helper()
	marker := filepath.Join(t.TempDir(), "program-ran")
	prog := filepath.Join(t.TempDir(), "prog.sh")
	write(t, prog, "#!/bin/sh\necho ran >> "+marker+"\ncat \"$1\" 2>/dev/null\n")
	if err := os.Chmod(prog, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, kv := range [][2]string{
		{"diff.noprefix", "true"},
		{"diff.mnemonicPrefix", "true"},
		{"color.diff", "always"},
		{"color.ui", "always"},
		{"core.quotePath", "false"},
		{"diff.external", prog},
		{"diff.conv.textconv", prog},
	} {
		mustRun(t, r, "config", kv[0], kv[1])
	}
	write(t, filepath.Join(r.Dir, ".git", "info", "attributes"), "* diff=conv\n")
	return marker
}

// TestStagedPatchApplies: the patch of the index replays onto the base with
// git apply, binary files included, whatever the diff config says.
func TestStagedPatchApplies(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	ctx := context.Background()
	base, _ := r.RevParse(ctx, "HEAD")
	marker := hostileDiffConfig(t, r.Runner)
	write(t, filepath.Join(r.Dir, "README.md"), "hello\nworld\n")
	write(t, filepath.Join(r.Dir, "bin.dat"), "\x00\x01\x02binary\x00")
	mustRun(t, r.Runner, "add", "--all")
	patch, err := r.StagedPatch(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(patch, "GIT binary patch") || !strings.Contains(patch, "+++ b/README.md") {
		t.Fatalf("patch:\n%s", patch)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a configured diff program ran")
	}
	ws := filepath.Join(t.TempDir(), "ws")
	if err := r.AddDetachedWorktree(ctx, ws, base); err != nil {
		t.Fatal(err)
	}
	if _, err := r.In(ws).RunInput(ctx, []byte(patch), "apply", "--index", "-"); err != nil {
		t.Fatalf("the patch does not apply: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "bin.dat")); string(b) != "\x00\x01\x02binary\x00" {
		t.Fatalf("binary file after apply: %q", b)
	}
	if _, err := r.StagedPatch(ctx, "--output=/tmp/x"); err == nil {
		t.Fatal("an option was accepted as the base")
	}
}

// TestWorkingDiff: tracked changes of the working tree against base, no
// context lines, a renamed file whole, plain format.
func TestWorkingDiff(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	ctx := context.Background()
	write(t, filepath.Join(r.Dir, "old.txt"), "moved line\n")
	write(t, filepath.Join(r.Dir, "ctx.txt"), "one\ntwo\nthree\n")
	mustRun(t, r.Runner, "add", "--all")
	base, err := r.Commit(ctx, "files", nil)
	if err != nil {
		t.Fatal(err)
	}
	marker := hostileDiffConfig(t, r.Runner)
	mustRun(t, r.Runner, "mv", "old.txt", "new.txt")
	write(t, filepath.Join(r.Dir, "ctx.txt"), "one\nTWO\nthree\n")
	write(t, filepath.Join(r.Dir, "untracked.txt"), "not in the diff\n")
	diff, err := r.WorkingDiff(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"+++ b/new.txt\n", "+moved line\n", "+++ b/ctx.txt\n", "+TWO\n", "-two\n"} {
		if !strings.Contains(diff, want) {
			t.Errorf("diff lacks %q:\n%s", want, diff)
		}
	}
	for _, bad := range []string{"\n one\n", "untracked", "rename from", "\x1b["} {
		if strings.Contains(diff, bad) {
			t.Errorf("diff has %q:\n%s", bad, diff)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a configured diff program ran")
	}
}

// TestStagedDiff: what the next commit adds; deleted files left out, a pure
// move adds nothing.
func TestStagedDiff(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	ctx := context.Background()
	write(t, filepath.Join(r.Dir, "gone.txt"), "deleted content\n")
	write(t, filepath.Join(r.Dir, "moved.txt"), "moved content\n")
	mustRun(t, r.Runner, "add", "--all")
	if _, err := r.Commit(ctx, "files", nil); err != nil {
		t.Fatal(err)
	}
	marker := hostileDiffConfig(t, r.Runner)
	mustRun(t, r.Runner, "rm", "--quiet", "gone.txt")
	mustRun(t, r.Runner, "mv", "moved.txt", "moved2.txt")
	write(t, filepath.Join(r.Dir, "README.md"), "hello\nstaged ünïcode\n")
	write(t, filepath.Join(r.Dir, "é.txt"), "x\n")
	mustRun(t, r.Runner, "add", "README.md", "é.txt")
	write(t, filepath.Join(r.Dir, "README.md"), "hello\nstaged ünïcode\nnot staged\n")
	diff, err := r.StagedDiff(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"+++ b/README.md\n", "+staged ünïcode\n", `+++ "b/\303\251.txt"`} {
		if !strings.Contains(diff, want) {
			t.Errorf("diff lacks %q:\n%s", want, diff)
		}
	}
	for _, bad := range []string{"deleted content", "+moved content", "not staged", "\n hello\n", "\x1b["} {
		if strings.Contains(diff, bad) {
			t.Errorf("diff has %q:\n%s", bad, diff)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a configured diff program ran")
	}
}

func TestUntrackedFiles(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	ctx := context.Background()
	write(t, filepath.Join(r.Dir, ".gitignore"), "*.log\n")
	mustRun(t, r.Runner, "add", ".gitignore")
	if _, err := r.Commit(ctx, "ignore", nil); err != nil {
		t.Fatal(err)
	}
	if got, err := r.UntrackedFiles(ctx); err != nil || len(got) != 0 {
		t.Fatalf("clean repo: %q %v", got, err)
	}
	write(t, filepath.Join(r.Dir, "debug.log"), "ignored\n")
	write(t, filepath.Join(r.Dir, "dir", "new file.txt"), "x\n")
	write(t, filepath.Join(r.Dir, "line\nbreak"), "x\n")
	write(t, filepath.Join(r.Dir, "README.md"), "tracked, changed\n")
	got, err := r.UntrackedFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if want := []string{"dir/new file.txt", "line\nbreak"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("untracked %q, want %q", got, want)
	}
}

func TestFileAt(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	ctx := context.Background()
	base, _ := r.RevParse(ctx, "HEAD")
	write(t, filepath.Join(r.Dir, "sub", "f.bin"), "a\x00b")
	mustRun(t, r.Runner, "add", "--all")
	head, err := r.Commit(ctx, "f", nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := r.FileAt(ctx, head, "sub/f.bin"); err != nil || string(b) != "a\x00b" {
		t.Fatalf("at head: %q %v", b, err)
	}
	if b, err := r.FileAt(ctx, base, "README.md"); err != nil || string(b) != "hello\n" {
		t.Fatalf("README at base: %q %v", b, err)
	}
	// Absent at the revision: "no such file", and only that.
	if _, err := r.FileAt(ctx, base, "sub/f.bin"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("absent file: %v, want ErrNotExist", err)
	}
	// An unknown revision is an error, never "no such file".
	for _, rev := range []string{strings.Repeat("1", 40), "no-such-branch"} {
		if _, err := r.FileAt(ctx, rev, "README.md"); err == nil || errors.Is(err, os.ErrNotExist) {
			t.Errorf("unknown revision %s: %v", rev, err)
		}
	}
	if _, err := r.FileAt(ctx, "--output=x", "README.md"); err == nil {
		t.Error("an option was accepted as the revision")
	}
	// A directory is not a file.
	if _, err := r.FileAt(ctx, head, "sub"); err == nil {
		t.Error("a directory read as a file")
	}
}
