package gitx

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTreeEntriesAndReadBlobs(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	ctx := context.Background()
	write(t, filepath.Join(r.Dir, "rules", "a.md"), "# a\n")
	write(t, filepath.Join(r.Dir, "rules", "sub", "b.md"), "b\x00no newline")
	write(t, filepath.Join(r.Dir, "rules", "tab\tname.md"), "")
	write(t, filepath.Join(r.Dir, "other.txt"), "x\n")
	if err := os.Symlink("/etc/passwd", filepath.Join(r.Dir, "rules", "link")); err != nil {
		t.Fatal(err)
	}
	mustRun(t, r.Runner, "add", "--all")
	head, err := r.Commit(ctx, "rules", nil)
	if err != nil {
		t.Fatal(err)
	}
	// From a subdirectory the paths are still from the top (--full-tree).
	list, err := r.In(filepath.Join(r.Dir, "rules", "sub")).TreeEntries(ctx, head, "rules")
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]TreeEntry{}
	for _, e := range list {
		byPath[e.Path] = e
	}
	if len(list) != 4 || byPath["other.txt"].OID != "" {
		t.Fatalf("entries %+v", list)
	}
	if e := byPath["rules/sub/b.md"]; e.Mode != "100644" || e.Type != "blob" || e.Size != 12 || len(e.OID) != 40 {
		t.Fatalf("b.md %+v", e)
	}
	if e := byPath["rules/link"]; e.Mode != "120000" || e.Size != int64(len("/etc/passwd")) {
		t.Fatalf("link %+v", e)
	}
	if e, ok := byPath["rules/tab\tname.md"]; !ok || e.Size != 0 {
		t.Fatalf("tab name %+v", list)
	}
	if all, _ := r.TreeEntries(ctx, head); len(all) != 6 {
		t.Fatalf("whole tree: %+v", all)
	}

	oids := []string{byPath["rules/sub/b.md"].OID, byPath["rules/tab\tname.md"].OID, byPath["rules/a.md"].OID}
	blobs, err := r.ReadBlobs(ctx, oids)
	if err != nil {
		t.Fatal(err)
	}
	if len(blobs) != 3 || string(blobs[0]) != "b\x00no newline" || len(blobs[1]) != 0 || string(blobs[2]) != "# a\n" {
		t.Fatalf("blobs %q", blobs)
	}
	tree := strings.TrimSpace(mustRun(t, r.Runner, "rev-parse", head+"^{tree}"))
	for name, bad := range map[string][]string{
		"a tree":         {tree},
		"a missing blob": {strings.Repeat("1", 40)},
	} {
		if _, err := r.ReadBlobs(ctx, bad); err == nil {
			t.Errorf("%s read as a blob", name)
		}
	}
	// Names other than full ids never reach git's stdin, where a newline
	// would add a request.
	for _, bad := range []string{"HEAD", oids[0] + "\n" + tree, strings.ToUpper(oids[0])} {
		if _, err := r.ReadBlobs(ctx, []string{bad}); err == nil || !strings.Contains(err.Error(), "invalid object id") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if _, err := r.TreeEntries(ctx, "--output=x"); err == nil {
		t.Error("an option was accepted as the revision")
	}
}

func TestInitBareFetchCommit(t *testing.T) {
	src := newRepo(t)
	ctx := context.Background()
	first, _ := src.RevParse(ctx, "HEAD")
	head, err := src.Commit(ctx, "second", nil)
	if err != nil {
		t.Fatal(err)
	}
	// A commit on another branch: not fetched.
	ws := filepath.Join(t.TempDir(), "ws")
	if err := src.AddWorktree(ctx, ws, "other", head); err != nil {
		t.Fatal(err)
	}
	other, err := src.In(ws).Commit(ctx, "other", nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := InitBare(ctx, filepath.Join(t.TempDir(), "deep", "git"), "")
	if err != nil {
		t.Fatal(err)
	}
	if bare := strings.TrimSpace(mustRun(t, g, "rev-parse", "--is-bare-repository")); bare != "true" {
		t.Fatalf("bare: %q", bare)
	}
	if _, err := g.RevParse(ctx, head); err == nil {
		t.Fatal("control: the commit is there before the fetch")
	}
	if err := g.FetchCommit(ctx, src.Dir, head); err != nil {
		t.Fatal(err)
	}
	if got, err := g.RevParse(ctx, head); err != nil || got != head {
		t.Fatalf("after fetch: %q %v", got, err)
	}
	// Only that commit: not its history (depth 1), not other branches.
	for _, c := range []string{first, other} {
		if _, err := g.RevParse(ctx, c); err == nil {
			t.Fatalf("commit %s came along", c)
		}
	}
	for _, bad := range [][2]string{{"--upload-pack=touch /tmp/x", head}, {src.Dir, "HEAD"}, {src.Dir, "--all"}} {
		if err := g.FetchCommit(ctx, bad[0], bad[1]); err == nil {
			t.Errorf("fetch %q %q accepted", bad[0], bad[1])
		}
	}

	// The ext transport runs a command; it stays off even when the user's
	// config allows it.
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	write(t, filepath.Join(home, ".gitconfig"), "[protocol \"ext\"]\n\tallow = always\n")
	marker := filepath.Join(t.TempDir(), "ext-ran")
	if err := g.FetchCommit(ctx, "ext::sh -c touch% "+marker, head); err == nil {
		t.Error("fetch through the ext transport succeeded")
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the ext transport ran a command")
	}

	g256, err := InitBare(ctx, filepath.Join(t.TempDir(), "g256"), "sha256")
	if err != nil {
		t.Fatal(err)
	}
	if f := strings.TrimSpace(mustRun(t, g256, "rev-parse", "--show-object-format")); f != "sha256" {
		t.Fatalf("object format %q", f)
	}
	if _, err := InitBare(ctx, filepath.Join(t.TempDir(), "x"), "md5"); err == nil {
		t.Fatal("an unknown object format was accepted")
	}
}

// OpenBare makes the bare repository once and opens it after.
func TestOpenBare(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "repo")
	r, err := OpenBare(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "HEAD")); err != nil || r.Runner.Dir != dir {
		t.Fatalf("made %+v: %v", r.Runner, err)
	}
	marker := filepath.Join(dir, "kept")
	write(t, marker, "x")
	if _, err := OpenBare(ctx, dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("opened again, not kept: %v", err)
	}
}
