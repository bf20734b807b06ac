package security

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/gofrs/flock"

	"github.com/zergrush/zerg/internal/gitx"
)

// The security rules (github.com/TikiTribe/claude-secure-coding-rules) are
// fetched at a pinned commit into a per-commit cache directory:
//
//	.zerg/cache/rules/<commit>/rules/...        the upstream rules/ tree, byte for byte
//	.zerg/cache/rules/<commit>/manifest.json    source, commit, checksum, file list, fetch time
//
// The checksum is content-based (it does not depend on the commit id), so the
// same tree fetched from a mirror has the same checksum. docs/rules.md has the
// shell command that recomputes it.

// RulesCacheRel is the rules cache directory relative to the repository root.
const RulesCacheRel = ".zerg/cache/rules"

// ManifestName is the manifest's file name inside a cache directory. It is the
// only file the checksum does not cover.
const ManifestName = "manifest.json"

// ManifestVersion is the manifest format this build writes and reads.
const ManifestVersion = 1

// rulesSubtree is the part of the upstream repository that is copied.
const rulesSubtree = "rules"

// Limits on what a fetch may copy: the pinned snapshot is 84 files and 2.7 MB;
// a source far beyond that is the wrong repository (or a hostile one filling
// the disk), not a rules tree.
const (
	maxRuleFiles     = 5000
	maxRuleFileBytes = 4 << 20
	maxRulesBytes    = 64 << 20
)

// knownChecksums pins the checksum of the default commit in the binary, so a
// default config (whose sha256 is empty) is still verified against a value
// that did not come over the network. It was computed from the rules/ tree at
// that commit (the snapshot in internal/security/testdata checks it).
var knownChecksums = map[string]string{
	"f644d862f89f926537591d64439c067b1e066ffe": "d1d4534ae5fd4c334a6c5a7fd281ecbf12ab9de04f0113b2fb7ae6d75b073170",
}

// ExpectedChecksum is the checksum the rules at commit must have: the
// configured one when set, else the one built into zerg for the default
// commit, else "" (not checked beyond the manifest).
func ExpectedChecksum(commit, configured string) string {
	if configured != "" {
		return configured
	}
	return knownChecksums[commit]
}

// Manifest describes one fetched rules tree.
type Manifest struct {
	Version   int            `json:"version"`
	Source    string         `json:"source"`
	Commit    string         `json:"commit"`
	Checksum  string         `json:"sha256"`
	Files     []ManifestFile `json:"files"`
	FetchedAt time.Time      `json:"fetched_at"`
}

// ManifestFile is one copied file: its slash path relative to the cache
// directory (e.g. "rules/languages/go/CLAUDE.md"), size and SHA-256.
type ManifestFile struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// RulesCacheDir is the cache directory of the rules at commit in the
// repository at root.
func RulesCacheDir(root, commit string) string {
	return filepath.Join(root, filepath.FromSlash(RulesCacheRel), commit)
}

// ErrBadCommit marks a rules commit that is not a full commit id.
var ErrBadCommit = errors.New("not a full commit id")

var hexRE = regexp.MustCompile(`^[0-9a-f]+$`)

// ValidateCommit accepts only a full lower-case commit id: 40 hex digits
// (SHA-1) or 64 (SHA-256 repositories). Branch and tag names are refused
// because they move: the same name can mean different rules tomorrow.
func ValidateCommit(commit string) error {
	if hexRE.MatchString(commit) && (len(commit) == 40 || len(commit) == 64) {
		return nil
	}
	return fmt.Errorf("%q is %w: pin the rules to a full 40-character lower-case commit hash; branch and tag names are refused because they move", commit, ErrBadCommit)
}

// ValidateSource accepts the git URLs a rules fetch may use: https, http,
// ssh, git, file, or an absolute local path. Anything else (a leading "-"
// that git would read as an option, remote helpers such as ext::, relative
// paths) is refused.
func ValidateSource(source string) error {
	switch {
	case source == "":
		return errors.New("no rules source URL; set security_rules.url or pass --source")
	case strings.HasPrefix(source, "-"):
		return fmt.Errorf("rules source %q starts with '-'", source)
	case strings.ContainsAny(source, "\x00\n\r"):
		return fmt.Errorf("rules source %q contains a control character", source)
	case filepath.IsAbs(source):
		return nil
	case strings.Contains(source, "::"):
		return fmt.Errorf("rules source %q uses a git remote helper; use https, ssh, git, file or an absolute path", source)
	}
	u, err := url.Parse(source)
	if err != nil {
		return fmt.Errorf("rules source %q is not a URL: %v", source, err)
	}
	switch u.Scheme {
	case "https", "http", "ssh", "git":
		if u.Host == "" {
			return fmt.Errorf("rules source %q has no host", source)
		}
		return nil
	case "file":
		return nil
	}
	return fmt.Errorf("rules source %q is not a git URL (https, ssh, git, file or an absolute path)", source)
}

