package security

import (
	"context"
	"fmt"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/zergrush/zerg/internal/gitx"
)

// A commit check reads what a worker committed as git stores it: the
// entries that differ between two trees and their blobs. A diff of the
// work tree is not enough: it shows no content for a binary file (a NUL
// byte), for a file a .gitattributes marks binary or -diff, or for a
// symlink beyond its target, and a worker controls all of these.

// Kinds of CommitProblem.
const (
	ProblemSecret    = "secret"    // a scanner rule matched
	ProblemKey       = "key"       // a secret zerg knows, in one of its forms (KeyForms)
	ProblemSymlink   = "symlink"   // a symlink leaving the repository, into .git, or malformed
	ProblemProtected = "protected" // a path workers may never add, change or delete
	ProblemSize      = "size"      // a blob over the size limit (not read)
	ProblemGitlink   = "gitlink"   // a submodule entry: a commit of another repository
)

// DefaultMaxFileBytes is the blob size limit when CommitCheckOptions sets none.
const DefaultMaxFileBytes = 10 << 20

// maxSymlinkTarget is the longest symlink target accepted (PATH_MAX).
const maxSymlinkTarget = 4096

// maxSymlinkHops bounds the symlinks followed resolving one target, as
// the kernel does (ELOOP after 40).
const maxSymlinkHops = 40

// readBatchBytes bounds the blob bytes read in one git call; a batch holds
// at least one blob, so with the default limit a call reads at most 32 MiB
// (or one blob of up to MaxFileBytes).
const readBatchBytes = 32 << 20

// neutralScanPath is the file name a second rule pass reports content
// under when gitleaks' global allowlist skips the real name (*.png,
// go.sum, vendor/…): that allowlist is keyed on names, which the worker
// chooses.
const neutralScanPath = "zerg-commit-check"

// CommitCheckOptions says what CheckCommit looks for.
type CommitCheckOptions struct {
	// Scanner applies gitleaks' rules and zerg's own (Anthropic keys and
	// tokens, …) to every added or modified blob, symlink target and path
	// name; nil skips rule scanning.
	Scanner *Scanner
	// Secrets are secrets zerg knows exactly (the worker's API key): found
	// in any of their KeyForms, anywhere, they are a "key" problem. The
	// allowlist never applies to them. Secrets shorter than MinKeyLen are
	// not looked for.
	Secrets []string
	// Protected are doublestar globs of slash paths from the top of the
	// tree, matched case-insensitively, that no commit may add, change or
	// delete, whatever the task's ownership says. nil means
	// DefaultProtected(); an empty non-nil slice protects nothing.
	Protected []string
	// MaxFileBytes is the largest blob read; a larger one is a "size"
	// problem and is not read. 0 means DefaultMaxFileBytes.
	MaxFileBytes int64
	// Allowlist drops accepted false positives of the Scanner's rules. Load
	// it from the base commit, never from the commit being checked. nil
	// keeps the Scanner's own allowlist.
	Allowlist *Allowlist
	// Opened reports a protected path this commit may change all the
	// same: security.allow_protected opens it and the task names it
	// (Opening.Opens is checked here too, so a never-opened path stays
	// protected whatever Opened says). nil opens nothing.
	Opened func(path string) bool
}

// CommitProblem is one reason to refuse a commit. It never holds a secret:
// Detail names the rule and at most the 4-character hint of Finding.
type CommitProblem struct {
	Path   string `json:"path"`
	Kind   string `json:"kind"` // one of the Problem* kinds
	Detail string `json:"detail"`
}

func (p CommitProblem) String() string { return fmt.Sprintf("%s: %s: %s", p.Path, p.Kind, p.Detail) }

