package run

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/zergrush/zerg/internal/fsx"
	"github.com/zergrush/zerg/internal/pathx"
	"github.com/zergrush/zerg/internal/spec"
)

// FindZergRoot returns the nearest directory at or above dir holding .zerg/,
// "" when there is none: where the commands that take a feature look for
// its specs and runs without asking git.
func FindZergRoot(dir string) string {
	for {
		if fi, err := os.Stat(filepath.Join(dir, ".zerg")); err == nil && fi.IsDir() {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// RepoRootOf returns the repository (a directory with .git) holding file, or
// "" when it is not inside one; used for the symlink escape check and to
// find the config a graph is run with.
func RepoRootOf(file string) string {
	abs, err := filepath.Abs(file)
	if err != nil {
		return ""
	}
	for dir := filepath.Dir(abs); ; {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// Features lists the features of the repository at root that have a task
// graph (.zerg/specs/<feature>/task-graph.json), in directory order.
func Features(root string) []string {
	entries, err := os.ReadDir(SpecsDir(root))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && fsx.IsFile(GraphFile(root, e.Name())) {
			out = append(out, e.Name())
		}
	}
	return out
}

// ResolveGraph turns the graph commands' [FILE|FEATURE] argument (arg, ""
// for none) into a task-graph path, relative to cwd when it is below it.
// With no argument the only feature of the nearest .zerg is taken. An
// argument that exists, has a path separator or ends in .json is a file;
// anything else is a feature. What names no graph is bad input, saying
// which features there are.
func ResolveGraph(cwd, arg string) (string, error) {
	root := FindZergRoot(cwd)
	bad := func(format string, a ...any) error {
		return &Error{Kind: BadInput, Err: fmt.Errorf(format, a...)}
	}
	if arg == "" {
		if root == "" {
			return "", bad("no task graph given and no .zerg directory here or above; pass a task-graph.json path or run 'zerg init'")
		}
		features := Features(root)
		switch len(features) {
		case 1:
			return pathx.Short(cwd, GraphFile(root, features[0])), nil
		case 0:
			return "", bad("no feature in %s; pass a task-graph.json path", pathx.Short(cwd, SpecsDir(root)))
		default:
			return "", bad("several features (%s); name one: zerg graph validate FEATURE", strings.Join(features, ", "))
		}
	}
	if _, err := os.Lstat(arg); err == nil || strings.ContainsAny(arg, `/\`) || strings.HasSuffix(arg, ".json") {
		return arg, nil
	}
	// Not a file: a feature, which must be a plain name (".x" or "-x" would
	// name no feature's directory).
	if why := spec.FeatureNameProblem(arg); why != "" {
		return "", bad("%s: no such file, and %q is not a feature name: it %s; pass a task-graph.json path or a feature in .zerg/specs", arg, arg, why)
	}
	if root != "" {
		if f := GraphFile(root, arg); fsx.IsFile(f) {
			return pathx.Short(cwd, f), nil
		}
		if features := Features(root); len(features) > 0 {
			return "", bad("%s: no such file or feature; features: %s", arg, strings.Join(features, ", "))
		}
	}
	return "", bad("%s: no such file or feature; pass a task-graph.json path or a feature in .zerg/specs", arg)
}
