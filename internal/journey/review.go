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

	"github.com/zergrush/zerg/internal/fsx"
	"github.com/zergrush/zerg/internal/term"
	"github.com/zergrush/zerg/internal/textx"
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
	Counts map[Severity]int `json:"counts"`
	// Blocking is a blocking finding or a review error: zerg merge
	// refuses this head without --force.
	Blocking bool      `json:"blocking"`
	Findings []Finding `json:"findings"`
	// Errors are the checks that could not give a verdict (the review's
	// answer could not be read): the review is not done, and it blocks.
	Errors []string `json:"errors,omitempty"`
	// Parts is how many review sessions shared the diff (each prompt
	// holds at most MaxPromptDiff bytes of it).
	Parts int `json:"parts,omitempty"`
	// Checks says what ran: gate names, "secrets", "rules", "claude".
	Checks  []string `json:"checks"`
	CostUSD float64  `json:"cost_usd"`
}

// SummaryVersion is the review.json format version. 2 added errors and
// parts; a zerg that reads a newer version refuses it rather than miss
// what it cannot read.
const SummaryVersion = 2

// Aggregate sorts the findings worst first (keeping the order of each
// severity: gates, secrets, rules, then the model's), counts them, and sets
// Blocking: a blocking finding or an error.
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
	s.Blocking = s.Counts[Blocking] > 0 || len(s.Errors) > 0
	if s.Findings == nil {
		s.Findings = []Finding{}
	}
	if s.Checks == nil {
		s.Checks = []string{}
	}
}

// ParseModelFindings reads the review session's answer as models send it:
// a JSON object {"findings": [...]} alone, in a fenced block, or among
// prose before and after it. It takes the most severe reading: every
// object of the text with a "findings" key counts (an answer given twice,
// or an object wrapped in another, loses nothing), and a finding whose
// severity is missing or unknown is blocking. An answer that holds no such
// object, or whose findings are not a list of objects, is an error: the
// caller must treat it as a review that did not happen, never as a lesser
// finding.
func ParseModelFindings(text string) ([]Finding, error) {
	var out []Finding
	seen := map[Finding]bool{}
	answers := 0
	for i := 0; i < len(text); i++ {
		if text[i] != '{' {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(text[i:]))
		var obj map[string]json.RawMessage
		if dec.Decode(&obj) != nil {
			continue
		}
		raw, ok := obj["findings"]
		if !ok {
			continue // perhaps a wrapper: the objects inside it are read in turn
		}
		var items []map[string]any
		if err := json.Unmarshal(raw, &items); err != nil || items == nil {
			return nil, fmt.Errorf(`"findings" is not a list of objects (%s)`, textx.Clip(textx.OneLine(string(raw)), 80))
		}
		answers++
		for _, item := range items {
			f := modelFinding(item)
			if !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
		i += int(dec.InputOffset()) - 1
	}
	if answers == 0 {
		if strings.TrimSpace(text) == "" {
			return nil, errors.New("the answer is empty")
		}
		return nil, errors.New(`the answer holds no JSON object with "findings"`)
	}
	if out == nil {
		out = []Finding{}
	}
	return out, nil
}

// modelFinding is one finding of the model's answer, read leniently but
// never milder than written: a missing or unknown severity is blocking.
func modelFinding(item map[string]any) Finding {
	str := func(k string) string {
		switch v := item[k].(type) {
		case nil:
			return ""
		case string:
			return strings.TrimSpace(v)
		default:
			b, _ := json.Marshal(v)
			return string(b)
		}
	}
	// The text goes into review.md, which a person may cat: cleaned here
	// as well as on the way to the terminal.
	f := Finding{Source: "claude", Title: textx.OneLine(term.Clean(str("title"))), File: textx.OneLine(term.Clean(str("file"))),
		Detail: term.Clean(str("detail"))}
	switch v := item["line"].(type) {
	case float64:
		if v > 0 && v < 1e9 {
			f.Line = int(v)
		}
	case string:
		_, _ = fmt.Sscanf(v, "%d", &f.Line) // a line that is not a number stays 0: unknown
	}
	if f.Title == "" {
		f.Title = "(untitled)"
	}
	sev, ok := ParseSeverity(str("severity"))
	if !ok {
		sev = Blocking
		f.Title = fmt.Sprintf("%s (severity %q read as blocking)", f.Title, str("severity"))
	}
	f.Severity = sev
	return f
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
	switch {
	case len(s.Errors) > 0:
		verdict = "**the review is incomplete**: `zerg merge` refuses this head until it is reviewed again (or `--force`)"
	case s.Blocking:
		verdict = "**blocking findings**: `zerg merge` refuses this head until they are fixed and the branch is reviewed again (or `--force`)"
	}
	fmt.Fprintf(&b, "Verdict: %s.\n\n", verdict)
	for _, e := range s.Errors {
		fmt.Fprintf(&b, "Review error: %s.\n\n", e)
	}
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
	if err := fsx.WriteFileAtomicMode(filepath.Join(specDir, ReviewFile), []byte(RenderMarkdown(s)), 0o644); err != nil {
		return err
	}
	return fsx.WriteFileAtomicMode(filepath.Join(specDir, ReviewJSONFile), append(data, '\n'), 0o644)
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
	if s.Version > SummaryVersion {
		return nil, fmt.Errorf("%s: version %d was written by a newer zerg (this one reads up to %d); upgrade zerg or review again", filepath.Join(specDir, ReviewJSONFile), s.Version, SummaryVersion)
	}
	return &s, nil
}

// MergeBlock is the merge decision: the latest review blocks merging head
// when it reviewed that very head and found something blocking, or could
// not finish (an error). A review of another head (the branch moved on) or
// no review does not block: zerg merge never requires a review, it heeds
// one.
func MergeBlock(latest *Summary, head string) bool {
	return latest != nil && latest.Head == head && (latest.Blocking || len(latest.Errors) > 0)
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
		if err := fsx.WriteFileAtomicMode(filepath.Join(specDir, n), datas[i], 0o644); err != nil {
			return err
		}
	}
	return nil
}