// DefaultProtected returns the paths no worker commit may touch: files that
// make git, zerg, Claude Code, CI or hook managers run commands or change
// how the repository is read or checked (see docs/secrets.md for why each).
func DefaultProtected() []string {
	return []string{
		// git: a nested repository, attributes (filters, diff and merge
		// drivers, binary, export-ignore, LFS), submodule URLs, LFS endpoint.
		"**/.git", "**/.git/**", "**/.gitattributes", ".gitmodules", ".lfsconfig",
		// zerg: configuration, rules, the secrets allowlist.
		".zerg/**",
		// Claude Code: settings (permissions, hooks that run commands), MCP servers.
		"**/.claude/**", "**/.mcp.json",
		// CI that runs with the repository's secrets on push.
		".github/workflows/**", ".github/actions/**", ".gitlab-ci.yml", ".circleci/**",
		".travis.yml", "azure-pipelines.yml", "bitbucket-pipelines.yml", ".buildkite/**",
		".drone.yml", ".woodpecker.yml", ".woodpecker/**", "Jenkinsfile",
		// Hooks run on the user's next commit.
		".husky/**", ".githooks/**", ".pre-commit-config.yaml", "lefthook.yml", ".lefthook.yml",
		// Editors that run tasks when the folder opens; the devcontainer,
		// whose Dockerfile container mode builds on the host.
		".vscode/tasks.json", ".devcontainer/**", ".devcontainer.json",
	}
}

// CheckCommit checks every path that differs between the trees of base and
// commit, reading git objects only (replacement refs ignored):
//
//   - a protected path added, changed or deleted: "protected";
//   - a gitlink (mode 160000): "gitlink", whatever it points at;
//   - a blob over MaxFileBytes: "size", without reading it;
//   - every other added or modified blob, binary or not, whole, and every
//     symlink target and path name: Scanner rules ("secret") and the
//     KeyForms of Secrets ("key");
//   - a symlink (mode 120000, its blob is the target) whose target is
//     empty, absolute, longer than 4096 bytes, or that leaves the
//     repository or enters a .git directory once resolved from the link's
//     directory through the symlinks of commit's tree: "symlink".
//
// A deletion is checked only against the protected paths. The problems are
// sorted by path; none means the commit may be taken. An error means the
// check could not be made (bad revisions, a broken repository, an invalid
// protected pattern) and the commit must not be taken either.
func CheckCommit(ctx context.Context, r *gitx.Runner, base, commit string, opts CommitCheckOptions) ([]CommitProblem, error) {
	c, err := newCommitChecker(r, opts)
	if err != nil {
		return nil, fmt.Errorf("check commit %s: %w", commit, err)
	}
	problems, err := c.check(ctx, base, commit)
	if err != nil {
		return nil, fmt.Errorf("check commit %s: %w", commit, err)
	}
	return problems, nil
}

type commitChecker struct {
	git       *gitx.Runner
	scanner   *Scanner   // with the effective allowlist; nil: no rule scan
	raw       *Scanner   // no allowlist, for the neutral-name pass
	allow     *Allowlist // the effective allowlist
	forms     []string
	protected *ProtectedPaths
	opened    func(string) bool
	maxBytes  int64

	mu       sync.Mutex
	problems []CommitProblem
}

func newCommitChecker(r *gitx.Runner, opts CommitCheckOptions) (*commitChecker, error) {
	c := &commitChecker{git: r.NoReplace(), maxBytes: opts.MaxFileBytes, opened: opts.Opened}
	if c.maxBytes <= 0 {
		c.maxBytes = DefaultMaxFileBytes
	}
	if opts.Scanner != nil {
		c.allow = opts.Allowlist
		if c.allow == nil {
			c.allow = opts.Scanner.allow
		}
		c.scanner = opts.Scanner.WithAllowlist(c.allow)
		c.raw = opts.Scanner.WithAllowlist(nil)
	}
	for _, s := range opts.Secrets {
		c.forms = append(c.forms, KeyForms(s)...)
	}
	prot, err := NewProtectedPaths(opts.Protected)
	if err != nil {
		return nil, err
	}
	c.protected = prot
	return c, nil
}

func (c *commitChecker) add(p, kind, format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.problems = append(c.problems, CommitProblem{Path: p, Kind: kind, Detail: fmt.Sprintf(format, args...)})
}

