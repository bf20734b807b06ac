package security

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/rs/zerolog"
	"github.com/spf13/viper"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/logging"
	"github.com/zricethezav/gitleaks/v8/report"
)

// SecretsAllowFile is the allowlist of known false positives, relative to the
// repository root (see docs/secrets.md for its format).
const SecretsAllowFile = ".zerg/secrets-allow"

// zergRules are added to gitleaks' default rules. gitleaks (v8.30) knows
// Anthropic API and admin keys only in their exact current shape (93
// characters then "AA"); these also catch OAuth access and refresh tokens and
// keys of other lengths or versions. URLs with a password are missed by the
// default rules; Azure storage keys and AWS secret access keys are caught
// only by generic-api-key, whose entropy and stop-word filters are tuned for
// other shapes, so they get a named rule.
const zergRules = `
[[rules]]
id = "zerg-anthropic-oauth-token"
description = "Anthropic OAuth token (Claude subscription access or refresh token)"
regex = '''\b(sk-ant-o[ar]t\d{2}-[A-Za-z0-9_\-]{40,200})'''
keywords = ["sk-ant-oat", "sk-ant-ort"]

[[rules]]
id = "zerg-anthropic-key"
description = "Anthropic API or admin key"
regex = '''\b(sk-ant-(?:api|admin|sid)\d{2}-[A-Za-z0-9_\-]{40,200})'''
keywords = ["sk-ant-api", "sk-ant-admin", "sk-ant-sid"]

[[rules]]
id = "zerg-url-password"
description = "URL with an embedded password (database, broker or service credentials)"
regex = '''(?i)\b[a-z][a-z0-9+.\-]{1,30}://[^\s:/?#@'"\x60]{1,64}:([^\s/?#@'"\x60$<>{}]{6,128})@[a-z0-9.\-\[\]]+'''
entropy = 3.0
keywords = ["://"]
[[rules.allowlists]]
description = "placeholders and local-development defaults, not secrets"
regexes = ['''(?i)^(?:password|passwd|secret|changeme|example|postgres|mysql|docker|xxxxxx+|\*+|<[^>]*>|%[a-z_]+%)$''']

[[rules]]
id = "zerg-azure-storage-key"
description = "Azure storage account key (connection string AccountKey)"
regex = '''(?i)AccountKey\s*=\s*([A-Za-z0-9+/]{86}==)'''
keywords = ["accountkey"]

[[rules]]
id = "zerg-aws-secret-access-key"
description = "AWS secret access key"
regex = '''(?i)aws.{0,20}?(?:secret|private).{0,20}?['"\s:=]{1,5}([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+]|$)'''
entropy = 3.5
keywords = ["aws"]
`

// Finding is one suspected secret. It never holds the secret itself: only
// where it is, which rule matched and a redacted hint.
type Finding struct {
	RuleID      string `json:"rule_id"`
	Description string `json:"description"`
	File        string `json:"file"`
	// Line is 1-based in the scanned file (the new file for a diff); 0 means
	// the whole file matched (a rule on the file name alone).
	Line int `json:"line"`
	// Redacted is at most the first 4 characters of the secret and "…", or
	// just "…" for short secrets.
	Redacted string `json:"redacted"`
	// Fingerprint is "sha256:" and the hex SHA-256 of the secret; putting it in
	// .zerg/secrets-allow allows that exact value. It says nothing usable about
	// a random key; like any hash, it would confirm a guess of a weak password.
	Fingerprint string `json:"fingerprint"`
}

// String is the one-line report: "path:line: rule-id: description (redacted)".
func (f Finding) String() string {
	return fmt.Sprintf("%s:%d: %s: %s (%s)", f.File, f.Line, f.RuleID, f.Description, f.Redacted)
}

// Scanner finds secrets in files and diffs with gitleaks' default rules plus
// zerg's own. Build one with NewScanner at start-up and share it: it is safe
// for concurrent use.
type Scanner struct {
	// pool holds gitleaks detectors. A detector keeps mutable state
	// (counters, findings of source scans), so each scan borrows one for
	// itself; they share one read-only compiled config.
	pool  chan *detect.Detector
	allow *Allowlist
	rules int
	empty emptyFiles
}

