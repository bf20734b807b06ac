package diagnose

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// ProjectNames are the names a project's own modules go by, read from its
// directory: the Go module path (go.mod), the npm package's name
// (package.json), the crate's (Cargo.toml), the Python project's
// (pyproject.toml) and its top-level packages (directories with an
// __init__.py). Diagnose uses them (Input.Own) to tell an import of the
// project's own code that is wrong from a dependency that is missing.
// Nothing readable gives no names.
func ProjectNames(dir string) []string {
	var names []string
	add := func(n string) {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	if m := firstMatch(filepath.Join(dir, "go.mod"), goModule); m != "" {
		add(m)
	}
	if b, err := readSmall(filepath.Join(dir, "package.json")); err == nil {
		var pkg struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(b, &pkg) == nil {
			add(pkg.Name)
		}
	}
	if m := firstMatch(filepath.Join(dir, "Cargo.toml"), tomlName); m != "" {
		add(m)
		add(strings.ReplaceAll(m, "-", "_")) // the crate as code names it
	}
	if m := firstMatch(filepath.Join(dir, "pyproject.toml"), tomlName); m != "" {
		add(m)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, e.Name(), "__init__.py")); err == nil {
			add(e.Name())
		}
	}
	return names
}

var (
	goModule = regexp.MustCompile(`^module\s+"?([^\s"]+)"?`)
	tomlName = regexp.MustCompile(`^name\s*=\s*"([^"]+)"`)
)

// firstMatch is the first submatch of re on a line of a file, "" when none.
func firstMatch(path string, re *regexp.Regexp) string {
	f, err := openRegular(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 0; sc.Scan() && n < 200; n++ {
		if m := re.FindStringSubmatch(strings.TrimSpace(sc.Text())); m != nil {
			return m[1]
		}
	}
	return ""
}

// readSmall reads a manifest of at most 1 MiB.
func readSmall(path string) ([]byte, error) {
	f, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, 1<<20))
}

// openRegular opens a regular file only: a FIFO or a device named go.mod
// would block the read or never end it.
func openRegular(path string) (*os.File, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	return os.Open(path)
}
