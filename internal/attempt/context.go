package attempt

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/zergrush/zerg/internal/security"
	"github.com/zergrush/zerg/internal/spec"
)

// maxSpec bounds the spec text in a prompt: ≈ 4,000 tokens, the context
// budget for the task-specific part.
const maxSpec = 16000

// SpecText is the feature's requirements and design from its spec
// directory, when present, cut to the prompt's budget.
func SpecText(specDir string) string {
	var parts []string
	for _, f := range []string{"requirements.md", "design.md"} {
		if b, err := os.ReadFile(filepath.Join(specDir, f)); err == nil {
			parts = append(parts, strings.TrimSpace(string(b)))
		}
	}
	s := strings.Join(parts, "\n\n")
	if len(s) > maxSpec {
		s = s[:maxSpec] + "\n…(spec truncated)"
	}
	return s
}

// RulesText renders the security rules for the languages of a task's files
// from the verified rules cache, within half of the context budget (in
// tokens). No cache, no rules.
func RulesText(rulesDir string, t *spec.Task, tokenBudget int) string {
	if rulesDir == "" {
		return ""
	}
	files, err := security.RulesFor(rulesDir, append(t.Files.Owned(), t.Files.Read...))
	if err != nil {
		return ""
	}
	text, _ := security.RenderRules(files, tokenBudget*security.CharsPerToken/2)
	return text
}
