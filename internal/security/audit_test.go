package security

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/eventlog"
)

// writeAudit records n entries and returns the log's path.
func writeAudit(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), ".zerg", "audit.jsonl")
	a, err := OpenAudit(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		if err := a.Record(AuditEnvDropped, map[string]any{"name": fmt.Sprintf("VAR_%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n")
}

func writeLines(t *testing.T, path string, lines []string) {
	t.Helper()
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(strings.TrimSuffix(l, "\n") + "\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestAuditRecordAndVerify(t *testing.T) {
	t.Parallel()
	path := writeAudit(t, 3)
	a, err := OpenAudit(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.RecordTask("T1", 2, AuditHookDenied, map[string]string{"tool": "Write", "path": "/etc/passwd"}); err != nil {
		t.Fatal(err)
	}
	st, err := VerifyAudit(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Entries != 4 || st.HeadSeq != 4 || st.HeadHash == "" || st.AnchorBehind {
		t.Fatalf("status = %+v, want 4 anchored entries", st)
	}
	entries, err := ReadAudit(path)
	if err != nil {
		t.Fatal(err)
	}
	last := entries[3]
	var f map[string]string
	if err := last.Decode(&f); err != nil {
		t.Fatal(err)
	}
	if last.Type != AuditHookDenied || last.Task != "T1" || last.Attempt != 2 || f["path"] != "/etc/passwd" {
		t.Errorf("last entry = %+v %v", last, f)
	}
	var an Anchor
	data, _ := os.ReadFile(AnchorPath(path))
	if err := json.Unmarshal(data, &an); err != nil || an.Seq != 4 || an.Hash != last.Hash {
		t.Errorf("anchor = %s, want seq 4 and the last hash", data)
	}
	for _, bad := range []string{"", "Hook-Denied", "a b", "x;y"} {
		if err := a.Record(bad, nil); err == nil {
			t.Errorf("kind %q accepted", bad)
		}
	}
	if err := a.Record("x", func() {}); err == nil {
		t.Error("unmarshallable fields accepted")
	}
	if st, err := VerifyAudit(path); err != nil || st.Entries != 4 {
		t.Errorf("rejected records changed the log: %+v %v", st, err)
	}
}

func TestAuditMissingLogIsEmpty(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	st, err := VerifyAudit(path)
	if err != nil || st.Entries != 0 {
		t.Fatalf("missing log: %+v %v, want 0 entries and no error", st, err)
	}
	if e, err := ReadAudit(path); err != nil || len(e) != 0 {
		t.Fatalf("ReadAudit of a missing log: %v %v", e, err)
	}
}

// TestAuditTampering: every kind of edit to the log or its anchor is reported
// with the first bad line.
func TestAuditTampering(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		tamper func(lines []string) []string
		line   int
		reason string
		// atEnd: the damage is at the log's end, which Record reads and
		// refuses; damage before it stays where verification finds it.
		atEnd bool
	}{
		{"edited line", func(l []string) []string {
			l[2] = strings.Replace(l[2], "VAR_3", "VAR_X", 1)
			return l
		}, 3, "hash does not match its content", false},
		{"removed middle line", func(l []string) []string {
			return append(l[:2:2], l[3:]...)
		}, 3, "sequence 4 follows 2", false},
		{"removed last line (truncation)", func(l []string) []string {
			return l[:4]
		}, 5, "the last lines were removed", true},
		{"removed last two lines", func(l []string) []string {
			return l[:3]
		}, 4, "the anchor records 5 entries", true},
		{"reordered lines", func(l []string) []string {
			l[1], l[2] = l[2], l[1]
			return l
		}, 2, "sequence 3 follows 1", false},
		{"inserted line", func(l []string) []string {
			forged := strings.Replace(l[1], "VAR_2", "VAR_FORGED", 1)
			return append(l[:2:2], append([]string{forged}, l[2:]...)...)
		}, 3, "sequence 2 follows 2", false},
		{"duplicated line", func(l []string) []string {
			return append(l[:3:3], append([]string{l[2]}, l[3:]...)...)
		}, 4, "sequence 3 follows 3", false},
		{"duplicated last line", func(l []string) []string {
			return append(l, l[4])
		}, 6, "sequence 5 follows 5", false},
		{"emptied log", func(l []string) []string {
			return nil
		}, 1, "the last lines were removed", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := writeAudit(t, 5)
			writeLines(t, path, tc.tamper(readLines(t, path)))
			_, err := VerifyAudit(path)
			var ae *AuditError
			if !errors.As(err, &ae) {
				t.Fatalf("err = %v, want an *AuditError", err)
			}
			if ae.Line != tc.line || !strings.Contains(ae.Reason, tc.reason) {
				t.Errorf("got line %d %q, want line %d containing %q", ae.Line, ae.Reason, tc.line, tc.reason)
			}
			// Record reads only the log's end. Damage there: appending would
			// move the anchor over it, so Record refuses and leaves the file
			// as it was. Damage before it: the append cannot hide it, and
			// verification still reports the same line.
			before, _ := os.ReadFile(path)
			a, _ := OpenAudit(path)
			err = a.Record(AuditSecretFound, nil)
			if !tc.atEnd {
				if err != nil {
					t.Fatalf("Record: %v", err)
				}
				if _, err := VerifyAudit(path); !errors.As(err, &ae) || ae.Line != tc.line {
					t.Errorf("after an append, verification reports %v, want line %d still", err, tc.line)
				}
				return
			}
			if !errors.Is(err, ErrAuditTampered) {
				t.Errorf("Record on a log damaged at its end: %v, want ErrAuditTampered", err)
			}
			after, _ := os.ReadFile(path)
			if !bytes.Equal(before, after) {
				t.Error("Record changed a tampered log")
			}
		})
	}
}

func TestAuditAnchorTampering(t *testing.T) {
	t.Parallel()
	t.Run("anchor removed", func(t *testing.T) {
		path := writeAudit(t, 3)
		if err := os.Remove(AnchorPath(path)); err != nil {
			t.Fatal(err)
		}
		_, err := VerifyAudit(path)
		if err == nil || !strings.Contains(err.Error(), "anchor") || !strings.Contains(err.Error(), "missing") {
			t.Fatalf("err = %v, want a missing anchor", err)
		}
	})
	t.Run("anchor edited", func(t *testing.T) {
		path := writeAudit(t, 3)
		if err := os.WriteFile(AnchorPath(path), []byte(`{"seq":3,"hash":"00"}`), 0o644); err != nil {
			t.Fatal(err)
		}
		var ae *AuditError
		if _, err := VerifyAudit(path); !errors.As(err, &ae) || ae.Line != 3 {
			t.Fatalf("err = %v, want line 3 not matching the anchor", err)
		}
	})
	t.Run("log removed", func(t *testing.T) {
		path := writeAudit(t, 2)
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		if _, err := VerifyAudit(path); err == nil || !strings.Contains(err.Error(), "removed") {
			t.Fatalf("err = %v, want the removed log reported", err)
		}
	})
	t.Run("lines appended without the anchor", func(t *testing.T) {
		path := writeAudit(t, 4)
		anchor, _ := os.ReadFile(AnchorPath(path))
		a, _ := OpenAudit(path)
		for range 2 {
			if err := a.Record(AuditEnvDropped, nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(AnchorPath(path), anchor, 0o644); err != nil {
			t.Fatal(err)
		}
		var ae *AuditError
		if _, err := VerifyAudit(path); !errors.As(err, &ae) || ae.Line != 6 {
			t.Fatalf("err = %v, want line 6 not covered by the anchor", err)
		}
	})
}

// TestAuditCrashBetweenAppendAndAnchor: an entry written without its anchor
// update (the one crash window) verifies, and the next Record repairs it.
func TestAuditCrashBetweenAppendAndAnchor(t *testing.T) {
	t.Parallel()
	path := writeAudit(t, 3)
	anchor, _ := os.ReadFile(AnchorPath(path))
	a, _ := OpenAudit(path)
	if err := a.Record(AuditEnvDropped, nil); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(AnchorPath(path), anchor, 0o644); err != nil { // as if the crash hit here
		t.Fatal(err)
	}
	st, err := VerifyAudit(path)
	if err != nil || !st.AnchorBehind || st.Entries != 4 {
		t.Fatalf("status %+v, err %v: want 4 entries with the anchor one behind", st, err)
	}
	if err := a.Record(AuditEnvDropped, nil); err != nil {
		t.Fatal(err)
	}
	if st, err := VerifyAudit(path); err != nil || st.AnchorBehind || st.Entries != 5 {
		t.Fatalf("after the next record: %+v %v", st, err)
	}
}

func TestAuditConcurrentGoroutines(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	// Two *Audit values act like two processes (each Record takes the file
	// lock on its own descriptor); goroutines share each of them.
	a1, _ := OpenAudit(path)
	a2, _ := OpenAudit(path)
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 40 {
		a := a1
		if i%2 == 1 {
			a = a2
		}
		wg.Go(func() {
			errs <- a.Record(AuditHookDenied, map[string]int{"i": i})
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	st, err := VerifyAudit(path)
	if err != nil || st.Entries != 40 {
		t.Fatalf("status %+v, err %v: want 40 entries", st, err)
	}
}

// TestAuditHelperProcess is not a test: TestAuditConcurrentProcesses runs
// the test binary again with ZERG_AUDIT_HELPER set, as `zerg hook` processes
// would append beside the coordinator.
func TestAuditHelperProcess(t *testing.T) {
	spec := os.Getenv("ZERG_AUDIT_HELPER")
	if spec == "" {
		return
	}
	path, nStr, _ := strings.Cut(spec, "|")
	n, _ := strconv.Atoi(nStr)
	a, err := OpenAudit(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for i := range n {
		if err := a.Record(AuditHookDenied, map[string]int{"pid": os.Getpid(), "i": i}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	os.Exit(0)
}

func TestAuditConcurrentProcesses(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	const procs, each = 4, 15
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^TestAuditHelperProcess$")
		cmd.Env = append(os.Environ(), "ZERG_AUDIT_HELPER="+path+"|"+strconv.Itoa(each))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, &out)
	}
	// This process appends at the same time, like the coordinator.
	a, _ := OpenAudit(path)
	for i := range each {
		if err := a.Record(AuditEnvDropped, map[string]int{"i": i}); err != nil {
			t.Fatal(err)
		}
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("helper %d: %v\n%s", i, err, outs[i])
		}
	}
	st, err := VerifyAudit(path)
	if err != nil || st.Entries != (procs+1)*each || st.AnchorBehind {
		t.Fatalf("status %+v, err %v: want %d anchored entries", st, err, (procs+1)*each)
	}
}

func TestAuditLockWait(t *testing.T) {
	path := writeAudit(t, 1)
	held, _, err := eventlog.Open(path) // another process's append, frozen
	if err != nil {
		t.Fatal(err)
	}
	a, _ := OpenAudit(path)
	a.LockWait = 150 * time.Millisecond
	start := time.Now()
	if err := a.Record(AuditEnvDropped, nil); !errors.Is(err, ErrAuditBusy) {
		t.Fatalf("err = %v, want ErrAuditBusy", err)
	}
	if d := time.Since(start); d < 150*time.Millisecond || d > 2*time.Second {
		t.Errorf("gave up after %s, want about the lock wait", d)
	}
	// Released during the wait: the record goes through.
	a.LockWait = 5 * time.Second
	go func() {
		time.Sleep(100 * time.Millisecond)
		held.Close()
	}()
	if err := a.Record(AuditEnvDropped, nil); err != nil {
		t.Fatalf("record after the lock was released: %v", err)
	}
	if st, err := VerifyAudit(path); err != nil || st.Entries != 2 {
		t.Fatalf("status %+v err %v", st, err)
	}
}

// TestAuditPrivate: the log, its lock and its anchor are 0600, also after
// a Record on files an older zerg left 0644.
func TestAuditPrivate(t *testing.T) {
	t.Parallel()
	path := writeAudit(t, 1)
	files := []string{path, path + ".lock", AnchorPath(path)}
	check := func(when string) {
		t.Helper()
		for _, p := range files {
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if m := fi.Mode().Perm(); m != 0o600 {
				t.Errorf("%s: %s is %o, want 600", when, filepath.Base(p), m)
			}
		}
	}
	check("new log")
	for _, p := range files {
		if err := os.Chmod(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a, err := OpenAudit(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Record(AuditEnvDropped, map[string]string{"name": "X"}); err != nil {
		t.Fatal(err)
	}
	check("after a Record on 0644 files")
}

// A temporary anchor a killed writer left behind is removed by the next
// Record, so a crash leaves nothing in the user's .zerg/.
func TestRecordRemovesAStaleAnchorTemp(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := OpenAudit(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Record("run_started", nil); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(filepath.Dir(path), ".audit.jsonl.anchor.tmp-12345")
	if err := os.WriteFile(stale, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := a.Record("run_finished", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatalf("the stale anchor temp is still there: %v", err)
	}
}
