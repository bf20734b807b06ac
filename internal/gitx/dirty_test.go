package gitx

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestDirtyFiles lists every file that differs from HEAD, each one (not an
// untracked directory), odd names as they are, ignored files left out.
func TestDirtyFiles(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	dir := r.Dir
	ctx := context.Background()
	write(t, filepath.Join(dir, "gone.txt"), "x\n")
	write(t, filepath.Join(dir, "staged.txt"), "x\n")
	write(t, filepath.Join(dir, ".gitignore"), "*.log\n")
	mustRun(t, r.Runner, "add", "--all")
	if _, err := r.Commit(ctx, "more", nil); err != nil {
		t.Fatal(err)
	}
	if files, err := r.DirtyFiles(ctx); err != nil || len(files) != 0 {
		t.Fatalf("clean tree: %q %v", files, err)
	}
	write(t, filepath.Join(dir, "README.md"), "changed\n")
	write(t, filepath.Join(dir, "staged.txt"), "changed\n")
	mustRun(t, r.Runner, "add", "staged.txt")
	if err := os.Remove(filepath.Join(dir, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "lib", "new dir", "a b.sh"), "x\n")
	write(t, filepath.Join(dir, "debug.log"), "ignored\n")
	files, err := r.DirtyFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	if want := []string{"README.md", "gone.txt", "lib/new dir/a b.sh", "staged.txt"}; !slices.Equal(files, want) {
		t.Errorf("dirty files %q, want %q", files, want)
	}
}