// blobItem is a changed file or symlink whose blob is read.
type blobItem struct {
	path, oid string
	symlink   bool
	size      int64
}

func (c *commitChecker) check(ctx context.Context, base, commit string) ([]CommitProblem, error) {
	baseID, err := c.git.RevParse(ctx, base)
	if err != nil {
		return nil, fmt.Errorf("resolve base %s: %w", base, err)
	}
	commitID, err := c.git.RevParse(ctx, commit)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", commit, err)
	}
	changes, err := c.git.ChangedEntries(ctx, baseID, commitID)
	if err != nil {
		return nil, err
	}
	var items []blobItem
	var names []string
	for _, ch := range changes {
		if pat, ok := c.protected.Match(ch.Path); ok && !(c.opened != nil && !NeverOpened(ch.Path) && c.opened(ch.Path)) {
			verb := map[string]string{"A": "added", "D": "deleted"}[ch.Status]
			if verb == "" {
				verb = "changed"
			}
			c.add(ch.Path, ProblemProtected, "%s; %q is protected", verb, pat)
		}
		if ch.Status == "D" {
			continue
		}
		names = append(names, ch.Path)
		switch {
		case ch.Mode == "160000":
			c.add(ch.Path, ProblemGitlink, "a submodule entry (commit %s of another repository)", shortOID(ch.OID))
		case ch.Mode == "120000":
			items = append(items, blobItem{path: ch.Path, oid: ch.OID, symlink: true})
		case strings.HasPrefix(ch.Mode, "100"):
			items = append(items, blobItem{path: ch.Path, oid: ch.OID})
		default:
			return nil, fmt.Errorf("%q has unexpected mode %s", ch.Path, ch.Mode)
		}
	}
	c.checkNames(names)

	oids := make([]string, len(items))
	for i, it := range items {
		oids[i] = it.oid
	}
	infos, err := c.git.ObjectInfos(ctx, oids)
	if err != nil {
		return nil, err
	}
	var files []blobItem
	hasLinks := false
	for i := range items {
		it := &items[i]
		if infos[i].Type != "blob" {
			return nil, fmt.Errorf("%q is a %s, not a blob", it.path, infos[i].Type)
		}
		it.size = infos[i].Size
		switch {
		case it.symlink:
			hasLinks = true
		case it.size > c.maxBytes:
			c.add(it.path, ProblemSize, "%d bytes, over the %d-byte limit (not read)", it.size, c.maxBytes)
		default:
			files = append(files, *it)
		}
	}
	if hasLinks {
		if err := c.checkSymlinks(ctx, commitID, items); err != nil {
			return nil, err
		}
	}
	if err := c.scanFiles(ctx, files); err != nil {
		return nil, err
	}
	return c.result(), nil
}

// result sorts and deduplicates the problems.
func (c *commitChecker) result() []CommitProblem {
	ps := c.problems
	slices.SortFunc(ps, func(a, b CommitProblem) int {
		if d := strings.Compare(a.Path, b.Path); d != 0 {
			return d
		}
		if d := strings.Compare(a.Kind, b.Kind); d != 0 {
			return d
		}
		return strings.Compare(a.Detail, b.Detail)
	})
	return slices.Compact(ps)
}

// checkNames scans the new path names: a name is content the commit adds
// too. One rule pass covers them all, a name per line.
func (c *commitChecker) checkNames(names []string) {
	for _, n := range names {
		if ContainsKey([]byte(n), c.forms) {
			c.add(n, ProblemKey, "the path name holds a known secret (as written or transformed)")
		}
	}
	if c.scanner == nil || len(names) == 0 {
		return
	}
	var text strings.Builder
	for _, n := range names {
		text.WriteString(strings.ReplaceAll(n, "\n", " ") + "\n")
	}
	for _, f := range c.raw.ScanFile(neutralScanPath, []byte(text.String())) {
		if f.Line < 1 || f.Line > len(names) || f.RuleID == "generic-api-key" {
			continue
		}
		f.File = names[f.Line-1]
		if !c.allow.allows(f) {
			c.add(f.File, ProblemSecret, "the path name matches %s (%s)", f.RuleID, f.Redacted)
		}
	}
}

