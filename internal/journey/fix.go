package journey

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/zergrush/zerg/internal/spec"
	"github.com/zergrush/zerg/internal/term"
	"github.com/zergrush/zerg/internal/textx"
)

// FixTask is a task zerg fix adds to a feature's graph for review
// findings: it owns the file the findings name, at a level of its own
// after every other task, verified as the tasks that own that file are.
type FixTask struct {
	ID           string
	Title        string
	Description  string
	Level        int
	Dependencies []string
	Create       []string
	Modify       []string
	Verify       string
	// Findings are the numbers of the findings it fixes (1-based, in the
	// order of review.json, which zerg review prints).
	Findings []int
}

// FindingWords names its findings: "finding 1", "findings 1, 3".
func (t FixTask) FindingWords() string {
	if len(t.Findings) == 1 {
		return "finding " + joinInts(t.Findings)
	}
	return "findings " + joinInts(t.Findings)
}

// Doc is the task as the graph document holds it.
func (t FixTask) Doc() map[string]any {
	files := map[string]any{}
	if len(t.Create) > 0 {
		files["create"] = t.Create
	}
	if len(t.Modify) > 0 {
		files["modify"] = t.Modify
	}
	doc := map[string]any{"id": t.ID, "title": t.Title, "description": t.Description, "level": t.Level,
		"files": files, "verification": map[string]any{"command": t.Verify},
		"acceptance_criteria": []string{"the review finding(s) it names no longer apply, and nothing else of the feature changes"}}
	if len(t.Dependencies) > 0 {
		doc["dependencies"] = t.Dependencies
	}
	return doc
}

// FixOptions are what the person adds to the findings.
type FixOptions struct {
	// Files are paths the task owns besides the findings' files (a test
	// to fix with the code); with them every finding goes into one task.
	Files []string
	// Verify replaces the owners' verification.
	Verify string
	// Exists reports whether a path exists at the reviewed head (the task
	// modifies it) or not (it creates it).
	Exists func(path string) bool
	// Protected reports a path no worker may change.
	Protected func(path string) bool
}

// FixProblem is a finding zerg fix cannot turn into a task, and why.
type FixProblem struct {
	Number int
	Why    string
}

