package diagnose

import (
	"fmt"
	"sort"
	"strings"

	"github.com/zergrush/zerg/internal/textx"
)

// Input is one output to diagnose.
type Input struct {
	Output  string `json:"output"`
	Command string `json:"command,omitempty"` // the command that printed it, when known
	Exit    int    `json:"exit"`              // its exit code; -1 when unknown
	// Own are the project's own module names (a Go module path, an npm
	// package's name, a crate's, Python's top-level packages), when
	// known: they tell a wrong import from a missing dependency.
	Own []string `json:"own,omitempty"`
}

// Hypothesis is one pattern the output may show, with the classifier's
// calibrated confidence and the evidence for it.
type Hypothesis struct {
	Pattern    string   `json:"pattern"`
	Class      Class    `json:"class"`
	Confidence float64  `json:"confidence"`
	Evidence   []string `json:"evidence"`
	Fix        string   `json:"fix"`
	// Certain: zerg itself gave the verdict (its checks, the API's answer,
	// a rule that reads an unmistakable phrase), not the classifier.
	Certain bool `json:"certain,omitempty"`
}

// Diagnosis is what Diagnose found: the parsed findings and the patterns,
// most likely first.
type Diagnosis struct {
	Findings   []Finding    `json:"findings"`
	Hypotheses []Hypothesis `json:"hypotheses"`
}

// maxHypotheses bounds Diagnosis.Hypotheses.
const maxHypotheses = 5

// maxOutput bounds what is read of an output: its first and last parts,
// where tools put their summaries and first complaints.
const maxOutput = 64 << 10

// Diagnose parses an output and ranks the patterns it may show.
func Diagnose(in Input) Diagnosis {
	return trained().Diagnose(in)
}

// Diagnose is Diagnose with this model.
func (m *Model) Diagnose(in Input) Diagnosis {
	if len(in.Output) > maxOutput {
		in.Output = in.Output[:maxOutput/4] + "\n…\n" + in.Output[len(in.Output)-3*maxOutput/4:]
	}
	if strings.TrimSpace(in.Output) == "" {
		// Nothing to read: no pattern can be told from silence.
		return silence(in)
	}
	findings := Parse(in.Output)
	feats := Features(in, findings)
	post := posterior(m.logits(feats), m.Temperature)
	order := make([]int, len(post))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return post[order[a]] > post[order[b]] })
	d := Diagnosis{Findings: findings}
	if d.Findings == nil {
		d.Findings = []Finding{}
	}
	for _, c := range order[:min(maxHypotheses, len(order))] {
		p, _ := ByID(m.Patterns[c])
		d.Hypotheses = append(d.Hypotheses, Hypothesis{Pattern: p.ID, Class: p.Class, Confidence: round3(post[c]),
			Evidence: m.evidence(c, feats, findings, in.Output), Fix: p.Fix})
	}
	return d
}

// Verdict is the diagnosis of a failure zerg itself judged (an ownership
// check, the commit scan, the API's answer): no output to read, the pattern
// is certain, the evidence is zerg's own detail.
func Verdict(pattern, detail string) Diagnosis {
	p, ok := ByID(pattern)
	if !ok {
		p, _ = ByID(UnknownPattern)
	}
	h := Hypothesis{Pattern: p.ID, Class: p.Class, Confidence: 1, Evidence: []string{}, Fix: p.Fix, Certain: true}
	if detail != "" {
		h.Evidence = []string{detail}
	}
	return Diagnosis{Findings: []Finding{}, Hypotheses: []Hypothesis{h}}
}

// silence is the diagnosis of an empty output.
func silence(in Input) Diagnosis {
	d := Verdict(UnknownPattern, "the command printed nothing")
	if in.Exit > 0 {
		d.Hypotheses[0].Evidence[0] += fmt.Sprintf(" and exited %d", in.Exit)
	}
	return d
}

// Top is the most likely hypothesis.
func (d Diagnosis) Top() Hypothesis {
	if len(d.Hypotheses) == 0 {
		return Hypothesis{Pattern: UnknownPattern, Class: Unknown}
	}
	return d.Hypotheses[0]
}

// String is the top hypothesis in one line: pattern, confidence, the first
// piece of evidence.
func (h Hypothesis) String() string {
	s := fmt.Sprintf("%s (%.0f%%)", h.Pattern, 100*h.Confidence)
	if len(h.Evidence) > 0 {
		s += ": " + h.Evidence[0]
	}
	return s
}

// evidence is what speaks for pattern c: the output's lines behind its
// most telling features (those far likelier under c than on average), the
// first finding, and the facts a person would point at (a timeout's exit
// status, a test that passed and failed).
func (m *Model) evidence(c int, feats []string, findings []Finding, output string) []string {
	type ev struct {
		score float64
		text  string
	}
	var evs []ev
	for _, f := range feats {
		i := sortSearch(m.Features, f)
		if i < 0 {
			continue
		}
		mean := 0.0
		for k := range m.Patterns {
			mean += m.LogP[k][i]
		}
		mean /= float64(len(m.Patterns))
		score := m.LogP[c][i] - mean
		if score < 1 {
			continue
		}
		text := signalLine(f, output)
		if text == "" {
			text = describeFeature(f)
		}
		if text != "" {
			evs = append(evs, ev{score, text})
		}
	}
	sort.SliceStable(evs, func(a, b int) bool { return evs[a].score > evs[b].score })
	out := []string{}
	seen := map[string]bool{}
	add := func(text string) {
		if len(out) < 3 && text != "" && !seen[text] {
			out = append(out, text)
			seen[text] = true
		}
	}
	if len(findings) > 0 {
		f := findings[0]
		loc := f.File
		if f.Line > 0 {
			loc += fmt.Sprintf(":%d", f.Line)
		}
		add(strings.Join(strings.Fields(strings.Join([]string{loc, f.Test, f.Message}, " ")), " "))
		if f.Message != "" {
			// The finding already quotes the line.
			seen[f.Message] = true
		}
	}
	for _, e := range evs {
		quoted := false
		for s := range seen {
			quoted = quoted || strings.Contains(e.text, s)
		}
		if !quoted {
			add(e.text)
		}
	}
	return out
}

// signalLine is the first line of output a signal feature matched, trimmed.
func signalLine(feature, output string) string {
	name, ok := strings.CutPrefix(feature, "sig.")
	if !ok {
		return ""
	}
	for _, s := range signals() {
		if s.name != name {
			continue
		}
		loc := s.re.FindStringIndex(output)
		if loc == nil {
			return ""
		}
		start := strings.LastIndexByte(output[:loc[0]], '\n') + 1
		end := strings.IndexByte(output[loc[0]:], '\n')
		if end < 0 {
			end = len(output)
		} else {
			end += loc[0]
		}
		return textx.Clip(textx.OneLine(output[start:max(end, loc[1])]), maxMessage)
	}
	return ""
}

func sortSearch(list []string, s string) int {
	i := sort.SearchStrings(list, s)
	if i < len(list) && list[i] == s {
		return i
	}
	return -1
}

func round3(f float64) float64 { return float64(int(f*1000+0.5)) / 1000 }