// FetchError is a failed download of the rules (no network, unknown
// repository, commit not found): nothing was written. Callers that can go on
// without rules (zerg init) tell it apart from verification failures.
type FetchError struct {
	Source, Commit string
	Err            error
}

func (e *FetchError) Error() string {
	return fmt.Sprintf("fetch rules %s at %s: %v", e.Source, e.Commit, e.Err)
}

func (e *FetchError) Unwrap() error { return e.Err }

// ChecksumError is a rules tree whose checksum is not the expected one.
// Detail names the first file that differs from the manifest, when known.
type ChecksumError struct {
	Dir       string
	Want, Got string
	// Against says where Want came from ("the manifest", "the pinned checksum").
	Against string
	Detail  string
}

func (e *ChecksumError) Error() string {
	msg := fmt.Sprintf("rules in %s do not match %s: want sha256 %s, got %s", e.Dir, e.Against, e.Want, e.Got)
	if e.Detail != "" {
		msg += " (" + e.Detail + ")"
	}
	return msg
}

// FetchRules downloads the repository at source at exactly commit, copies its
// rules/ tree into dest (normally RulesCacheDir(root, commit)) with a
// manifest, and returns the manifest. want, when not empty, is the expected
// checksum (see ExpectedChecksum): a mismatch is a *ChecksumError naming both
// values, and nothing is written.
//
// git runs through internal/gitx in a throw-away bare repository next to
// dest: `fetch --depth 1 <source> <commit>`, then the files are read from the
// object database (ls-tree + cat-file), never checked out, so no filter,
// attribute or hook of the fetched repository takes effect. Symlinks and
// submodules in the tree are refused. dest is replaced by a rename only once
// everything, manifest included, is written and synced: a failed or
// interrupted fetch leaves dest as it was (never half-written).
func FetchRules(ctx context.Context, source, commit, dest, want string) (Manifest, error) {
	if err := ValidateCommit(commit); err != nil {
		return Manifest{}, err
	}
	if err := ValidateSource(source); err != nil {
		return Manifest{}, err
	}
	parent := filepath.Dir(dest)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return Manifest{}, fmt.Errorf("create rules cache %s: %w", parent, err)
	}
	tmp, err := os.MkdirTemp(parent, ".fetch-"+commit[:12]+"-")
	if err != nil {
		return Manifest{}, fmt.Errorf("create rules cache %s: %w", parent, err)
	}
	defer os.RemoveAll(tmp)

	files, err := fetchTree(ctx, tmp, source, commit)
	if err != nil {
		return Manifest{}, err
	}
	stage := filepath.Join(tmp, "out")
	for _, f := range files {
		if err := writeSynced(filepath.Join(stage, filepath.FromSlash(f.path)), f.data); err != nil {
			return Manifest{}, fmt.Errorf("write rules: %w", err)
		}
	}
	// The checksum is computed from what is on disk, by the same code that
	// verifies it later, so the two can never disagree about the format.
	list, sum, err := treeChecksum(stage)
	if err != nil {
		return Manifest{}, err
	}
	if want != "" && sum != want {
		return Manifest{}, &ChecksumError{Dir: source + "@" + commit, Want: want, Got: sum, Against: "the pinned checksum (security_rules.sha256)"}
	}
	m := Manifest{
		Version:   ManifestVersion,
		Source:    source,
		Commit:    commit,
		Checksum:  sum,
		Files:     list,
		FetchedAt: time.Now().UTC().Truncate(time.Second),
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return Manifest{}, err
	}
	if err := writeSynced(filepath.Join(stage, ManifestName), append(data, '\n')); err != nil {
		return Manifest{}, fmt.Errorf("write rules manifest: %w", err)
	}
	if err := publish(ctx, stage, dest, filepath.Join(tmp, "old")); err != nil {
		return Manifest{}, err
	}
	return m, nil
}

