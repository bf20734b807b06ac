package journey

import (
	"fmt"
	"strings"
)

// RequirementsFile is what plan writes, in DraftDir and then in the spec dir.
const RequirementsFile = "requirements.md"

// PlanSystem is appended to Claude Code's system prompt in plan sessions:
// Socratic discovery, questions before writing.
const PlanSystem = `You are the requirements-discovery step of zerg. Work Socratically: before you write anything,
ask the user the questions that matter (who it is for, what problem it solves, what is in and out of scope,
constraints, edge cases, how success is checked), one small group at a time, and read the repository to ground them.
Only when the user is satisfied, write the requirements to ` + DraftDir + `/` + RequirementsFile + `: goal, users,
functional requirements (numbered), non-functional requirements, out of scope, acceptance criteria, and a final
section "## Open questions" listing what is still undecided (or "None").
You may read and search the repository and write only that one file. You cannot run commands.`

// planBatchSystem is the non-interactive variant: nobody answers questions,
// so they go into the open questions.
const planBatchSystem = `You are the requirements-discovery step of zerg, running without a user to answer.
Read the repository to ground the requirements. Write them to ` + DraftDir + `/` + RequirementsFile + `: goal, users,
functional requirements (numbered), non-functional requirements, out of scope, acceptance criteria, and a final
section "## Open questions" listing every question you would have asked the user (or "None").
You may read and search the repository and write only that one file. You cannot run commands.`

// PlanSession is the non-interactive plan session for an idea.
func PlanSession(feature, workdir, idea, model string, revise bool) Session {
	return Session{
		Name:     "plan",
		Workdir:  workdir,
		Prompt:   PlanPrompt(feature, idea, revise),
		System:   planBatchSystem,
		Tools:    WriterTools,
		Writable: []string{DraftDir + "/" + RequirementsFile},
		Model:    model,
	}
}

// PlanPrompt is the first message of a plan session. Its first line is
// what rehearsal scenarios match.
func PlanPrompt(feature, idea string, revise bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Plan %s: discover the requirements and write %s/%s.\n\n", feature, DraftDir, RequirementsFile)
	if revise {
		fmt.Fprintf(&b, "%s/%s holds the current requirements: read it and revise it.\n\n", DraftDir, RequirementsFile)
	}
	if idea = strings.TrimSpace(idea); idea != "" {
		fmt.Fprintf(&b, "The idea:\n%s\n", idea)
	} else {
		b.WriteString("Ask me what the feature is.\n")
	}
	return b.String()
}

// OpenQuestions returns the items of the "Open questions" section of a
// requirements document (list items, without their marker); "None" counts
// as no question. ok is false when there is no such section.
func OpenQuestions(doc string) (qs []string, ok bool) {
	in := false
	for _, line := range strings.Split(doc, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "#") {
			title := strings.ToLower(strings.TrimSpace(strings.TrimLeft(t, "#")))
			if in {
				break
			}
			in = strings.HasPrefix(title, "open questions")
			ok = ok || in
			continue
		}
		if !in {
			continue
		}
		item, isItem := listItem(t)
		if !isItem {
			// Prose counts only when it asks something.
			if strings.HasSuffix(t, "?") {
				qs = append(qs, t)
			}
			continue
		}
		if item == "" || strings.EqualFold(strings.TrimRight(item, "."), "none") {
			continue
		}
		qs = append(qs, item)
	}
	return qs, ok
}

// listItem strips a Markdown list marker ("- ", "* ", "1. ", "2) ").
func listItem(t string) (string, bool) {
	if strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "* ") {
		return strings.TrimSpace(t[2:]), true
	}
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i > 0 && i < len(t) && (t[i] == '.' || t[i] == ')') {
		return strings.TrimSpace(t[i+1:]), true
	}
	return "", false
}