// PlanFixes turns findings of review s (their numbers; none: every
// blocking finding) into tasks for graph g: one per file the findings
// name (one for all of them with opts.Files). A finding no worker can fix
// (the review's own, a protected path, one with no file and no
// opts.Files, one no verification would check) is a problem: an error
// when asked for by number, skipped otherwise.
func PlanFixes(s *Summary, numbers []int, g *spec.Graph, opts FixOptions) ([]FixTask, []FixProblem, error) {
	chosen := numbers
	if len(chosen) == 0 {
		for i, f := range s.Findings {
			if f.Severity == Blocking {
				chosen = append(chosen, i+1)
			}
		}
		if len(chosen) == 0 {
			return nil, nil, fmt.Errorf("the review of %s at %s has no blocking finding; name the findings to fix by number", s.Branch, short(s.Head))
		}
	}
	type group struct {
		file string
		nums []int
	}
	var groups []*group
	var problems []FixProblem
	for _, n := range chosen {
		if n < 1 || n > len(s.Findings) {
			return nil, nil, fmt.Errorf("finding %d: the review of %s at %s lists findings 1 to %d", n, s.Branch, short(s.Head), len(s.Findings))
		}
		f := s.Findings[n-1]
		if why := unfixable(f, opts); why != "" {
			if len(numbers) > 0 {
				return nil, nil, fmt.Errorf("finding %d (%s): %s", n, textx.Clip(f.Title, 80), why)
			}
			problems = append(problems, FixProblem{n, why})
			continue
		}
		key := f.File
		if len(opts.Files) > 0 {
			key = ""
		}
		at := slices.IndexFunc(groups, func(g *group) bool { return g.file == key })
		if at < 0 {
			groups = append(groups, &group{file: key})
			at = len(groups) - 1
		}
		groups[at].nums = append(groups[at].nums, n)
	}
	level := 0
	ids := map[string]bool{}
	for _, t := range g.Tasks {
		level = max(level, t.Level)
		ids[t.ID] = true
	}
	var out []FixTask
	for _, gr := range groups {
		// The findings' files, then the person's.
		var owned []string
		for _, n := range gr.nums {
			if f := s.Findings[n-1].File; f != "" && !slices.Contains(owned, f) {
				owned = append(owned, f)
			}
		}
		for _, f := range opts.Files {
			if !slices.Contains(owned, f) {
				owned = append(owned, f)
			}
		}
		t := FixTask{Level: level + 1, Findings: gr.nums, Verify: opts.Verify}
		var verifies []string
		for _, task := range g.Tasks {
			if slices.ContainsFunc(owned, task.Owns) {
				t.Dependencies = append(t.Dependencies, task.ID)
				if task.Verification != nil && task.Verification.Command != "" && !slices.Contains(verifies, task.Verification.Command) {
					verifies = append(verifies, task.Verification.Command)
				}
			}
		}
		if t.Verify == "" {
			if len(verifies) == 0 {
				for _, n := range gr.nums {
					problems = append(problems, FixProblem{n, "no task of the graph verifies " + strings.Join(owned, ", ") + "; pass --verify CMD"})
				}
				if len(numbers) > 0 {
					return nil, nil, fmt.Errorf("finding %d: no task of the graph verifies %s; pass --verify CMD (a command that fails while the finding applies)", gr.nums[0], strings.Join(owned, ", "))
				}
				continue
			}
			t.Verify = strings.Join(verifies, " && ")
		}
		for _, p := range owned {
			if opts.Exists != nil && !opts.Exists(p) {
				t.Create = append(t.Create, p)
			} else {
				t.Modify = append(t.Modify, p)
			}
		}
		t.ID = fixID(gr.nums, ids)
		ids[t.ID] = true
		first := s.Findings[gr.nums[0]-1]
		t.Title = textx.Clip(fmt.Sprintf("Fix review finding %d: %s", gr.nums[0], textx.OneLine(term.Clean(first.Title))), 120)
		if len(gr.nums) > 1 {
			t.Title = textx.Clip(fmt.Sprintf("Fix review findings %s in %s", joinInts(gr.nums), strings.Join(owned, ", ")), 120)
		}
		var d strings.Builder
		fmt.Fprintf(&d, "zerg review of %s at %s found what this task fixes. Fix exactly that, in the files this task owns, and change nothing else.\n", s.Branch, short(s.Head))
		for _, n := range gr.nums {
			f := s.Findings[n-1]
			where := ""
			if f.File != "" {
				where = " in " + f.File
				if f.Line > 0 {
					where += ":" + strconv.Itoa(f.Line)
				}
			}
			fmt.Fprintf(&d, "\nFinding %d (%s, from %s)%s: %s\n", n, f.Severity, f.Source, where, textx.OneLine(term.Clean(f.Title)))
			if det := strings.TrimSpace(term.Clean(f.Detail)); det != "" {
				d.WriteString(det + "\n")
			}
		}
		t.Description = d.String()
		out = append(out, t)
	}
	if len(out) == 0 && len(problems) > 0 {
		return nil, problems, fmt.Errorf("no finding can be made a task: finding %d: %s", problems[0].Number, problems[0].Why)
	}
	return out, problems, nil
}

// unfixable says why no worker can fix finding f, or "".
func unfixable(f Finding, opts FixOptions) string {
	switch {
	case f.Source == "review":
		return "it is about what the review could not read; read that yourself"
	case f.Source == "protected":
		return "it is a protected path, which no worker may change; change it yourself"
	case f.Source == "rules" || f.Severity == Info && f.File == "":
		return "there is nothing to fix"
	case f.File == "" && len(opts.Files) == 0:
		return "it names no file; pass --files PATH for the files the fix needs"
	}
	for _, p := range append([]string{f.File}, opts.Files...) {
		if p != "" && opts.Protected != nil && opts.Protected(p) {
			return p + " is protected: no worker may change it; change it yourself"
		}
	}
	return ""
}

// fixID is fix-N (N the first finding), unique among ids.
func fixID(nums []int, ids map[string]bool) string {
	base := "fix-" + strconv.Itoa(nums[0])
	id := base
	for i := 2; ids[id]; i++ {
		id = fmt.Sprintf("%s-%d", base, i)
	}
	return id
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}