// publish moves stage to dest under a lock, so two concurrent fetches cannot
// interleave their renames. An existing dest is moved aside first (into the
// temporary directory that the caller removes); between the two renames dest
// does not exist, which readers treat as "not fetched", never as damaged.
func publish(ctx context.Context, stage, dest, aside string) error {
	lk := flock.New(filepath.Join(filepath.Dir(dest), ".lock"))
	ok, err := lk.TryLockContext(ctx, 50*time.Millisecond)
	if err != nil || !ok {
		return fmt.Errorf("lock rules cache: %v", err)
	}
	defer lk.Unlock()
	if _, err := os.Lstat(dest); err == nil {
		if err := os.Rename(dest, aside); err != nil {
			return fmt.Errorf("replace %s: %w", dest, err)
		}
	}
	if err := os.Rename(stage, dest); err != nil {
		return fmt.Errorf("install rules into %s: %w", dest, err)
	}
	syncDir(filepath.Dir(dest))
	return nil
}

type treeFile struct {
	path string // slash path relative to the cache directory
	data []byte
}

// fetchTree fetches commit from source into a bare repository under tmp and
// returns the files of its rules/ tree.
func fetchTree(ctx context.Context, tmp, source, commit string) ([]treeFile, error) {
	format := ""
	if len(commit) == 64 {
		format = "sha256"
	}
	g, err := gitx.InitBare(ctx, filepath.Join(tmp, "git"), format)
	if err != nil {
		return nil, fmt.Errorf("prepare rules fetch: %w", err)
	}
	if err := g.FetchCommit(ctx, source, commit); err != nil {
		return nil, &FetchError{Source: source, Commit: commit, Err: err}
	}
	got, err := g.RevParse(ctx, commit)
	if err != nil {
		return nil, &FetchError{Source: source, Commit: commit, Err: err}
	}
	if got != commit {
		return nil, fmt.Errorf("fetch rules %s: asked for commit %s, got %s", source, commit, got)
	}
	list, err := g.TreeEntries(ctx, commit, rulesSubtree)
	if err != nil {
		return nil, fmt.Errorf("list rules at %s: %w", commit, err)
	}
	var entries []gitx.TreeEntry
	var total int64
	for _, e := range list {
		switch {
		case e.Mode == "120000":
			return nil, fmt.Errorf("rules at %s: %s is a symlink; refusing a tree that could point outside itself", commit, e.Path)
		case e.Type != "blob":
			return nil, fmt.Errorf("rules at %s: %s is a %s (submodule?); only plain files are accepted", commit, e.Path, e.Type)
		}
		if err := checkRulePath(e.Path); err != nil {
			return nil, fmt.Errorf("rules at %s: %w", commit, err)
		}
		total += e.Size
		switch {
		case e.Size > maxRuleFileBytes:
			return nil, fmt.Errorf("rules at %s: %s is %d bytes, more than a rules file can be (%d)", commit, e.Path, e.Size, maxRuleFileBytes)
		case total > maxRulesBytes:
			return nil, fmt.Errorf("rules at %s: the rules/ tree is larger than %d bytes; is %s the rules repository?", commit, maxRulesBytes, source)
		case len(entries) >= maxRuleFiles:
			return nil, fmt.Errorf("rules at %s: more than %d files under rules/; is %s the rules repository?", commit, maxRuleFiles, source)
		}
		entries = append(entries, e)
	}
	if len(entries) == 0 {
		return nil, fmt.Errorf("rules at %s: %s has no rules/ directory at that commit; is it the rules repository?", commit, source)
	}
	oids := make([]string, len(entries))
	for i, e := range entries {
		oids[i] = e.OID
	}
	blobs, err := g.ReadBlobs(ctx, oids)
	if err != nil {
		return nil, fmt.Errorf("read rules at %s: %w", commit, err)
	}
	files := make([]treeFile, 0, len(entries))
	for i, e := range entries {
		// The listing's sizes were checked; the blobs must agree with them.
		if int64(len(blobs[i])) != e.Size {
			return nil, fmt.Errorf("read rules at %s: %s: %d bytes, the tree says %d", commit, e.Path, len(blobs[i]), e.Size)
		}
		files = append(files, treeFile{path: e.Path, data: blobs[i]})
	}
	return files, nil
}