// emptyFiles is what the rules can find in an empty file: only what its
// name matches (a rule with a path), unless some rule's regexp matches
// nothing at all. gitleaks checks every name against its allowlist's
// regexps first, which for a worker that writes thousands of empty files
// with long names costs a minute of CPU; the few rules with a path are
// cheap.
type emptyFiles struct {
	paths []*regexp.Regexp
	scan  bool // a rule's regexp matches the empty text: scan them all
}

func newEmptyFiles(rules map[string]config.Rule) emptyFiles {
	var e emptyFiles
	for _, r := range rules {
		if r.Regex != nil && r.Regex.MatchString("") {
			e.scan = true
		}
		if r.Path != nil {
			e.paths = append(e.paths, r.Path)
		}
	}
	return e
}

// mayFind reports whether the rules may find anything in an empty file of
// this name.
func (e emptyFiles) mayFind(path string) bool {
	return e.scan || slices.ContainsFunc(e.paths, func(re *regexp.Regexp) bool { return re.MatchString(path) })
}

var (
	// silenceOnce replaces gitleaks' global logger, which writes to stderr and
	// at trace level would print secrets, with a disabled one.
	silenceOnce sync.Once
	// configMu serialises config loading because gitleaks' default loader
	// uses viper's global instance; we use a private one, but other code in
	// the process might not.
	configMu sync.Mutex
)

func silenceGitleaks() {
	silenceOnce.Do(func() { logging.Logger = zerolog.Nop() })
}

// NewScanner compiles the rules (about 230; tens of milliseconds) and returns
// a scanner with an empty allowlist.
func NewScanner() (*Scanner, error) { return newScanner(zergRules) }

// newScanner builds a scanner with gitleaks' default rules plus extra (TOML
// rules); tests pass "" to measure gitleaks alone.
func newScanner(extra string) (*Scanner, error) {
	silenceGitleaks()
	cfg, err := loadConfig(extra)
	if err != nil {
		return nil, fmt.Errorf("load secret scanning rules: %w", err)
	}
	n := runtime.GOMAXPROCS(0)
	s := &Scanner{pool: make(chan *detect.Detector, n), allow: &Allowlist{}, rules: len(cfg.Rules), empty: newEmptyFiles(cfg.Rules)}
	for range n {
		d := detect.NewDetector(cfg)
		// Inline "gitleaks:allow" comments are not honoured: a worker could
		// add one next to the secret it writes. False positives go to
		// .zerg/secrets-allow, which the reviewer controls.
		d.IgnoreGitleaksAllow = true
		// Decode base64, hex and percent-encoded text like the gitleaks CLI.
		d.MaxDecodeDepth = 5
		s.pool <- d
	}
	return s, nil
}

func loadConfig(extra string) (config.Config, error) {
	configMu.Lock()
	defer configMu.Unlock()
	v := viper.New()
	v.SetConfigType("toml")
	if err := v.ReadConfig(strings.NewReader(config.DefaultConfig + "\n" + extra)); err != nil {
		return config.Config{}, err
	}
	var vc config.ViperConfig
	if err := v.Unmarshal(&vc); err != nil {
		return config.Config{}, err
	}
	return vc.Translate()
}

// Rules is the number of rules the scanner applies.
func (s *Scanner) Rules() int { return s.rules }

// WithAllowlist returns a scanner that drops the findings a allows. It shares
// the compiled rules with s, so it is cheap; s itself is unchanged.
func (s *Scanner) WithAllowlist(a *Allowlist) *Scanner {
	if a == nil {
		a = &Allowlist{}
	}
	return &Scanner{pool: s.pool, allow: a, rules: s.rules, empty: s.empty}
}

// ScanFile scans the whole content of one file. path is reported in the
// findings and matched against the allowlist; use the path relative to the
// repository root. Binary detection and size limits are the caller's choice.
func (s *Scanner) ScanFile(path string, content []byte) []Finding {
	return s.scan(path, string(content), nil)
}

