package attempt

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/contextpack"
	"github.com/zergrush/zerg/internal/security"
	"github.com/zergrush/zerg/internal/spec"
)

// SpecFiles are the files of a feature's spec directory a pack's sections
// come from, in this order.
var SpecFiles = []string{"requirements.md", "design.md"}

// ContextFiles says where a task's context pack comes from.
type ContextFiles struct {
	// SpecDir holds the feature's requirements.md and design.md.
	SpecDir string
	// RulesDir is the verified security rules cache; "" gives no rules.
	RulesDir string
	// NoRules says why RulesDir is empty, for the pack's record.
	NoRules string
	// Attempts is the run's attempt records directory (<run>/attempts): the
	// dependencies' summaries come from their records there.
	Attempts string
	// Budget is context.token_budget.
	Budget int
}

// LoadContext reads what a task's context pack is chosen from: the spec
// cut into sections, the rule files of the languages of the task's files,
// and its dependencies with their workers' summaries. What cannot be read
// is left out: a missing spec file gives no sections, a rules cache that
// cannot be read no rules (with the reason), a dependency without records
// no summary.
func LoadContext(f ContextFiles, g *spec.Graph, t *spec.Task) contextpack.Input {
	in := contextpack.Input{Task: t, Budget: f.Budget, NoRules: f.NoRules}
	if f.SpecDir != "" {
		for _, name := range SpecFiles {
			if b, err := os.ReadFile(filepath.Join(f.SpecDir, name)); err == nil {
				in.Spec = append(in.Spec, contextpack.Split(name, string(b), len(in.Spec))...)
			}
		}
	}
	if f.RulesDir != "" {
		files, err := security.RulesFor(f.RulesDir, append(t.Files.Owned(), t.Files.Read...))
		if err != nil {
			in.NoRules = "the rules cache cannot be read: " + err.Error()
		} else {
			in.RuleFiles = files
		}
	} else if in.NoRules == "" {
		in.NoRules = "no security rules (security_rules.enabled is false or the rules are not fetched)"
	}
	summaries := map[string]contextpack.Summary{}
	if f.Attempts != "" {
		for _, id := range t.Dependencies {
			if s, ok := DependencySummary(f.Attempts, id); ok {
				summaries[id] = s
			}
		}
	}
	in.Deps = contextpack.DepsOf(g, t, summaries)
	return in
}

// DependencySummary is what the worker of task's committed attempt said at
// its end: the result text of the newest attempt in attempts/<task>/ whose
// worker finished with success (an attempt that fails later, at
// verification, is followed by another one, so the newest such attempt is
// the one zerg committed). false when there is none.
func DependencySummary(attempts, task string) (contextpack.Summary, bool) {
	nums, err := RecordNumbers(attempts, task)
	if err != nil {
		return contextpack.Summary{}, false
	}
	for i := len(nums) - 1; i >= 0; i-- {
		rec := RecordOf(attempts, task, nums[i])
		if text, ok := finalResult(rec.Stream()); ok {
			// The worker's words may claim what its hook refused: zerg's
			// note goes first, so that no cut of the summary loses it.
			if ws := ReadRefused(rec.Dir()); len(ws) > 0 {
				text = fmt.Sprintf("[zerg: the hook refused %s of this task: %s; they are not in its commit, whatever follows says] %s", pluralWrites(len(ws)), ListRefused(ws), text)
			}
			return contextpack.Summary{Text: text, Attempt: nums[i]}, true
		}
	}
	return contextpack.Summary{}, false
}

// finalResult reads the result event of a worker's stream (as zerg logs
// shows it): its text, when the worker ended with success.
func finalResult(stream string) (string, bool) {
	f, err := os.Open(stream)
	if err != nil {
		return "", false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	var last *claude.ResultEvent
	for sc.Scan() {
		if ev := claude.ParseLine(sc.Bytes()); ev.Result != nil {
			last = ev.Result
		}
	}
	if last == nil || last.IsError || last.Subtype != "success" {
		return "", false
	}
	return last.Result, true
}
