package dashboard

import (
	"bufio"
	"os"
	"strings"

	"github.com/zergrush/zerg/internal/attempt"
	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/diagnose"
	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/runstate"
)

// Bounds of what one task page carries: a worker decides how much it
// writes, the page must stay a page.
const (
	maxDiff      = 512 << 10
	maxVerify    = 64 << 10
	maxToolCalls = 400
	maxInput     = 2000
	maxResult    = 600
)

// TaskPage is a task with every attempt zerg recorded of it. The records
// are redacted on disk already; the page escapes every string it shows.
type TaskPage struct {
	Feature  string            `json:"feature"`
	Task     runstate.TaskView `json:"task"`
	Title    string            `json:"title,omitempty"`
	Deps     []string          `json:"dependencies"`
	Attempts []AttemptPage     `json:"attempts"`
}

// AttemptPage is one attempt: its outcome from the log, the worker's tool
// calls from stream.jsonl, the diff and the verification output.
type AttemptPage struct {
	Number    int                  `json:"number"`
	Class     string               `json:"class,omitempty"` // empty while it runs
	Reason    string               `json:"reason,omitempty"`
	Detail    string               `json:"detail,omitempty"`
	CostUSD   float64              `json:"cost_usd"`
	Duration  int64                `json:"duration_ms"`
	Changed   []string             `json:"changed,omitempty"`
	Diagnosis *diagnose.Hypothesis `json:"diagnosis,omitempty"`
	// RefusedWrites are the writes the worker's hook refused: none is in
	// the attempt's work, whatever the worker said.
	RefusedWrites []attempt.RefusedWrite `json:"refused_writes,omitempty"`
	ToolCalls     []ToolCall             `json:"tool_calls"`
	Said          []string               `json:"said,omitempty"`
	Diff          string                 `json:"diff"`
	Verify        string                 `json:"verify"`
	Truncated     bool                   `json:"truncated,omitempty"`
}

// ToolCall is one tool use of the worker and what came back.
type ToolCall struct {
	Name   string `json:"name"`
	Input  string `json:"input"`
	Result string `json:"result,omitempty"`
	Error  bool   `json:"error,omitempty"`
}

// taskPage reads a task of a run. ok is false when the run has no such
// task: only a task of the view names a directory to read.
func taskPage(p run.Paths, id string) (TaskPage, bool, error) {
	v, _, err := run.Inspect(p)
	if err != nil {
		return TaskPage{}, false, err
	}
	page := TaskPage{Feature: v.Feature, Deps: []string{}, Attempts: []AttemptPage{}}
	found := false
	for _, t := range v.Tasks {
		if t.ID == id {
			page.Task, found = t, true
		}
	}
	if !found {
		return TaskPage{}, false, nil
	}
	if g := graphOf(p); g != nil {
		for _, t := range g.Tasks {
			if t.ID == id {
				page.Title = t.Title
				page.Deps = append(page.Deps, t.Dependencies...)
			}
		}
	}
	evs, err := eventlog.Read(p.Events)
	if err != nil {
		return TaskPage{}, false, err
	}
	finished := map[int]runstate.AttemptFinished{}
	for _, e := range evs {
		if e.Type == runstate.EvAttemptFinished && e.Task == id {
			var d runstate.AttemptFinished
			if e.Decode(&d) == nil {
				finished[e.Attempt] = d
			}
		}
	}
	nums, _ := p.Attempts(id)
	for _, n := range nums {
		a := AttemptPage{Number: n, ToolCalls: []ToolCall{}}
		if d, ok := finished[n]; ok {
			a.Class, a.Reason, a.Detail, a.CostUSD, a.Duration = string(d.Class), d.Reason, d.Detail, d.CostUSD, d.DurationMS
			a.Changed, a.Diagnosis, a.RefusedWrites = d.Changed, d.Diagnosis, d.RefusedWrites
		}
		rec := p.Attempt(id, n)
		a.ToolCalls, a.Said, a.Truncated = toolCalls(rec.Stream())
		var cut bool
		a.Diff, cut = readCapped(rec.Diff(), maxDiff, false)
		a.Truncated = a.Truncated || cut
		a.Verify, cut = readCapped(rec.Verify(), maxVerify, true)
		a.Truncated = a.Truncated || cut
		page.Attempts = append(page.Attempts, a)
	}
	return page, true, nil
}

// toolCalls reads a worker's stream: each tool use with its result, and
// what the worker said. The stream may still be written: a torn last line
// parses as no event and is left out.
func toolCalls(path string) (calls []ToolCall, said []string, truncated bool) {
	calls = []ToolCall{}
	f, err := os.Open(path)
	if err != nil {
		return calls, nil, false
	}
	defer f.Close()
	byID := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), claude.MaxLineSize)
	for sc.Scan() {
		ev := claude.ParseLine(sc.Bytes())
		switch {
		case ev.Assistant != nil:
			for _, b := range ev.Assistant.Message.Content {
				switch b.Type {
				case "tool_use":
					if len(calls) >= maxToolCalls {
						truncated = true
						continue
					}
					byID[b.ID] = len(calls)
					calls = append(calls, ToolCall{Name: b.Name, Input: cut(string(b.Input), maxInput)})
				case "text":
					if t := strings.TrimSpace(b.Text); t != "" {
						said = append(said, cut(t, maxResult))
					}
				}
			}
		case ev.User != nil:
			for _, b := range ev.User.Message.Content {
				if i, ok := byID[b.ToolUseID]; ok && b.Type == "tool_result" {
					calls[i].Result, calls[i].Error = cut(claude.ToolResultDisplay(b.Content), maxResult), b.IsError
				}
			}
		}
	}
	return calls, said, truncated
}

// readCapped reads a record, at most max bytes of it: its start, or its
// end when tail (a verification's last lines say why it failed).
func readCapped(path string, max int64, tail bool) (string, bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", false
	}
	size := fi.Size()
	off := int64(0)
	if size > max && tail {
		off = size - max
	}
	b := make([]byte, min(size, max))
	n, _ := f.ReadAt(b, off)
	return strings.ToValidUTF8(string(b[:n]), "�"), size > max
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