// ScanDiff scans a unified diff (git diff output) and reports only secrets on
// added lines, with the path and line number in the new file. Removed and
// context lines are ignored: deleting a secret must not be blocked.
func (s *Scanner) ScanDiff(diff string) []Finding {
	var out []Finding
	for _, f := range parseDiff(diff) {
		out = append(out, s.scan(f.path, f.text(), f.lines)...)
	}
	return out
}

// scan runs the rules over text. lines maps 0-based line indexes of text to
// reported line numbers; nil means index+1.
func (s *Scanner) scan(path, text string, lines []int) []Finding {
	if text == "" && (path == "" || !s.empty.mayFind(path)) {
		return nil
	}
	d := <-s.pool
	// gitleaks v8 scans one fragment only through DetectContext, whose
	// parameter type is the deprecated alias; v9 renames it.
	raw := d.DetectContext(context.Background(), detect.Fragment{Raw: text, FilePath: path}) //nolint:staticcheck // SA1019: the only single-fragment API in v8
	s.pool <- d

	var out []Finding
	for i := range raw {
		r := &raw[i]
		line := 0
		pathOnly := r.Secret == "" && strings.HasPrefix(r.Match, "file detected: ")
		if !pathOnly {
			line = r.StartLine + 1
			if lines != nil {
				if r.StartLine >= 0 && r.StartLine < len(lines) {
					line = lines[r.StartLine]
				} else {
					line = 0
				}
			}
		}
		secret := r.Secret
		if secret == "" {
			secret = r.Match
		}
		f := Finding{
			RuleID:      r.RuleID,
			Description: r.Description,
			File:        path,
			Line:        line,
			Redacted:    redact(r.Secret),
			Fingerprint: fingerprint(secret),
		}
		out = append(out, f)
		wipe(r)
	}
	// Deduplicate first, so allowing the rule a finding is reported under
	// also drops the other rules' matches of the same secret.
	out = dedupe(out)
	kept := out[:0]
	for _, f := range out {
		if !s.allow.allows(f) {
			kept = append(kept, f)
		}
	}
	return kept
}

// wipe drops gitleaks' copies of the secret so a finding kept by mistake
// (logged with %+v, say) cannot carry it.
func wipe(r *report.Finding) {
	r.Secret, r.Match, r.Line, r.Fragment = "", "", "", nil
}

// dedupe keeps one finding per file, line and secret: several rules often
// match one key (gitleaks' own Anthropic rule and ours, a specific rule and
// generic-api-key). The most specific rule wins.
func dedupe(fs []Finding) []Finding {
	if len(fs) < 2 {
		return fs
	}
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return rulePriority(a.RuleID) < rulePriority(b.RuleID)
	})
	out := fs[:0]
	seen := map[string]bool{}
	for _, f := range fs {
		k := f.File + "\x00" + strconv.Itoa(f.Line) + "\x00" + f.Fingerprint
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, f)
	}
	return out
}

// rulePriority orders rules from specific (gitleaks' own named rules) to
// catch-all (ours, then generic-api-key).
func rulePriority(id string) int {
	switch {
	case id == "generic-api-key":
		return 2
	case strings.HasPrefix(id, "zerg-"):
		return 1
	}
	return 0
}

// redact returns a hint short enough to identify a key among several without
// revealing it: n/8 leading characters, at most 4, then "…".
func redact(secret string) string {
	n := min(utf8.RuneCountInString(secret)/8, 4)
	if n == 0 {
		return "…"
	}
	i := 0
	for range n {
		_, size := utf8.DecodeRuneInString(secret[i:])
		i += size
	}
	return secret[:i] + "…"
}