// checkRulePath refuses paths that could escape the cache directory or break
// the one-path-per-line checksum format.
func checkRulePath(p string) error {
	if p == "" || strings.ContainsAny(p, "\x00\n\r\\") || !filepath.IsLocal(filepath.FromSlash(p)) || path.Clean(p) != p {
		return fmt.Errorf("refusing the path %q", p)
	}
	for c := range strings.SplitSeq(p, "/") {
		if c == ".git" {
			return fmt.Errorf("refusing the path %q", p)
		}
	}
	return nil
}

// writeSynced creates path (and its directories) with data and fsyncs it, so
// the rename that publishes the cache never exposes empty files after a crash.
func writeSynced(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // best effort: not every file system supports it
		_ = d.Close()
	}
}

// treeChecksum lists every file under dir except the top-level manifest and
// returns them sorted by path with the tree checksum: SHA-256 over one line
// per file, "<sha256 of the content>  <slash path>\n", in byte order of the
// paths. It is what `find . -type f ! -path ./manifest.json | sed 's|^\./||' |
// LC_ALL=C sort | xargs sha256sum | sha256sum` prints. Anything but regular
// files and directories (a symlink, a device) is an error.
func treeChecksum(dir string) ([]ManifestFile, string, error) {
	var files []ManifestFile
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch {
		case d.IsDir():
			return nil
		case rel == ManifestName:
			return nil
		case !d.Type().IsRegular():
			return fmt.Errorf("%s is not a regular file", rel)
		}
		if strings.ContainsAny(rel, "\n\r") {
			return fmt.Errorf("%q: file names with line breaks are not allowed", rel)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		files = append(files, ManifestFile{Path: rel, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])})
		return nil
	})
	if err != nil {
		return nil, "", fmt.Errorf("checksum rules in %s: %w", dir, err)
	}
	slices.SortFunc(files, func(a, b ManifestFile) int { return strings.Compare(a.Path, b.Path) })
	h := sha256.New()
	for _, f := range files {
		fmt.Fprintf(h, "%s  %s\n", f.SHA256, f.Path)
	}
	return files, hex.EncodeToString(h.Sum(nil)), nil
}

// ReadManifest reads the manifest of the cache directory dir.
func ReadManifest(dir string) (Manifest, error) {
	data, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Manifest{}, fmt.Errorf("no rules manifest in %s: %w; run zerg rules update", dir, err)
		}
		return Manifest{}, fmt.Errorf("read rules manifest: %w", err)
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return Manifest{}, fmt.Errorf("read rules manifest %s: %w", filepath.Join(dir, ManifestName), err)
	}
	if m.Version != ManifestVersion {
		return Manifest{}, fmt.Errorf("rules manifest %s has version %d, this zerg reads %d; run zerg rules update", filepath.Join(dir, ManifestName), m.Version, ManifestVersion)
	}
	return m, nil
}

// VerifyRules recomputes the checksum of the cache directory dir and compares
// it with the manifest's and, when want is not empty, with want (the pinned
// value from the config or the binary). Any edited, added or removed file is a
// *ChecksumError naming both values and the first file that differs from the
// manifest. It returns the manifest when everything matches.
//
// The manifest lives beside the files, so an edit that also rewrites the
// manifest is caught only by a pinned want.
func VerifyRules(dir, want string) (Manifest, error) {
	m, err := ReadManifest(dir)
	if err != nil {
		return Manifest{}, err
	}
	files, got, err := treeChecksum(dir)
	if err != nil {
		return m, err
	}
	detail := diffFiles(m.Files, files)
	if want != "" && got != want {
		return m, &ChecksumError{Dir: dir, Want: want, Got: got, Against: "the pinned checksum", Detail: detail}
	}
	if got != m.Checksum {
		return m, &ChecksumError{Dir: dir, Want: m.Checksum, Got: got, Against: "its manifest", Detail: detail}
	}
	return m, nil
}

// diffFiles names the first difference between the manifest's file list and
// the files on disk.
func diffFiles(want, got []ManifestFile) string {
	w := map[string]ManifestFile{}
	for _, f := range want {
		w[f.Path] = f
	}
	g := map[string]bool{}
	for _, f := range got {
		g[f.Path] = true
		old, ok := w[f.Path]
		switch {
		case !ok:
			return f.Path + " was added"
		case old.SHA256 != f.SHA256:
			return f.Path + " was edited"
		}
	}
	for _, f := range want {
		if !g[f.Path] {
			return f.Path + " was removed"
		}
	}
	return ""
}
