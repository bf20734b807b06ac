package journey

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Files review writes in the spec dir.
const (
	ReviewFile     = "review.md"
	ReviewJSONFile = "review.json"
)

// Severity of a review finding, from worst to least.
type Severity string

const (
	Blocking Severity = "blocking" // must be fixed before merging: zerg merge refuses without --force
	Major    Severity = "major"
	Minor    Severity = "minor"
	Info     Severity = "info"
)

// Severities in order, worst first.
var Severities = []Severity{Blocking, Major, Minor, Info}

// Rank orders severities: 0 is the worst; unknown is past the last.
func (s Severity) Rank() int {
	if i := slices.Index(Severities, s); i >= 0 {
		return i
	}
	return len(Severities)
}

// ParseSeverity reads a severity as a model may write it.
func ParseSeverity(s string) (Severity, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "blocking", "blocker", "critical":
		return Blocking, true
	case "major", "high":
		return Major, true
	case "minor", "medium", "low":
		return Minor, true
	case "info", "note", "nit":
		return Info, true
	}
	return "", false
}

// Finding is one thing the review found.
type Finding struct {
	Severity Severity `json:"severity"`
	// Source is the check that found it: gate, secrets, rules or claude.
	Source string `json:"source"`
	Title  string `json:"title"`
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// Summary is review.json: the machine-readable result of a review.
type Summary struct {
	Version int    `json:"version"`
	Feature string `json:"feature"`
	Branch  string `json:"branch"`
	// Head is the integration commit reviewed: zerg merge only heeds a
	// review of the head it would merge.
	Head string    `json:"head"`
	Base string    `json:"base"`
	Time time.Time `json:"time"`
	// Counts has every severity, zero included.
	Counts   map[Severity]int `json:"counts"`
	Blocking bool             `json:"blocking"`
	Findings []Finding        `json:"findings"`
	// Checks says what ran: gate names, "secrets", "rules", "claude".
	Checks  []string `json:"checks"`
	CostUSD float64  `json:"cost_usd"`
}

// SummaryVersion is the review.json format version.
const SummaryVersion = 1

// Aggregate sorts the findings worst first (keeping the order of each
// severity: gates, secrets, rules, then the model's), counts them, and sets
// Blocking.
func Aggregate(s *Summary) {
	slices.SortStableFunc(s.Findings, func(a, b Finding) int {
		return a.Severity.Rank() - b.Severity.Rank()
	})
	s.Counts = map[Severity]int{}
	for _, sev := range Severities {
		s.Counts[sev] = 0
	}
	for _, f := range s.Findings {
		s.Counts[f.Severity]++
	}
	s.Blocking = s.Counts[Blocking] > 0
	if s.Findings == nil {
		s.Findings = []Finding{}
	}
	if s.Checks == nil {
		s.Checks = []string{}
	}
}

// modelFindings is the JSON the review session is asked to answer with.
type modelFindings struct {
	Findings []struct {
		Severity string `json:"severity"`
		Title    string `json:"title"`
		File     string `json:"file"`
		Line     int    `json:"line"`
		Detail   string `json:"detail"`
	} `json:"findings"`
}

// ParseModelFindings reads the review session's answer: a JSON object
// {"findings": [...]}, alone or in a fenced block among prose. A finding
// with an unknown severity is kept as major, so a typo never hides one.
func ParseModelFindings(text string) ([]Finding, error) {
	start, end := strings.Index(text, "{"), strings.LastIndex(text, "}")
	if start < 0 || end < start {
		return nil, errors.New("the answer holds no JSON object")
	}
	var mf modelFindings
	if err := json.Unmarshal([]byte(text[start:end+1]), &mf); err != nil {
		return nil, fmt.Errorf("the answer's JSON: %v", err)
	}
	out := []Finding{}
	for _, f := range mf.Findings {
		sev, ok := ParseSeverity(f.Severity)
		title := strings.TrimSpace(f.Title)
		if !ok {
			sev = Major
			title = fmt.Sprintf("%s (severity %q read as major)", title, f.Severity)
		}
		if title == "" {
			title = "(untitled)"
		}
		out = append(out, Finding{Severity: sev, Source: "claude", Title: title, File: f.File, Line: f.Line, Detail: strings.TrimSpace(f.Detail)})
	}
	return out, nil
}

// ReviewPrompt is the review session's prompt: the diff (cut at maxDiff
// bytes; the session can read the files) and the answer format.
func ReviewPrompt(feature, base, head, diff string, rules []string) string {
	const maxDiff = 60000
	cut := ""
	if len(diff) > maxDiff {
		diff, cut = diff[:maxDiff], "\n…(diff cut; read the files for the rest)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Review %s: review the changes of the integration branch against its base.\n\n", feature)
	fmt.Fprintf(&b, "Your working directory is the branch's head (%s); the base is %s. ", short(head), short(base))
	b.WriteString("Look for bugs, security problems, missing tests and departures from the design (.zerg/specs may hold it). ")
	if len(rules) > 0 {
		fmt.Fprintf(&b, "Security rules that apply to the languages touched: %s. ", strings.Join(rules, ", "))
	}
	b.WriteString(`Answer with one JSON object and nothing else:
{"findings": [{"severity": "blocking|major|minor|info", "title": "...", "file": "path", "line": 0, "detail": "..."}]}
blocking means the branch must not be merged as it is. An empty list means nothing to report.

The diff:
`)
	b.WriteString(diff)
	b.WriteString(cut)
	return b.String()
}

// ReviewSystem is appended to the review session's system prompt.
const ReviewSystem = `You are the code-review step of zerg. You may read and search the repository; you cannot write files or run commands.
Be specific: name the file and line, say why it matters and what to do.`

// RenderMarkdown is review.md.
func RenderMarkdown(s *Summary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Review of %s\n\n", s.Feature)
	fmt.Fprintf(&b, "Branch `%s` at `%s`, against base `%s`, on %s.\n\n", s.Branch, short(s.Head), short(s.Base), s.Time.UTC().Format(time.RFC3339))
	verdict := "no blocking finding: ready to merge (`zerg merge " + s.Feature + " --into BRANCH`)"
	if s.Blocking {
		verdict = "**blocking findings**: `zerg merge` refuses this head until they are fixed and the branch is reviewed again (or `--force`)"
	}
	fmt.Fprintf(&b, "Verdict: %s.\n\n", verdict)
	var counts []string
	for _, sev := range Severities {
		counts = append(counts, fmt.Sprintf("%s %d", sev, s.Counts[sev]))
	}
	fmt.Fprintf(&b, "Findings: %s. Checks: %s.\n", strings.Join(counts, ", "), strings.Join(s.Checks, ", "))
	for _, sev := range Severities {
		if s.Counts[sev] == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n## %s\n\n", titleCase(string(sev)))
		for _, f := range s.Findings {
			if f.Severity != sev {
				continue
			}
			where := ""
			if f.File != "" {
				where = " (`" + f.File
				if f.Line > 0 {
					where += fmt.Sprintf(":%d", f.Line)
				}
				where += "`)"
			}
			fmt.Fprintf(&b, "- [%s] %s%s\n", f.Source, f.Title, where)
			if d := strings.TrimSpace(f.Detail); d != "" {
				for _, l := range strings.Split(d, "\n") {
					fmt.Fprintf(&b, "  %s\n", l)
				}
			}
		}
	}
	return b.String()
}

func titleCase(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// WriteReview writes review.md and review.json into specDir.
func WriteReview(specDir string, s *Summary) error {
	if err := os.MkdirAll(specDir, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := writeAtomic(filepath.Join(specDir, ReviewFile), []byte(RenderMarkdown(s))); err != nil {
		return err
	}
	return writeAtomic(filepath.Join(specDir, ReviewJSONFile), append(data, '\n'))
}

// LoadReview reads review.json from specDir; nil, nil when there is none.
func LoadReview(specDir string) (*Summary, error) {
	data, err := os.ReadFile(filepath.Join(specDir, ReviewJSONFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var s Summary
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("%s: %v", filepath.Join(specDir, ReviewJSONFile), err)
	}
	return &s, nil
}

// MergeBlock is the merge decision: the latest review blocks merging head
// when it reviewed that very head and found something blocking. A review of
// another head (the branch moved on) or no review does not block: zerg
// merge never requires a review, it heeds one.
func MergeBlock(latest *Summary, head string) bool {
	return latest != nil && latest.Head == head && latest.Blocking
}

// writeAtomic writes data to path through a temporary file and a rename.
func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// CopyDrafts copies files (names in DraftDir of workdir) into specDir,
// each atomically; a missing draft is an error naming it.
func CopyDrafts(workdir, specDir string, names ...string) error {
	datas := make([][]byte, len(names))
	for i, n := range names {
		d, err := os.ReadFile(DraftPath(workdir, n))
		if err != nil {
			return fmt.Errorf("the session wrote no %s", n)
		}
		datas[i] = d
	}
	if err := os.MkdirAll(specDir, 0o755); err != nil {
		return err
	}
	for i, n := range names {
		if err := writeAtomic(filepath.Join(specDir, n), datas[i]); err != nil {
			return err
		}
	}
	return nil
}
