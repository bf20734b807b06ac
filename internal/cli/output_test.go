package cli

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommandsPrintThroughTheCleaning: no command writes to the process's
// stdout or stderr but through the app's writers (term.Writer), so a new
// command cannot forget to clean what a worker, a repository, a reviewer
// or a gate wrote. The exceptions are Main, which hands the streams to
// the app, and the Go cache protocol, whose bytes are not text.
func TestCommandsPrintThroughTheCleaning(t *testing.T) {
	allowed := map[string]bool{"root.go": true, "gocache.go": true}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if id, ok := n.X.(*ast.Ident); ok && !allowed[file] {
					if id.Name == "os" && (n.Sel.Name == "Stdout" || n.Sel.Name == "Stderr") ||
						id.Name == "fmt" && strings.HasPrefix(n.Sel.Name, "Print") {
						t.Errorf("%s: %s.%s: print through a.stdout or a.stderr (term.Writer cleans them)", fset.Position(n.Pos()), id.Name, n.Sel.Name)
					}
				}
			case *ast.CallExpr:
				if id, ok := n.Fun.(*ast.Ident); ok && (id.Name == "print" || id.Name == "println") {
					t.Errorf("%s: %s: print through a.stdout or a.stderr", fset.Position(n.Pos()), id.Name)
				}
			}
			return true
		})
	}
}

// TestRunCleansWhatItPrints: a hostile string in an error message reaches
// stderr cleaned: the app's writers apply to zerg's own "zerg: …" line too.
func TestRunCleansWhatItPrints(t *testing.T) {
	name := filepath.Join(t.TempDir(), hostile+".json")
	var out, errOut bytes.Buffer
	if code := Run(t.Context(), []string{"graph", "validate", name}, &out, &errOut); code != ExitUsage {
		t.Fatalf("exit %d", code)
	}
	// textx.OneLine makes the carriage return a space before the writer
	// cleans the rest.
	if !strings.Contains(errOut.String(), "oops zerg: demo: DELIVERED txt.exe done.json: no such file") {
		t.Fatalf("the error does not name the file: %q", errOut.String())
	}
	if strings.ContainsAny(errOut.String(), "\x1b\r\a") {
		t.Errorf("raw control characters printed: %q", errOut.String())
	}
}
