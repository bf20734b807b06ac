package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/zergrush/zerg/internal/pathx"
	"github.com/zergrush/zerg/internal/security"
)

func init() { register(newScanCmd) }

// scanMaxFileSize: bigger files are skipped (security.ReadScannable).
const scanMaxFileSize = security.MaxScanFileSize

// scanSkipDirs are never descended into: git's object store and installed
// JavaScript dependencies (tools/claude/node_modules included).
var scanSkipDirs = map[string]bool{".git": true, "node_modules": true}

type scanOptions struct {
	staged bool
	asJSON bool
	quiet  bool
	paths  []string
}

// scanResult is the JSON report.
type scanResult = security.ScanReport

func newScanCmd(a *app) *cobra.Command {
	var o scanOptions
	cmd := &cobra.Command{
		Use:   "scan [PATH...]",
		Short: "Look for secrets (API keys, tokens, private keys) in files or the staged diff",
		Long: `Scans files and directories (default: the current directory) for secrets with
gitleaks' rules plus zerg's own (Anthropic API, admin and OAuth keys, URLs
with passwords). .git and node_modules directories, binary files and files
over 1 MiB are skipped. With --staged, scans only the lines added by the
staged changes: this is what zerg's pre-commit hook runs.

Each finding is one line "path:line: rule-id: description (hint)"; the
secret itself is never printed. False positives go in .zerg/secrets-allow
(see docs/secrets.md). Exit status: 0 clean, 1 secrets found, 2 bad input.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.paths = args
			return runScan(cmd.Context(), a, o)
		},
	}
	cmd.Flags().BoolVar(&o.staged, "staged", false, "scan the lines added by the staged changes (git diff --cached)")
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "print the findings as a JSON object")
	cmd.Flags().BoolVarP(&o.quiet, "quiet", "q", false, "print nothing when no secret is found")
	return cmd
}

func runScan(ctx context.Context, a *app, o scanOptions) error {
	if o.staged && len(o.paths) > 0 {
		return usageErrorf("--staged scans the staged diff and takes no paths (see 'zerg scan --help')")
	}
	cwd, err := a.getwd()
	if err != nil {
		return failedf("find the current directory: %v", err)
	}
	var res *scanResult
	if o.staged {
		res, err = scanStaged(ctx, cwd)
	} else {
		res, err = scanPaths(ctx, a, cwd, o.paths)
	}
	if err != nil {
		return err
	}
	if o.asJSON {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			return failedf("write the report: %v", err)
		}
	} else {
		for _, f := range res.Findings {
			fmt.Fprintln(a.stdout, f.String())
		}
	}
	if n := len(res.Findings); n > 0 {
		them := "them"
		if n == 1 {
			them = "it"
		}
		return failedf("found %s; remove %s (and revoke any real key), or list false positives in %s (see docs/secrets.md)",
			countNoun(n, "possible secret"), them, security.SecretsAllowFile)
	}
	if !o.asJSON && !o.quiet {
		what := countNoun(res.Files, "file")
		if o.staged {
			what = "the staged changes (" + what + ")"
		}
		if res.Skipped > 0 {
			what += fmt.Sprintf(", %d skipped", res.Skipped)
		}
		fmt.Fprintf(a.stdout, "no secrets found in %s\n", what)
	}
	return nil
}

// newSecretScanner is security.RepoScanner of root; an allowlist that
// cannot be used is bad input.
func newSecretScanner(root string) (*security.Scanner, error) {
	s, err := security.RepoScanner(root)
	if errors.Is(err, security.ErrBadAllowlist) {
		return nil, badInput(err)
	}
	return s, err
}

// scanStaged scans the staged diff of the repository holding cwd
// (security.Scanner.ScanStaged).
func scanStaged(ctx context.Context, cwd string) (*scanResult, error) {
	root, err := zergRepoRoot(ctx, cwd)
	if err != nil {
		return nil, err
	}
	s, err := newSecretScanner(root)
	if err != nil {
		return nil, err
	}
	return s.ScanStaged(ctx, root)
}

// scanTarget is one file to scan: its absolute path, the path matched against
// the allowlist (relative to the repository root) and the path printed
// (relative to the current directory, as the user typed it).
type scanTarget struct {
	abs, rel, show string
	named          bool // named on the command line: say why it is skipped
}

func scanPaths(ctx context.Context, a *app, cwd string, args []string) (*scanResult, error) {
	if len(args) == 0 {
		args = []string{"."}
	}
	// The allowlist lives at the repository root; outside a repository, the
	// current directory stands for it.
	root := cwd
	if r, err := zergRepoRoot(ctx, cwd); err == nil {
		root = r
	}
	// Every argument is checked before anything is scanned: bad input is exit 2.
	for _, p := range args {
		if _, err := os.Stat(pathx.AbsFrom(cwd, p)); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, usageErrorf("%s: no such file or directory", p)
			}
			return nil, usageErrorf("%s: %v", p, err)
		}
	}
	s, err := newSecretScanner(root)
	if err != nil {
		return nil, err
	}
	var targets []scanTarget
	seen := map[string]bool{}
	addTarget := func(abs string, named bool) {
		if seen[abs] {
			return
		}
		seen[abs] = true
		targets = append(targets, scanTarget{abs: abs, rel: pathx.SlashRelOrAbs(root, abs), show: pathx.SlashRelOrAbs(cwd, abs), named: named})
	}
	for _, p := range args {
		abs := pathx.AbsFrom(cwd, p)
		fi, err := os.Stat(abs)
		if err != nil {
			return nil, usageErrorf("%s: %v", p, err)
		}
		if !fi.IsDir() {
			addTarget(abs, true)
			continue
		}
		err = filepath.WalkDir(abs, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if path == abs {
					return err
				}
				fmt.Fprintf(a.stderr, "zerg: skip %s: %v\n", pathx.SlashRelOrAbs(cwd, path), err)
				return nil
			}
			if d.IsDir() {
				if path != abs && scanSkipDirs[d.Name()] {
					return filepath.SkipDir
				}
				return nil
			}
			// Symlinks are not followed: they may point outside the tree,
			// and their target is scanned where it lives.
			if d.Type().IsRegular() {
				addTarget(path, false)
			}
			return nil
		})
		if err != nil {
			return nil, usageErrorf("%s: %v", p, err)
		}
	}

	var (
		mu  sync.Mutex
		res = &scanResult{Findings: []security.Finding{}}
	)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, t := range targets {
		g.Go(func() error {
			if gctx.Err() != nil {
				return gctx.Err()
			}
			content, why := security.ReadScannable(t.abs)
			// A skipped file still goes through the rules on file names
			// alone (a .p12 key store is binary).
			found := s.ScanFile(t.rel, content)
			mu.Lock()
			defer mu.Unlock()
			if why != "" {
				res.Skipped++
				if t.named {
					fmt.Fprintf(a.stderr, "zerg: skip %s: %s\n", t.show, why)
				}
			} else {
				res.Files++
			}
			for _, f := range found {
				f.File = t.show
				res.Findings = append(res.Findings, f)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	sort.Slice(res.Findings, func(i, j int) bool {
		a, b := res.Findings[i], res.Findings[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.RuleID < b.RuleID
	})
	return res, nil
}