func fingerprint(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// diffFile is the added lines of one file in a diff.
type diffFile struct {
	path  string
	added []string
	lines []int // new-file line number of each added line
}

// text joins the added lines; runs that were not adjacent in the file end up
// adjacent here, which can only make a multi-line rule match more, not less.
func (f *diffFile) text() string {
	if len(f.added) == 0 {
		return ""
	}
	return strings.Join(f.added, "\n") + "\n"
}

// parseDiff extracts added lines per file from unified diff text. Hunk
// headers give the counts, so a "+++" or "diff --git" line inside a hunk is
// content, not a header.
func parseDiff(diff string) []*diffFile {
	var (
		files     []*diffFile
		cur       *diffFile
		inHunk    bool
		oldLeft   int
		newLeft   int
		newLine   int
		pathFrom  string // the "diff --git" header's b/ path, for files without ---/+++ lines
		scan      = bufio.NewScanner(strings.NewReader(diff))
		startFile = func(p string) {
			cur = &diffFile{path: p}
			files = append(files, cur)
		}
	)
	scan.Buffer(make([]byte, 0, 64*1024), 64<<20)
	for scan.Scan() {
		l := scan.Text()
		if inHunk {
			switch {
			case strings.HasPrefix(l, "+"):
				if cur != nil {
					cur.added = append(cur.added, l[1:])
					cur.lines = append(cur.lines, newLine)
				}
				newLine++
				newLeft--
			case strings.HasPrefix(l, "-"):
				oldLeft--
			case strings.HasPrefix(l, `\`):
				// "\ No newline at end of file"
			default: // context; some tools strip the leading space of empty lines
				newLine++
				oldLeft--
				newLeft--
			}
			if oldLeft <= 0 && newLeft <= 0 {
				inHunk = false
			}
			continue
		}
		switch {
		case strings.HasPrefix(l, "diff --git "):
			cur, pathFrom = nil, gitHeaderPath(l)
		case strings.HasPrefix(l, "+++ "):
			p := diffPath(strings.TrimPrefix(l, "+++ "))
			if p == "" { // deleted file: nothing added
				cur = nil
				continue
			}
			startFile(p)
		case strings.HasPrefix(l, "Binary files ") && cur == nil:
			// No content to scan, but rules on the file name alone (a .p12
			// key store) still apply to an added binary file.
			if strings.HasSuffix(l, " and /dev/null differ") {
				continue
			}
			p := pathFrom
			if p == "" {
				if i := strings.LastIndex(l, " and "); i >= 0 {
					p = diffPath(strings.TrimSuffix(l[i+len(" and "):], " differ"))
				}
			}
			if p != "" {
				startFile(p)
			}
		case strings.HasPrefix(l, "@@ "):
			o, n, start, ok := parseHunk(l)
			if !ok {
				continue
			}
			if cur == nil && pathFrom != "" {
				startFile(pathFrom)
			}
			oldLeft, newLeft, newLine, inHunk = o, n, start, o > 0 || n > 0
		}
	}
	return files
}

// parseHunk reads "@@ -a[,b] +c[,d] @@": it returns the old and new line
// counts and the first new line number.
func parseHunk(l string) (oldN, newN, start int, ok bool) {
	f := strings.Fields(l)
	if len(f) < 3 || !strings.HasPrefix(f[1], "-") || !strings.HasPrefix(f[2], "+") {
		return 0, 0, 0, false
	}
	rng := func(s string) (first, count int, ok bool) {
		a, b, has := strings.Cut(s, ",")
		first, err := strconv.Atoi(a)
		if err != nil {
			return 0, 0, false
		}
		count = 1
		if has {
			if count, err = strconv.Atoi(b); err != nil {
				return 0, 0, false
			}
		}
		return first, count, true
	}
	_, oldN, ok1 := rng(f[1][1:])
	start, newN, ok2 := rng(f[2][1:])
	return oldN, newN, start, ok1 && ok2
}

// diffPath turns "b/dir/file" or a quoted "\"b/dir/\\303\\251\"" into
// "dir/file"; "/dev/null" becomes "".
func diffPath(s string) string {
	s = strings.TrimRight(s, "\t\r")
	if i := strings.IndexByte(s, '\t'); i >= 0 && !strings.HasPrefix(s, `"`) {
		s = s[:i] // "+++ b/x\t2024-01-01 …" from non-git diff tools
	}
	if strings.HasPrefix(s, `"`) {
		if u, err := strconv.Unquote(s); err == nil {
			s = u
		}
	}
	if s == "/dev/null" {
		return ""
	}
	for _, p := range []string{"b/", "w/", "i/"} {
		if strings.HasPrefix(s, p) {
			return s[len(p):]
		}
	}
	return s
}

// gitHeaderPath takes the new path of "diff --git a/x b/x" for the rare
// file sections without ---/+++ lines. Unquoted paths with " b/" inside are
// ambiguous, so the second half is taken only when both halves agree.
func gitHeaderPath(l string) string {
	rest := strings.TrimPrefix(l, "diff --git ")
	if strings.HasPrefix(rest, `"`) {
		return ""
	}
	n := len(rest)
	if n%2 == 1 {
		a, b := rest[:n/2], rest[n/2+1:]
		if strings.HasPrefix(a, "a/") && strings.HasPrefix(b, "b/") && a[2:] == b[2:] {
			return b[2:]
		}
	}
	return ""
}

// Allowlist holds the accepted false positives of one repository, read from
// .zerg/secrets-allow. Each non-blank line that is not a "#" comment is one of:
//
//	sha256:HEX               that exact secret value, anywhere (the finding's fingerprint)
//	PATH-GLOB RULE-ID        that rule in the files matching the doublestar glob
//	PATH-GLOB *              every rule in those files
//
// Globs are relative to the repository root ("testdata/**", "docs/*.md").
// The zero value allows nothing. It is read-only after parsing.
type Allowlist struct {
	fingerprints map[string]bool
	paths        []allowPath
}

type allowPath struct{ glob, rule string }

// ErrBadAllowlist marks a secrets-allow file that cannot be used.
var ErrBadAllowlist = errors.New("bad secrets allowlist")

// ParseAllowlist reads an allowlist. name is used in error messages.
func ParseAllowlist(name string, r io.Reader) (*Allowlist, error) {
	a := &Allowlist{fingerprints: map[string]bool{}}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if i := strings.Index(line, " #"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		f := strings.Fields(line)
		switch {
		case len(f) == 1 && strings.HasPrefix(f[0], "sha256:"):
			h := strings.ToLower(strings.TrimPrefix(f[0], "sha256:"))
			if _, err := hex.DecodeString(h); err != nil || len(h) != 64 {
				return nil, fmt.Errorf("%w: %s:%d: a fingerprint is sha256: and 64 hex digits", ErrBadAllowlist, name, n)
			}
			a.fingerprints["sha256:"+h] = true
		case len(f) == 2:
			glob := strings.TrimPrefix(filepath.ToSlash(f[0]), "./")
			if !doublestar.ValidatePattern(glob) || strings.HasPrefix(glob, "/") || strings.Contains("/"+glob+"/", "/../") {
				return nil, fmt.Errorf("%w: %s:%d: %q is not a valid relative path glob", ErrBadAllowlist, name, n, f[0])
			}
			a.paths = append(a.paths, allowPath{glob: glob, rule: f[1]})
		default:
			return nil, fmt.Errorf("%w: %s:%d: want \"sha256:HEX\" or \"PATH-GLOB RULE-ID\"", ErrBadAllowlist, name, n)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return a, nil
}

// LoadAllowlist reads root/.zerg/secrets-allow; a missing file is an empty
// allowlist.
func LoadAllowlist(root string) (*Allowlist, error) {
	f, err := os.Open(filepath.Join(root, filepath.FromSlash(SecretsAllowFile)))
	if errors.Is(err, fs.ErrNotExist) {
		return &Allowlist{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", SecretsAllowFile, err)
	}
	defer f.Close()
	return ParseAllowlist(SecretsAllowFile, f)
}

// Len is the number of entries.
func (a *Allowlist) Len() int {
	if a == nil {
		return 0
	}
	return len(a.fingerprints) + len(a.paths)
}

func (a *Allowlist) allows(f Finding) bool {
	if a == nil {
		return false
	}
	if a.fingerprints[f.Fingerprint] {
		return true
	}
	p := filepath.ToSlash(f.File)
	for _, e := range a.paths {
		if e.rule != "*" && e.rule != f.RuleID {
			continue
		}
		if ok, _ := doublestar.Match(e.glob, p); ok {
			return true
		}
	}
	return false
}