// scanFiles reads the blobs in batches and scans each, GOMAXPROCS at a time.
func (c *commitChecker) scanFiles(ctx context.Context, files []blobItem) error {
	workers := runtime.GOMAXPROCS(0)
	sizes := make([]int64, len(files))
	for i, f := range files {
		sizes[i] = f.size
	}
	for _, rng := range readBatches(sizes, readBatchBytes) {
		batch := files[rng[0]:rng[1]]
		oids := make([]string, len(batch))
		for i, f := range batch {
			oids[i] = f.oid
		}
		blobs, err := c.git.ReadBlobs(ctx, oids)
		if err != nil {
			return err
		}
		sem := make(chan struct{}, workers)
		var wg sync.WaitGroup
		for i := range batch {
			if err := ctx.Err(); err != nil {
				wg.Wait()
				return err
			}
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer func() { <-sem; wg.Done() }()
				c.scanContent(batch[i].path, blobs[i], "")
			}()
		}
		wg.Wait()
	}
	return ctx.Err()
}

// readBatches splits blobs of the given sizes into consecutive [start, end)
// ranges of at most limit bytes each; a larger blob is a batch of its own.
func readBatches(sizes []int64, limit int64) [][2]int {
	var out [][2]int
	for start := 0; start < len(sizes); {
		end, sum := start, int64(0)
		for end < len(sizes) && (end == start || sum+sizes[end] <= limit) {
			sum += sizes[end]
			end++
		}
		out = append(out, [2]int{start, end})
		start = end
	}
	return out
}

// scanContent applies the rules and the key forms to one blob's content
// and to what it holds compressed or encoded (Unpack). what prefixes the
// detail ("symlink target: ").
func (c *commitChecker) scanContent(p string, data []byte, what string) {
	c.scanText(p, data, what)
	for _, in := range Unpack(data) {
		c.scanText(p, in.Data, what+"inside "+in.What+": ")
	}
}

// scanText applies the rules and the key forms to one text.
func (c *commitChecker) scanText(p string, data []byte, what string) {
	if ContainsKey(data, c.forms) {
		c.add(p, ProblemKey, "%sholds a known secret (as written or transformed)", what)
	}
	if c.scanner == nil {
		return
	}
	for _, f := range c.scanner.ScanFile(p, data) {
		c.addFinding(p, f, what)
	}
	// An empty file has nothing to scan again under another name; its
	// name alone (the allowlist's regexps over it) costs a worker that
	// writes thousands of files with long names minutes of CPU.
	if len(data) > 0 && c.scanner.skipsPath(p) {
		// gitleaks' own allowlist skipped the file by its name alone: scan
		// the content under a neutral name. generic-api-key, tuned for
		// source code, is left out of this pass: lock files and images are
		// full of long random strings next to words like "key".
		for _, f := range c.raw.ScanFile(neutralScanPath, data) {
			if f.RuleID == "generic-api-key" {
				continue
			}
			f.File = p
			if !c.allow.allows(f) {
				c.addFinding(p, f, what)
			}
		}
	}
}

func (c *commitChecker) addFinding(p string, f Finding, what string) {
	if f.Line == 0 {
		c.add(p, ProblemSecret, "%s%s: the file name matches (%s)", what, f.RuleID, f.Description)
		return
	}
	c.add(p, ProblemSecret, "%sline %d: %s (%s)", what, f.Line, f.RuleID, f.Redacted)
}

// skipsPath reports whether gitleaks' global allowlist skips a file of
// this name without reading it.
func (s *Scanner) skipsPath(p string) bool {
	d := <-s.pool
	defer func() { s.pool <- d }()
	for _, a := range d.Config.Allowlists {
		if a.PathAllowed(p) {
			return true
		}
	}
	return false
}

