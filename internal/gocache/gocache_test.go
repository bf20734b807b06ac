package gocache

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// As a GOCACHEPROG, the test binary serves the layers named in its
// environment and records its stats beside them.
func TestMain(m *testing.M) {
	if w := os.Getenv("GOCACHE_TEST_WRITE"); w != "" {
		l := Layers{Write: w}
		if r := os.Getenv("GOCACHE_TEST_READ"); r != "" {
			l.Read = []string{r}
		}
		st, err := Serve(l, os.Stdin, os.Stdout)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		f, err := os.OpenFile(os.Getenv("GOCACHE_TEST_STATS"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			json.NewEncoder(f).Encode(st)
			f.Close()
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func id(b byte) []byte { return bytes.Repeat([]byte{b}, idSize) }

func TestPutThenGetAcrossLayers(t *testing.T) {
	user, mine := t.TempDir(), t.TempDir()
	// The user's cache holds an entry, written the way the go command does.
	userLayer := Layers{Write: user}
	if _, err := userLayer.put(id(1), id(2), []byte("object"), 6); err != nil {
		t.Fatal(err)
	}
	l := Layers{Write: mine, Read: []string{user}}
	e, layer, ok := l.get(id(1))
	if !ok || layer != 1 || !bytes.Equal(e.out, id(2)) || e.size != 6 || !strings.HasPrefix(e.path, user) {
		t.Fatalf("get from the read layer = %+v, layer %d, %v", e, layer, ok)
	}
	if _, err := l.put(id(3), id(4), []byte("new"), 3); err != nil {
		t.Fatal(err)
	}
	if e, layer, ok := l.get(id(3)); !ok || layer != 0 || !strings.HasPrefix(e.path, mine) {
		t.Fatalf("a put is found in the writable layer: %+v %d %v", e, layer, ok)
	}
	if _, _, ok := (Layers{Write: user}).get(id(3)); ok {
		t.Fatal("a put reached the read layer")
	}
	// An entry whose output is missing or of another size is a miss.
	if err := os.WriteFile(fileName(user, id(2), "d"), []byte("short"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := l.get(id(1)); ok {
		t.Fatal("an output of the wrong size was served")
	}
	if _, _, ok := l.get([]byte("short")); ok {
		t.Fatal("an id of the wrong length was served")
	}
}

// The real go command, with the user's warm cache as the read layer and an
// empty writable one: a build is served from the user's cache and writes
// nothing there. The control is a build without the read layer, which
// finds nothing.
func TestGoCommandUsesTheUsersCache(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	mod := t.TempDir()
	write := func(p, s string) {
		if err := os.WriteFile(filepath.Join(mod, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/m\n\ngo 1.22\n")
	// A package without imports: no standard library to compile, so the
	// test stays fast; its own compile is what is cached.
	write("m.go", "package m\n\nfunc F() int { return 1 }\n")
	user := t.TempDir()
	stats := filepath.Join(t.TempDir(), "stats")
	build := func(writeDir, readDir string) Stats {
		t.Helper()
		os.Remove(stats)
		cmd := exec.Command(gobin, "build", "-o", os.DevNull, ".")
		cmd.Dir = mod
		cmd.Env = append(os.Environ(), "GOCACHE="+writeDir, "GOCACHEPROG="+exe, "GOFLAGS=",
			"GOCACHE_TEST_WRITE="+writeDir, "GOCACHE_TEST_READ="+readDir, "GOCACHE_TEST_STATS="+stats)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
		data, err := os.ReadFile(stats)
		if err != nil {
			t.Fatal(err)
		}
		var st Stats
		if err := json.Unmarshal(bytes.Split(data, []byte("\n"))[0], &st); err != nil {
			t.Fatal(err)
		}
		return st
	}
	// Warm the "user's" cache: everything is a put.
	warm := build(user, "")
	if warm.Puts == 0 {
		t.Fatalf("the warming build stored nothing: %+v", warm)
	}
	before := listing(t, user)
	got := build(t.TempDir(), user)
	if got.ReadHits == 0 || got.Puts >= warm.Puts {
		t.Fatalf("a build over the warm user cache: %+v (warming: %+v); want hits from the user's cache and few puts", got, warm)
	}
	if after := listing(t, user); !slices.Equal(before, after) {
		t.Fatalf("the user's cache changed: %d files before, %d after", len(before), len(after))
	}
	if cold := build(t.TempDir(), ""); cold.ReadHits != 0 || cold.Puts < warm.Puts {
		t.Fatalf("control: a build without the read layer = %+v, want no read hits and a full build", cold)
	}
}

func listing(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		files = append(files, fmt.Sprintf("%s %d %v", p, info.Size(), info.ModTime().UnixNano()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
