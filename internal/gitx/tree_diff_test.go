package gitx

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestChangedEntries: every kind of entry git can record between two
// commits comes back with its new mode and object, whatever the path holds.
func TestChangedEntries(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	ctx := context.Background()
	write(t, filepath.Join(r.Dir, "gone.txt"), "bye\n")
	write(t, filepath.Join(r.Dir, "becomes-link"), "a file\n")
	mustRun(t, r.Runner, "add", "--all")
	base, err := r.Commit(ctx, "base", nil)
	if err != nil {
		t.Fatal(err)
	}

	odd := "dir/new\nline é\t\"q\".txt"
	write(t, filepath.Join(r.Dir, filepath.FromSlash(odd)), "odd\n")
	write(t, filepath.Join(r.Dir, "README.md"), "changed\n")
	write(t, filepath.Join(r.Dir, "run.sh"), "#!/bin/sh\n")
	if err := os.Chmod(filepath.Join(r.Dir, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../etc/passwd", filepath.Join(r.Dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(r.Dir, "becomes-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("README.md", filepath.Join(r.Dir, "becomes-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(r.Dir, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	mustRun(t, r.Runner, "add", "--all")
	sub := strings.Repeat("ab", 20)
	mustRun(t, r.Runner, "update-index", "--add", "--cacheinfo", "160000,"+sub+",vendor/sub")
	head, err := r.Commit(ctx, "head", nil)
	if err != nil {
		t.Fatal(err)
	}

	list, err := r.ChangedEntries(ctx, base, head)
	if err != nil {
		t.Fatal(err)
	}
	blob := func(p string) string {
		return strings.TrimSpace(mustRun(t, r.Runner, "rev-parse", head+":"+p))
	}
	old := func(p string) string {
		return strings.TrimSpace(mustRun(t, r.Runner, "rev-parse", base+":"+p))
	}
	zero := strings.Repeat("0", 40)
	want := map[string]TreeChange{
		"README.md":    {Status: "M", Mode: "100644", OID: blob("README.md"), OldMode: "100644", OldOID: old("README.md")},
		"run.sh":       {Status: "A", Mode: "100755", OID: blob("run.sh"), OldMode: "000000", OldOID: zero},
		"link":         {Status: "A", Mode: "120000", OID: blob("link"), OldMode: "000000", OldOID: zero},
		"becomes-link": {Status: "T", Mode: "120000", OID: blob("becomes-link"), OldMode: "100644", OldOID: old("becomes-link")},
		"gone.txt":     {Status: "D", Mode: "000000", OID: zero, OldMode: "100644", OldOID: old("gone.txt")},
		"vendor/sub":   {Status: "A", Mode: "160000", OID: sub, OldMode: "000000", OldOID: zero},
		odd:            {Status: "A", Mode: "100644", OID: blob(odd), OldMode: "000000", OldOID: zero},
	}
	if len(list) != len(want) {
		t.Fatalf("got %d entries, want %d: %+v", len(list), len(want), list)
	}
	for _, c := range list {
		w, ok := want[c.Path]
		if !ok {
			t.Errorf("unexpected entry %+v", c)
			continue
		}
		w.Path = c.Path
		if c != w {
			t.Errorf("%q: got %+v, want %+v", c.Path, c, w)
		}
	}

	// The same commit twice: nothing changed.
	if list, err := r.ChangedEntries(ctx, head, head); err != nil || len(list) != 0 {
		t.Fatalf("head..head: %v %+v", err, list)
	}
	for _, bad := range [][2]string{{"", head}, {base, "-p"}, {"--output=x", head}, {base, "no-such-rev"}} {
		if _, err := r.ChangedEntries(ctx, bad[0], bad[1]); err == nil {
			t.Errorf("ChangedEntries(%q, %q) succeeded", bad[0], bad[1])
		}
	}
}

// TestReplaceRefsIgnored: a replacement ref (which anyone able to write a
// ref can add) does not change what the tree comparison, the object sizes
// or a NoReplace runner's blob reads report.
func TestReplaceRefsIgnored(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	ctx := context.Background()
	base := strings.TrimSpace(mustRun(t, r.Runner, "rev-parse", "HEAD"))
	write(t, filepath.Join(r.Dir, "secret.txt"), "the real content\n")
	mustRun(t, r.Runner, "add", "--all")
	head, err := r.Commit(ctx, "head", nil)
	if err != nil {
		t.Fatal(err)
	}
	real := strings.TrimSpace(mustRun(t, r.Runner, "rev-parse", head+":secret.txt"))
	cleanOID := strings.TrimSpace(hashObject(t, r.Runner, "clean\n"))
	mustRun(t, r.Runner, "replace", real, cleanOID)
	if got := mustRun(t, r.Runner, "cat-file", "blob", real); got != "clean\n" {
		t.Fatalf("the replacement is not in effect for plain git: %q", got)
	}

	list, err := r.ChangedEntries(ctx, base, head)
	if err != nil || len(list) != 1 || list[0].OID != real {
		t.Fatalf("changed entries %v %+v", err, list)
	}
	infos, err := r.ObjectInfos(ctx, []string{real})
	if err != nil || len(infos) != 1 || infos[0] != (ObjectInfo{Type: "blob", Size: int64(len("the real content\n"))}) {
		t.Fatalf("object info %v %+v", err, infos)
	}
	blobs, err := r.NoReplace().ReadBlobs(ctx, []string{real})
	if err != nil || len(blobs) != 1 || string(blobs[0]) != "the real content\n" {
		t.Fatalf("blobs %v %q", err, blobs)
	}
	// A replaced commit does not hide its tree either.
	mustRun(t, r.Runner, "replace", head, base)
	if got := mustRun(t, r.Runner, "diff-tree", "-r", "--name-only", base, head); got != "" {
		t.Fatalf("the commit replacement is not in effect for plain git: %q", got)
	}
	if list, err := r.ChangedEntries(ctx, base, head); err != nil || len(list) != 1 || list[0].OID != real {
		t.Fatalf("changed entries with a replaced commit: %v %+v", err, list)
	}
	if len(r.ExtraEnv) != 0 {
		t.Fatalf("NoReplace changed the original runner: %v", r.ExtraEnv)
	}
}

func hashObject(t *testing.T, r *Runner, content string) string {
	t.Helper()
	out, err := r.RunInput(context.Background(), []byte(content), "hash-object", "-w", "--stdin")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestObjectInfos(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	ctx := context.Background()
	head := strings.TrimSpace(mustRun(t, r.Runner, "rev-parse", "HEAD"))
	readme := strings.TrimSpace(mustRun(t, r.Runner, "rev-parse", "HEAD:README.md"))
	tree := strings.TrimSpace(mustRun(t, r.Runner, "rev-parse", "HEAD^{tree}"))
	infos, err := r.ObjectInfos(ctx, []string{readme, head, tree})
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 3 || infos[0] != (ObjectInfo{"blob", 6}) || infos[1].Type != "commit" || infos[2].Type != "tree" {
		t.Fatalf("infos %+v", infos)
	}
	for _, bad := range []string{strings.Repeat("0", 40), "HEAD", readme[:10], readme + "\n" + readme} {
		if _, err := r.ObjectInfos(ctx, []string{readme, bad}); err == nil {
			t.Errorf("ObjectInfos(%q) succeeded", bad)
		}
	}
}
