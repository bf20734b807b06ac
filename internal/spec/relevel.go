package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
)

// LevelChange records one task whose level relevel changed.
type LevelChange struct {
	Task string `json:"task"`
	From int    `json:"from"` // 0 when the old level was missing or invalid
	To   int    `json:"to"`
}

// RelevelMode chooses how levels are recomputed.
type RelevelMode int

const (
	// KeepLevels raises only what must move: a task keeps its level unless a
	// dependency or an ownership conflict forces it higher.
	KeepLevels RelevelMode = iota
	// ASAP puts every task at the earliest level its dependencies allow.
	ASAP
)

// ErrCannotRelevel is returned when the graph has problems levels cannot fix.
var ErrCannotRelevel = errors.New("cannot relevel")

// Relevel recomputes levels from dependencies so that every dependency is in a
// strictly lower level and no two tasks of one level own the same path, then
// renumbers levels to close gaps. It returns the fixed document (the input
// bytes with only level values changed) and the changes. Graphs whose ids or
// dependencies are broken, or that have a cycle, cannot be re-levelled: the
// returned report lists why.
func Relevel(data []byte, mode RelevelMode, opts Options) ([]byte, []LevelChange, *Report, error) {
	r := Check(data, opts)
	if r.Graph == nil {
		return nil, nil, r, ErrCannotRelevel
	}
	for _, e := range r.Errors {
		switch e.Code {
		case CodeBadLevel, CodeDepLevel, CodeOwnership:
			// Fixable by relevelling; a missing level too.
		case CodeMissing:
			if e.Field == "level" {
				continue
			}
			return nil, nil, r, ErrCannotRelevel
		default:
			return nil, nil, r, ErrCannotRelevel
		}
	}
	g := r.Graph
	levels := computeLevels(g, mode)

	// Close gaps: levels keep their order, renumbered 1..n.
	used := map[int]bool{}
	for _, l := range levels {
		used[l] = true
	}
	distinct := make([]int, 0, len(used))
	for l := range used {
		distinct = append(distinct, l)
	}
	slices.Sort(distinct)
	renum := make(map[int]int, len(distinct))
	for i, l := range distinct {
		renum[l] = i + 1
	}

	var changes []LevelChange
	newLevel := make(map[int]int, len(g.Tasks)) // task index → level
	for _, t := range g.Tasks {
		nl := renum[levels[t.ID]]
		newLevel[t.Index] = nl
		if nl != t.Level {
			changes = append(changes, LevelChange{Task: t.ID, From: t.Level, To: nl})
		}
	}
	if len(changes) == 0 {
		return data, nil, r, nil
	}
	out, err := spliceLevels(data, newLevel)
	if err != nil {
		return nil, nil, r, err
	}
	after := Check(out, opts)
	if !after.Valid() {
		// Levels were not the only problem (for example an unsafe path).
		return nil, nil, after, ErrCannotRelevel
	}
	return out, changes, after, nil
}

// computeLevels assigns levels in a topological order that prefers the old
// level order, raising a task past its dependencies and past same-level owners
// of its paths.
func computeLevels(g *Graph, mode RelevelMode) map[string]int {
	indeg := make(map[string]int, len(g.Tasks))
	dependents := make(map[string][]*Task, len(g.Tasks))
	for _, t := range g.Tasks {
		indeg[t.ID] = len(uniq(t.Dependencies))
		for _, d := range uniq(t.Dependencies) {
			dependents[d] = append(dependents[d], t)
		}
	}
	less := func(x, y *Task) int {
		if x.Level != y.Level {
			return x.Level - y.Level
		}
		return x.Index - y.Index
	}
	var ready []*Task
	for _, t := range g.Tasks {
		if indeg[t.ID] == 0 {
			ready = append(ready, t)
		}
	}
	level := make(map[string]int, len(g.Tasks))
	owners := map[int]map[string]bool{} // level → owned paths
	for len(ready) > 0 {
		slices.SortFunc(ready, less)
		t := ready[0]
		ready = ready[1:]
		l := 1
		if mode == KeepLevels && t.Level > 0 {
			l = t.Level
		}
		for _, d := range t.Dependencies {
			l = max(l, level[d]+1)
		}
		paths := ownedKeys(t)
		for conflictsAt(owners[l], paths) {
			l++
		}
		if owners[l] == nil {
			owners[l] = map[string]bool{}
		}
		for _, p := range paths {
			owners[l][p] = true
		}
		level[t.ID] = l
		for _, dep := range dependents[t.ID] {
			if indeg[dep.ID]--; indeg[dep.ID] == 0 {
				ready = append(ready, dep)
			}
		}
	}
	return level
}

func uniq(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return slices.Compact(c)
}

// ownedKeys are the cleaned owned paths; directories and globs are reduced to
// their literal prefix so relevel separates anything that might overlap.
func ownedKeys(t *Task) []string {
	var out []string
	for _, p := range t.Files.Owned() {
		if unsafePath(p) != "" {
			continue
		}
		out = append(out, cleanPath(p))
	}
	return out
}

func conflictsAt(owned map[string]bool, paths []string) bool {
	for _, p := range paths {
		if owned[p] {
			return true
		}
		for q := range owned {
			if (isGlob(q) || isGlob(p)) && EntriesMayOverlap(q, p) {
				return true
			}
		}
	}
	return false
}

// spliceLevels rewrites the "level" value of each task in place, leaving every
// other byte of the document as it was. A task with no level key gets one
// inserted after its opening brace.
func spliceLevels(data []byte, newLevel map[int]int) ([]byte, error) {
	type edit struct {
		start, end int
		text       string
	}
	var edits []edit
	dec := json.NewDecoder(bytes.NewReader(data))
	expectDelim := func(want json.Delim) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if d, ok := tok.(json.Delim); !ok || d != want {
			return fmt.Errorf("unexpected %v", tok)
		}
		return nil
	}
	if err := expectDelim('{'); err != nil {
		return nil, err
	}
	for dec.More() {
		keyTok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		if keyTok != "tasks" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, err
			}
			continue
		}
		if err := expectDelim('['); err != nil {
			return nil, err
		}
		for i := 0; dec.More(); i++ {
			objStart := int(dec.InputOffset())
			if err := expectDelim('{'); err != nil {
				return nil, err
			}
			brace := bytes.IndexByte(data[objStart:], '{') + objStart
			found := false
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				var raw json.RawMessage
				if err := dec.Decode(&raw); err != nil {
					return nil, err
				}
				if k == "level" && !found {
					end := int(dec.InputOffset())
					found = true
					if nl, ok := newLevel[i]; ok {
						edits = append(edits, edit{end - len(raw), end, strconv.Itoa(nl)})
					}
				}
			}
			if err := expectDelim('}'); err != nil {
				return nil, err
			}
			if nl, ok := newLevel[i]; ok && !found {
				edits = append(edits, edit{brace + 1, brace + 1, fmt.Sprintf(`"level": %d, `, nl)})
			}
		}
		if err := expectDelim(']'); err != nil {
			return nil, err
		}
	}
	if _, err := dec.Token(); err != nil && err != io.EOF {
		return nil, err
	}
	var b bytes.Buffer
	b.Grow(len(data) + 16*len(edits))
	last := 0
	for _, e := range edits {
		b.Write(data[last:e.start])
		b.WriteString(e.text)
		last = e.end
	}
	b.Write(data[last:])
	return b.Bytes(), nil
}
