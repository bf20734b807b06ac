package driver

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/config"
)

// Every mode the config accepts has a factory, and every factory is a mode
// the config accepts: adding one without the other fails here.
func TestRegistryCoversConfigModes(t *testing.T) {
	var got []string
	for _, f := range Factories() {
		got = append(got, f.Mode)
		if f.New == nil {
			t.Errorf("mode %s has no New", f.Mode)
		}
	}
	if !slices.Equal(got, config.Modes) {
		t.Fatalf("factories %v, config.Modes %v: register the mode in factories (factory.go) and config.Modes alike", got, config.Modes)
	}
	if _, ok := Lookup("no-such-mode"); ok {
		t.Fatal("Lookup found a mode nobody registered")
	}
}

// modeRefAllowed are the files outside internal/driver and internal/config
// that may still name a mode constant, and why.
var modeRefAllowed = map[string]string{
	"internal/cli/agent.go": "the --mode flag's default",
}

var modeConst = regexp.MustCompile(`^Mode[A-Z]`)

// The architecture's promise (docs/drivers.md): the mode is chosen in one
// place, internal/driver's registry. Outside internal/driver and
// internal/config, no code names a mode constant (config.ModeSandbox, …)
// but the few allowed sites, and internal/run imports no isolation or
// cluster package: it reads a factory's Capabilities instead.
func TestModeKnowledgeStaysInTheDrivers(t *testing.T) {
	root := filepath.Join("..", "..")
	forbidden := []string{"internal/cgroup", "internal/cluster", "internal/container", "internal/sandbox", "github.com/nats-io/"}
	fset := token.NewFileSet()
	refs := map[string]int{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && rel != "internal" && rel != "cmd" && !strings.HasPrefix(rel, "internal/") && !strings.HasPrefix(rel, "cmd/") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") ||
			strings.HasPrefix(rel, "internal/driver/") || strings.HasPrefix(rel, "internal/config/") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if filepath.Dir(rel) == "internal/run" {
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				for _, bad := range forbidden {
					if strings.Contains(p, bad) {
						t.Errorf("%s imports %s: the run builds its driver through internal/driver's factories", rel, p)
					}
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "config" && modeConst.MatchString(sel.Sel.Name) {
				refs[rel]++
				if _, ok := modeRefAllowed[rel]; !ok {
					t.Errorf("%s: config.%s: choose by the mode's factory (driver.Lookup) or its Capabilities, not by its name", fset.Position(sel.Pos()), sel.Sel.Name)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, n := range refs {
		total += n
	}
	if total > 3 {
		t.Errorf("%d references to a mode constant outside internal/driver and internal/config (%v), at most 3", total, refs)
	}
}

// An abandoned attempt's workspace is committed by zerg's git only when it
// is a worktree of the user's repository: by the kind the log recorded, or,
// for a log from before it did, by what is there (a private clone has a
// .git directory of its own, a worktree a .git file).
func TestZergCommitsOnlyInAWorktree(t *testing.T) {
	clone, worktree := t.TempDir(), t.TempDir()
	if err := os.Mkdir(filepath.Join(clone, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(worktree, ".git"), []byte("gitdir: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		kind WorkspaceKind
		dir  string
		want bool
	}{
		{WorktreeWorkspace, worktree, true},
		{CloneWorkspace, worktree, false}, // the record wins over what is there
		{ResultWorkspace, worktree, false},
		{"", clone, false},
		{"", worktree, true},
	} {
		if got := tc.kind.ZergCommitsIn(tc.dir); got != tc.want {
			t.Errorf("kind %q in %s: %v, want %v", tc.kind, tc.dir, got, tc.want)
		}
	}
	for _, f := range Factories() {
		if f.Capabilities.Workspace == "" {
			t.Errorf("mode %s names no workspace kind", f.Mode)
		}
	}
}
