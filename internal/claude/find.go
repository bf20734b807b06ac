package claude

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"

	"github.com/zergrush/zerg/internal/fsx"
)

// Source says where the claude binary was found.
type Source string

// Sources, in the order Find tries them.
const (
	SourceConfig Source = "config"      // the path given by configuration
	SourceEnv    Source = "ZERG_CLAUDE" // the ZERG_CLAUDE environment variable
	SourceRepo   Source = "repo"        // the pinned install under <repo>/tools/claude
	SourcePath   Source = "PATH"        // the first claude on PATH
)

// EnvClaude names the environment variable that overrides the binary.
const EnvClaude = "ZERG_CLAUDE"

// Pinned-install layout relative to the repository root (see the Makefile's
// `make claude`).
const (
	pinnedDir     = "tools/claude"
	pinnedWrapper = "tools/claude/node_modules/.bin/claude"
	pinnedPackage = "@anthropic-ai/claude-code"
)

// nativePackages are the CLI's platform packages npm may install for
// goos/goarch (the optional dependencies of the wrapper package, chosen by
// their os, cpu and libc), in the order they are tried; nil for a platform
// the CLI does not ship.
func nativePackages(goos, goarch string) []string {
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[goarch]
	switch {
	case arch == "":
		return nil
	case goos == "darwin":
		return []string{"claude-code-darwin-" + arch}
	case goos == "linux":
		return []string{"claude-code-linux-" + arch, "claude-code-linux-" + arch + "-musl"}
	}
	return nil
}

// nativeBinary is where a platform package's binary is, relative to the
// repository root.
func nativeBinary(pkg string) string {
	return pinnedDir + "/node_modules/@anthropic-ai/" + pkg + "/claude"
}

// ErrNotFound is returned when no claude binary is available.
var ErrNotFound = errors.New("claude binary not found: set ZERG_CLAUDE or claude.path to it, put claude on PATH, or run `make claude` in zerg's own checkout for the pinned one")

// Location is a found binary and where it came from.
type Location struct {
	Path   string
	Source Source
	// RepoRoot is the zerg repository root that holds tools/claude, when one
	// was found (even if the binary came from elsewhere): doctor compares
	// versions against its pin.
	RepoRoot string
}

// Locator finds the claude binary. Its fields are seams for tests; the zero
// value uses the real process environment.
type Locator struct {
	Getenv     func(string) string
	Executable func() (string, error)
	Getwd      func() (string, error)
	LookPath   func(string) (string, error)
}

// Find returns the path of the claude binary: configPath (a path, or a bare
// name looked up in PATH), then $ZERG_CLAUDE, then the repository's pinned
// install, then PATH.
func Find(configPath string) (string, error) {
	loc, err := Locate(configPath)
	return loc.Path, err
}

// Locate is Find that also reports which source was used.
func Locate(configPath string) (Location, error) { return Locator{}.Locate(configPath) }

// Locate implements the search order of Find. An explicitly configured path
// (config or ZERG_CLAUDE) that is not executable is an error, not a reason to
// fall through: the user asked for that binary.
func (l Locator) Locate(configPath string) (Location, error) {
	l = l.withDefaults()
	root := l.repoRoot()
	if configPath != "" {
		p := configPath
		if !strings.ContainsRune(p, '/') {
			// A bare name in config means "this name on PATH".
			lp, err := l.LookPath(p)
			if err != nil {
				return Location{RepoRoot: root}, fmt.Errorf("claude from config: %w", err)
			}
			p = lp
		}
		p, err := checkExecutable(p)
		if err != nil {
			return Location{RepoRoot: root}, fmt.Errorf("claude from config: %w", err)
		}
		return Location{Path: p, Source: SourceConfig, RepoRoot: root}, nil
	}
	if v := l.Getenv(EnvClaude); v != "" {
		p, err := checkExecutable(v)
		if err != nil {
			return Location{RepoRoot: root}, fmt.Errorf("claude from %s: %w", EnvClaude, err)
		}
		return Location{Path: p, Source: SourceEnv, RepoRoot: root}, nil
	}
	if root != "" {
		if p := pinnedBinary(root); p != "" {
			return Location{Path: p, Source: SourceRepo, RepoRoot: root}, nil
		}
	}
	if p, err := l.LookPath("claude"); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		return Location{Path: p, Source: SourcePath, RepoRoot: root}, nil
	}
	return Location{RepoRoot: root}, ErrNotFound
}

