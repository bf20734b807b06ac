package run

import (
	"fmt"
	"slices"
	"strings"

	"github.com/zergrush/zerg/internal/runstate"
	"github.com/zergrush/zerg/internal/spec"
)

// DiffGraphs compares the graph a run recorded with the current one: tasks
// added, removed, and changed (naming the fields that differ).
func DiffGraphs(old, cur *spec.Graph) runstate.GraphChanged {
	var d runstate.GraphChanged
	for _, t := range cur.Tasks {
		o := old.Task(t.ID)
		if o == nil {
			d.Added = append(d.Added, t.ID)
			continue
		}
		if f := changedFields(o, t); len(f) > 0 {
			d.Changed = append(d.Changed, runstate.TaskChange{Task: t.ID, Fields: f})
		}
	}
	for _, t := range old.Tasks {
		if cur.Task(t.ID) == nil {
			d.Removed = append(d.Removed, t.ID)
		}
	}
	slices.Sort(d.Added)
	slices.Sort(d.Removed)
	slices.SortFunc(d.Changed, func(a, b runstate.TaskChange) int { return strings.Compare(a.Task, b.Task) })
	return d
}

// changedFields names the fields in which two versions of a task differ.
func changedFields(a, b *spec.Task) []string {
	var f []string
	add := func(name string, differ bool) {
		if differ {
			f = append(f, name)
		}
	}
	add("title", a.Title != b.Title)
	add("description", a.Description != b.Description)
	add("level", a.Level != b.Level)
	add("dependencies", !slices.Equal(sorted(a.Dependencies), sorted(b.Dependencies)))
	add("files.create", !slices.Equal(a.Files.Create, b.Files.Create))
	add("files.modify", !slices.Equal(a.Files.Modify, b.Files.Modify))
	add("files.read", !slices.Equal(a.Files.Read, b.Files.Read))
	add("verification", verificationOf(a) != verificationOf(b))
	add("model", a.Model != b.Model)
	add("context", a.Context != b.Context)
	add("acceptance_criteria", !slices.Equal(a.AcceptanceCriteria, b.AcceptanceCriteria))
	add("budget_usd", a.BudgetUSD != b.BudgetUSD)
	add("max_turns", a.MaxTurns != b.MaxTurns)
	return f
}

func verificationOf(t *spec.Task) string {
	if t.Verification == nil {
		return ""
	}
	return fmt.Sprintf("%s\x00%d", t.Verification.Command, t.Verification.TimeoutSeconds)
}

func sorted(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}

// GraphEditError is a graph change a run cannot take: it would leave merged
// work on the integration branch that the graph no longer describes.
type GraphEditError struct {
	Feature string
	Task    string
	Change  string // "removed", or the changed fields
}

func (e *GraphEditError) Error() string {
	if e.Change == "removed" {
		return fmt.Sprintf("task %s was removed from the task graph of %s, but its work is merged on the integration branch", e.Task, e.Feature)
	}
	return fmt.Sprintf("task %s of %s is merged, but its %s changed in the task graph", e.Task, e.Feature, e.Change)
}

// PlanGraphChange decides whether the run can take a graph change. Added
// tasks run; a task that is not merged yet may change or go (it starts over
// with the new definition, or leaves the run); a merged task may change only
// in its words (title, description, context, criteria). Anything else is
// refused: the integration branch would hold work the graph no longer asks
// for, or lack work it now asks for. The first refusal is returned.
func PlanGraphChange(feature string, d runstate.GraphChanged, st *runstate.State) (runstate.GraphChanged, error) {
	for _, id := range d.Removed {
		if t := st.Task(id); t.Status == runstate.StatusMerged {
			return d, &GraphEditError{Feature: feature, Task: id, Change: "removed"}
		}
	}
	var keep []runstate.TaskChange
	for _, c := range d.Changed {
		material := slices.DeleteFunc(slices.Clone(c.Fields), func(f string) bool {
			return f == "title" || f == "description" || f == "context" || f == "acceptance_criteria"
		})
		t := st.Task(c.Task)
		if t.Status == runstate.StatusMerged {
			if len(material) > 0 {
				return d, &GraphEditError{Feature: feature, Task: c.Task, Change: strings.Join(material, ", ")}
			}
			continue // words only: the merged work stands
		}
		keep = append(keep, c)
	}
	d.Changed = keep
	return d, nil
}
