package journey

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeModel plays the design sessions: each call writes what rounds[n-1]
// says into the draft dir.
type fakeModel struct {
	t        *testing.T
	rounds   []map[string]string // per session: file → content ("" deletes)
	err      error               // returned by session errAt (1-based)
	errAt    int
	sessions []Session
}

func (f *fakeModel) Run(_ context.Context, s Session) (Answer, error) {
	f.sessions = append(f.sessions, s)
	n := len(f.sessions)
	if n == f.errAt {
		return Answer{}, f.err
	}
	if n > len(f.rounds) {
		return Answer{Text: "nothing to do"}, nil
	}
	for name, content := range f.rounds[n-1] {
		p := DraftPath(s.Workdir, name)
		if content == "" {
			os.Remove(p)
			continue
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			f.t.Fatal(err)
		}
	}
	return Answer{CostUSD: 0.5}, nil
}

const validGraph = `{"feature": "auth", "tasks": [
  {"id": "A", "title": "a", "level": 1, "files": {"create": ["a.txt"]}, "verification": "test -f a.txt"},
  {"id": "B", "title": "b", "level": 2, "dependencies": ["A"], "files": {"create": ["b.txt"]}, "verification": "test -f b.txt"}]}`

// cycle and clash: A and B depend on each other, and both own a.txt at level 1.
const badGraph = `{"feature": "auth", "tasks": [
  {"id": "A", "title": "a", "level": 1, "dependencies": ["B"], "files": {"create": ["a.txt"]}, "verification": "true"},
  {"id": "B", "title": "b", "level": 1, "dependencies": ["A"], "files": {"modify": ["a.txt"]}, "verification": "true"}]}`

func workdir(t *testing.T) string {
	d := t.TempDir()
	if err := os.MkdirAll(filepath.Join(d, DraftDir), 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

func TestDesignValidFirstRound(t *testing.T) {
	m := &fakeModel{t: t, rounds: []map[string]string{{DesignFile: "# d\n", GraphFile: validGraph}}}
	res, err := Design(context.Background(), m, DesignInput{Feature: "auth", Workdir: workdir(t), Requirements: "R", MaxRounds: 3})
	if err != nil || !res.Valid() || len(res.Rounds) != 1 || len(m.sessions) != 1 {
		t.Fatalf("err %v valid %v rounds %d sessions %d", err, res.Valid(), len(res.Rounds), len(m.sessions))
	}
	s := m.sessions[0]
	if !strings.HasPrefix(s.Prompt, "Design auth round 1:") || !strings.Contains(s.Prompt, "\nR") {
		t.Errorf("prompt %q", s.Prompt)
	}
	if strings.Join(s.Writable, ",") != ".zerg-draft/design.md,.zerg-draft/task-graph.json" || strings.Join(s.Tools, ",") != "Read,Glob,Grep,Write,Edit" {
		t.Errorf("writable %v tools %v", s.Writable, s.Tools)
	}
}

// TestDesignRepairs: round 1's errors (a cycle and an ownership clash) are
// all in round 2's prompt; a valid round 2 stops the loop.
func TestDesignRepairs(t *testing.T) {
	m := &fakeModel{t: t, rounds: []map[string]string{{DesignFile: "# d\n", GraphFile: badGraph}, {GraphFile: validGraph}}}
	var seen []int
	res, err := Design(context.Background(), m, DesignInput{Feature: "auth", Workdir: workdir(t), MaxRounds: 3,
		Progress: func(r Round) { seen = append(seen, len(r.Errors)) }})
	if err != nil || !res.Valid() || len(res.Rounds) != 2 {
		t.Fatalf("err %v valid %v rounds %+v", err, res.Valid(), res.Rounds)
	}
	if res.Rounds[0].Valid() || len(seen) != 2 || seen[1] != 0 {
		t.Fatalf("progress %v", seen)
	}
	p := m.sessions[1].Prompt
	if !strings.HasPrefix(p, "Design auth round 2: the task graph is invalid") {
		t.Errorf("round 2 prompt %q", p)
	}
	for _, e := range res.Rounds[0].Errors {
		if !strings.Contains(p, "- "+e.String()+"\n") {
			t.Errorf("round 2 prompt lacks %q", e)
		}
	}
	codes := map[string]bool{}
	for _, e := range res.Rounds[0].Errors {
		codes[e.Code] = true
	}
	if !codes["cycle"] || !codes["ownership-conflict"] {
		t.Errorf("round 1 errors %v", res.Rounds[0].Errors)
	}
}

// TestDesignStopsAtMaxRounds: a graph that stays invalid stops after
// MaxRounds sessions with the last errors.
func TestDesignStopsAtMaxRounds(t *testing.T) {
	m := &fakeModel{t: t, rounds: []map[string]string{{DesignFile: "# d\n", GraphFile: badGraph}}}
	res, err := Design(context.Background(), m, DesignInput{Feature: "auth", Workdir: workdir(t), MaxRounds: 2})
	if err != nil || res.Valid() || len(res.Rounds) != 2 || len(m.sessions) != 2 || len(res.Last().Errors) == 0 {
		t.Fatalf("err %v valid %v rounds %d sessions %d", err, res.Valid(), len(res.Rounds), len(m.sessions))
	}
	// MaxRounds below 1 still runs one round.
	m = &fakeModel{t: t, rounds: []map[string]string{{DesignFile: "# d\n", GraphFile: badGraph}}}
	if res, _ := Design(context.Background(), m, DesignInput{Feature: "auth", Workdir: workdir(t)}); len(res.Rounds) != 1 {
		t.Fatalf("MaxRounds 0: %d rounds", len(res.Rounds))
	}
}

// TestDesignMissingFiles: files the session did not write are errors fed
// back like the graph's; a wrong feature name is one too.
func TestDesignMissingFiles(t *testing.T) {
	wrongFeature := strings.Replace(validGraph, `"feature": "auth"`, `"feature": "other"`, 1)
	m := &fakeModel{t: t, rounds: []map[string]string{{}, {GraphFile: wrongFeature}, {DesignFile: "# d\n", GraphFile: validGraph}}}
	res, err := Design(context.Background(), m, DesignInput{Feature: "auth", Workdir: workdir(t), MaxRounds: 3})
	if err != nil || !res.Valid() || len(res.Rounds) != 3 {
		t.Fatalf("err %v rounds %+v", err, res.Rounds)
	}
	if r1 := res.Rounds[0].Errors; len(r1) != 2 || r1[0].Field != ".zerg-draft/design.md" || r1[1].Field != ".zerg-draft/task-graph.json" {
		t.Errorf("round 1 errors %v", r1)
	}
	r2 := res.Rounds[1].Errors
	if len(r2) != 2 || !strings.Contains(m.sessions[2].Prompt, `feature: "other" is not the feature being designed`) {
		t.Errorf("round 2 errors %v", r2)
	}
}

// TestDesignSessionError: a failed session ends the loop with its error.
func TestDesignSessionError(t *testing.T) {
	boom := errors.New("rate limited")
	m := &fakeModel{t: t, rounds: []map[string]string{{GraphFile: badGraph}}, err: boom, errAt: 2}
	res, err := Design(context.Background(), m, DesignInput{Feature: "auth", Workdir: workdir(t), MaxRounds: 3})
	if !errors.Is(err, boom) || len(res.Rounds) != 1 || len(m.sessions) != 2 {
		t.Fatalf("err %v rounds %d sessions %d", err, len(res.Rounds), len(m.sessions))
	}
}