func (l Locator) withDefaults() Locator {
	if l.Getenv == nil {
		l.Getenv = os.Getenv
	}
	if l.Executable == nil {
		l.Executable = os.Executable
	}
	if l.Getwd == nil {
		l.Getwd = os.Getwd
	}
	if l.LookPath == nil {
		l.LookPath = exec.LookPath
	}
	return l
}

// repoRoot walks up from the zerg binary's directory, then from the working
// directory, to the first directory holding tools/claude/package.json.
func (l Locator) repoRoot() string {
	var starts []string
	if exe, err := l.Executable(); err == nil {
		if r, err := filepath.EvalSymlinks(exe); err == nil {
			exe = r
		}
		starts = append(starts, filepath.Dir(exe))
	}
	if wd, err := l.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	for _, dir := range starts {
		for {
			if st, err := os.Stat(filepath.Join(dir, pinnedDir, "package.json")); err == nil && st.Mode().IsRegular() {
				return dir
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return ""
}

// stubLimit: npm's wrapper package ships a small placeholder that its
// postinstall replaces with the ~245 MB native binary; anything this small is
// the placeholder (install ran with --ignore-scripts).
const stubLimit = 1 << 20

// pinnedBinary returns the usable pinned binary under root: the npm wrapper,
// or this platform's package's native binary when the wrapper is a stub.
func pinnedBinary(root string) string {
	if p, err := checkExecutable(filepath.Join(root, pinnedWrapper)); err == nil {
		if st, err := os.Stat(p); err == nil && st.Size() >= stubLimit {
			return p
		}
	}
	for _, pkg := range nativePackages(runtime.GOOS, runtime.GOARCH) {
		if p, err := checkExecutable(filepath.Join(root, nativeBinary(pkg))); err == nil {
			return p
		}
	}
	return ""
}

// checkExecutable returns the absolute path of an executable regular file.
func checkExecutable(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", err
	}
	if !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
		return "", fmt.Errorf("%s is not an executable file", abs)
	}
	return abs, nil
}

var versionRE = regexp.MustCompile(`\b(\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?)\b`)

// Version runs `claude --version` and returns the version number
// ("2.1.197"). It runs with a minimal environment so nothing of ours leaks
// and no user config is read.
func Version(ctx context.Context, path string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	home, err := fsx.MkdirTemp("zerg-claude-version-")
	if err != nil {
		return "", fmt.Errorf("claude version: %w", err)
	}
	defer os.RemoveAll(home)
	cmd := exec.CommandContext(ctx, path, "--version")
	cmd.Env = []string{"PATH=" + defaultPath(os.Getenv("PATH")), "HOME=" + home,
		"CLAUDE_CONFIG_DIR=" + filepath.Join(home, "config"), "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "TERM=dumb"}
	cmd.WaitDelay = 2 * time.Second
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && len(ee.Stderr) > 0 {
			return "", fmt.Errorf("%s --version: %w: %s", path, err, strings.TrimSpace(string(ee.Stderr)))
		}
		return "", fmt.Errorf("%s --version: %w", path, err)
	}
	m := versionRE.FindStringSubmatch(string(out))
	if m == nil {
		first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
		if len(first) > 80 {
			first = first[:80] + "…"
		}
		return "", fmt.Errorf("%s --version printed no Claude Code version (%q)", path, first)
	}
	return m[1], nil
}

// PinnedVersion reads the exact CLI version pinned in
// <repoRoot>/tools/claude/package.json.
func PinnedVersion(repoRoot string) (string, error) {
	f, err := os.Open(filepath.Join(repoRoot, pinnedDir, "package.json"))
	if err != nil {
		return "", fmt.Errorf("read pinned version: %w", err)
	}
	defer f.Close()
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.NewDecoder(io.LimitReader(f, 1<<20)).Decode(&pkg); err != nil {
		return "", fmt.Errorf("read pinned version: %w", err)
	}
	v := strings.TrimLeft(pkg.Dependencies[pinnedPackage], "=v")
	if v == "" {
		return "", fmt.Errorf("read pinned version: no %s dependency", pinnedPackage)
	}
	return v, nil
}

// defaultPath is PATH for workers when ours is empty.
func defaultPath(p string) string {
	if p == "" {
		return "/usr/local/bin:/usr/bin:/bin"
	}
	return p
}
