package eventlog

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func appendN(t *testing.T, l *Log, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		if _, err := l.AppendData("task_ready", "T"+string(rune('A'+i)), 1, map[string]int{"i": i}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestAppendReplay(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs", "f", "events.jsonl")
	l, evs, err := Open(path)
	if err != nil || len(evs) != 0 {
		t.Fatal(err, evs)
	}
	appendN(t, l, 3)
	l.Close()

	l, evs, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 3 || evs[2].Seq != 3 || evs[0].Prev != Genesis || evs[1].Prev != evs[0].Hash || evs[2].Task != "TC" {
		t.Fatalf("replayed %+v", evs)
	}
	var payload map[string]int
	if err := evs[1].Decode(&payload); err != nil || payload["i"] != 1 {
		t.Fatalf("payload %v %v", payload, err)
	}
	e, err := l.Append(Event{Type: "run_done"})
	if err != nil || e.Seq != 4 || e.Prev != evs[2].Hash {
		t.Fatalf("continued chain: %+v %v", e, err)
	}
	l.Close()
	if n, err := Verify(path); err != nil || n != 4 {
		t.Fatalf("verify %d %v", n, err)
	}
}

// TestTornLastLine: a crash mid-write leaves a partial line; opening drops it
// and the chain continues from the last complete event.
func TestTornLastLine(t *testing.T) {
	for name, tail := range map[string]string{
		"no newline":       `{"seq":3,"time":"2026-`,
		"garbage with nl":  "{\"seq\":3,\"ti\n",
		"half of a record": `{"seq":3,"time":"2026-11-21T00:00:00Z","type":"x","prev":"`,
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "events.jsonl")
			l, _, _ := Open(path)
			appendN(t, l, 2)
			l.Close()
			f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			f.WriteString(tail)
			f.Close()

			if evs, err := Read(path); err != nil || len(evs) != 2 {
				t.Fatalf("read: %d events, %v", len(evs), err)
			}
			if _, err := Verify(path); err == nil {
				t.Fatal("verify accepted a torn line")
			}
			l, evs, err := Open(path)
			if err != nil || len(evs) != 2 {
				t.Fatalf("open: %d events, %v", len(evs), err)
			}
			appendN(t, l, 1)
			l.Close()
			if n, err := Verify(path); err != nil || n != 3 {
				t.Fatalf("after repair: %d %v", n, err)
			}
		})
	}
}

// TestTamperingDetected: editing, removing, reordering or inserting a line is
// reported with its line number, by Verify and by Open.
func TestTamperingDetected(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	l, _, _ := Open(path)
	appendN(t, l, 4)
	l.Close()
	orig, _ := os.ReadFile(path)
	lines := strings.SplitAfter(strings.TrimSuffix(string(orig), "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines", len(lines))
	}
	for i := range lines {
		lines[i] = strings.TrimSuffix(lines[i], "\n")
	}
	join := func(ls ...string) string { return strings.Join(ls, "\n") + "\n" }
	cases := map[string]struct {
		doc  string
		line int
		want string
	}{
		"edited payload": {join(lines[0], strings.Replace(lines[1], `"i":1`, `"i":9`, 1), lines[2], lines[3]), 2, "edited"},
		"edited type":    {join(lines[0], lines[1], strings.Replace(lines[2], "task_ready", "task_merged", 1), lines[3]), 3, "edited"},
		"removed":        {join(lines[0], lines[2], lines[3]), 2, "sequence 3 follows 1"},
		"reordered":      {join(lines[0], lines[2], lines[1], lines[3]), 2, "sequence"},
		"duplicated":     {join(lines[0], lines[1], lines[1], lines[2], lines[3]), 3, "sequence 2 follows 2"},
		"removed last":   {join(lines[0], lines[1], lines[2]) + "x\n", 4, "incomplete last line"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(path, []byte(c.doc), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Verify(path)
			var ce *CorruptError
			if !errors.As(err, &ce) || ce.Line != c.line || !strings.Contains(ce.Reason, c.want) {
				t.Fatalf("verify: %v, want line %d %q", err, c.line, c.want)
			}
		})
	}
	// Open refuses a log with damage before its last line: appending would bury it.
	os.WriteFile(path, []byte(cases["edited payload"].doc), 0o644)
	if _, _, err := Open(path); err == nil {
		t.Fatal("open accepted a tampered log")
	}
}

func TestSingleWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	l, _, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Open(path); !errors.Is(err, ErrLocked) {
		t.Fatalf("second writer: %v", err)
	}
	l.Close()
	l2, _, err := Open(path)
	if err != nil {
		t.Fatalf("after close: %v", err)
	}
	l2.Close()
}

func TestConcurrentAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	l, _, _ := Open(path)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				if _, err := l.Append(Event{Type: "x"}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	l.Close()
	if n, err := Verify(path); err != nil || n != 200 {
		t.Fatalf("%d %v", n, err)
	}
	data, _ := os.ReadFile(path)
	if bytes.Count(data, []byte("\n")) != 200 {
		t.Fatal("lines interleaved")
	}
}

// TestOpenPrivate: the log, its lock and the directories Open creates are
// private (0600/0700), and a log and lock an older zerg left 0644 are
// narrowed when opened.
func TestOpenPrivate(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "runs", "f", "events.jsonl")
	l, _, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, l, 1)
	l.Close()
	want := map[string]os.FileMode{
		filepath.Join(root, "runs"):      0o700,
		filepath.Join(root, "runs", "f"): 0o700,
		path:                             0o600,
		path + ".lock":                   0o600,
	}
	check := func(when string) {
		t.Helper()
		for p, m := range want {
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if got := fi.Mode().Perm(); got != m {
				t.Errorf("%s: %s is %o, want %o", when, p, got, m)
			}
		}
	}
	check("new log")
	for _, p := range []string{path, path + ".lock"} {
		if err := os.Chmod(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l, evs, err := Open(path)
	if err != nil || len(evs) != 1 {
		t.Fatal(err, evs)
	}
	l.Close()
	check("reopened 0644 log")
}

// OpenAppend reads only the end of the log and appends in the chain.
func TestOpenAppend(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	l, last, err := OpenAppend(path)
	if err != nil || last.Seq != 0 {
		t.Fatalf("empty log: %+v %v", last, err)
	}
	for i := range 3 {
		if _, err := l.AppendData("x", "", 0, map[string]int{"i": i}); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	// A torn last line (a crash mid-write) is cut off.
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"seq":4,"time":`)
	f.Close()
	l, last, err = OpenAppend(path)
	if err != nil || last.Seq != 3 {
		t.Fatalf("after a torn line: %+v %v", last, err)
	}
	if _, err := l.AppendData("y", "", 0, strings.Repeat("z", 200<<10)); err != nil {
		t.Fatal(err)
	}
	l.Close()
	l, last, err = OpenAppend(path)
	if err != nil || last.Seq != 4 || last.Type != "y" {
		t.Fatalf("after a long line: %+v %v", last.Seq, err)
	}
	l.Close()
	if n, err := Verify(path); err != nil || n != 4 {
		t.Fatalf("verify: %d %v", n, err)
	}
	// An edited last line is corruption, not a torn write.
	data, _ := os.ReadFile(path)
	os.WriteFile(path, bytes.Replace(data, []byte(`"type":"y"`), []byte(`"type":"Y"`), 1), 0o600)
	if _, _, err := OpenAppend(path); err == nil {
		t.Fatal("an edited last line was appended to")
	}
}

// A payload over MaxData is shrunk at write time, keeping its shape.
func TestAppendShrinksPayloads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	l, _, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	type payload struct {
		Changed []string `json:"changed"`
		Detail  string   `json:"detail"`
	}
	// Paths enough for a line over maxLine, which no reader would take
	// back unshrunk (16 MiB).
	var big payload
	for i := range maxLine/250 + 1 {
		big.Changed = append(big.Changed, fmt.Sprintf("dir/%0250d", i))
	}
	big.Detail = strings.Repeat("d", 5<<20)
	e, err := l.AppendData("attempt_finished", "t", 1, big)
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Data) > MaxData {
		t.Fatalf("payload of %d bytes written", len(e.Data))
	}
	var got payload
	var omitted struct {
		N int `json:"changed_omitted"`
	}
	if err := e.Decode(&got); err != nil || e.Decode(&omitted) != nil {
		t.Fatalf("the shrunk payload does not decode: %v", err)
	}
	if len(got.Changed) == 0 || got.Changed[0] != big.Changed[0] || omitted.N != len(big.Changed)-len(got.Changed) {
		t.Errorf("kept %d paths, omitted %d", len(got.Changed), omitted.N)
	}
	if !strings.Contains(got.Detail, "bytes left out]") {
		t.Errorf("detail not clipped: %d bytes", len(got.Detail))
	}
	evs, err := Read(path)
	if err != nil || len(evs) != 1 {
		t.Fatalf("read back: %v", err)
	}
	// Small payloads are written as they are.
	e, _ = l.AppendData("x", "", 0, map[string]any{"a": []int{1, 2, 3}})
	if string(e.Data) != `{"a":[1,2,3]}` {
		t.Errorf("small payload changed: %s", e.Data)
	}
}