// checkSymlinks reads every symlink of commit's tree (a new link may lead
// through old ones) and checks the changed ones.
func (c *commitChecker) checkSymlinks(ctx context.Context, commitID string, items []blobItem) error {
	entries, err := c.git.TreeEntries(ctx, commitID)
	if err != nil {
		return err
	}
	targets := map[string]string{} // link path → target
	tooLong := map[string]bool{}
	var linkPaths, oids []string
	for _, e := range entries {
		if e.Mode != "120000" {
			continue
		}
		if e.Size > maxSymlinkTarget {
			tooLong[e.Path] = true
			continue
		}
		linkPaths = append(linkPaths, e.Path)
		oids = append(oids, e.OID)
	}
	for start := 0; start < len(oids); start += 10000 {
		end := min(start+10000, len(oids))
		blobs, err := c.git.ReadBlobs(ctx, oids[start:end])
		if err != nil {
			return err
		}
		for i, b := range blobs {
			targets[linkPaths[start+i]] = string(b)
		}
	}
	for _, it := range items {
		if !it.symlink {
			continue
		}
		if tooLong[it.path] {
			c.add(it.path, ProblemSymlink, "target of %d bytes, over %d (not read)", it.size, maxSymlinkTarget)
			continue
		}
		target, ok := targets[it.path]
		if !ok {
			return fmt.Errorf("symlink %q is not in the tree of %s", it.path, shortOID(commitID))
		}
		c.scanContent(it.path, []byte(target), "symlink target: ")
		if why := resolveLink(it.path, targets, tooLong); why != "" {
			c.add(it.path, ProblemSymlink, "%s", why)
		}
	}
	return nil
}

// resolveLink follows the symlink at link the way the kernel would once
// the tree is checked out: from the link's directory, component by
// component, through the tree's other symlinks. It returns why the link is
// refused, or "" when it stays inside the repository. Backslashes count as
// separators and "C:" as a drive, as they would on Windows.
func resolveLink(link string, targets map[string]string, tooLong map[string]bool) string {
	dir := strings.Split(path.Dir(link), "/")
	if path.Dir(link) == "." {
		dir = nil
	}
	pending, why := splitTarget(targets[link])
	if why != "" {
		return why
	}
	for hops := 0; len(pending) > 0; {
		comp := pending[0]
		pending = pending[1:]
		switch comp {
		case "", ".":
			continue
		case "..":
			if len(dir) == 0 {
				return "target leaves the repository"
			}
			dir = dir[:len(dir)-1]
			continue
		}
		if strings.EqualFold(comp, ".git") {
			return "target enters a .git directory"
		}
		dir = append(dir, comp)
		p := strings.Join(dir, "/")
		if tooLong[p] {
			return "target leads through a symlink with an overlong target"
		}
		next, isLink := targets[p]
		if !isLink {
			continue
		}
		if hops++; hops > maxSymlinkHops {
			return "too many levels of symlinks"
		}
		comps, why := splitTarget(next)
		if why != "" {
			return "target leads through " + p + ": " + why
		}
		dir = dir[:len(dir)-1]
		pending = append(comps, pending...)
	}
	return ""
}

// splitTarget splits a symlink target into components, refusing the ones
// no repository should hold.
func splitTarget(t string) ([]string, string) {
	switch {
	case t == "":
		return nil, "empty target"
	case strings.ContainsRune(t, 0):
		return nil, "target holds a NUL byte"
	case strings.HasPrefix(t, "/") || strings.HasPrefix(t, `\`):
		return nil, "absolute target"
	case len(t) >= 2 && t[1] == ':' && ('a' <= t[0]|0x20 && t[0]|0x20 <= 'z'):
		return nil, "absolute target (a drive letter)"
	}
	return strings.FieldsFunc(t, func(r rune) bool { return r == '/' || r == '\\' }), ""
}

func shortOID(oid string) string {
	if len(oid) > 12 {
		return oid[:12]
	}
	return oid
}
