package driver

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// postLease writes an open lease of task (and its token, as Launch does) on
// board for the coordinator of pid.
func postLease(t *testing.T, board, task string, pid int, issued time.Time) Lease {
	t.Helper()
	token, err := newLeaseToken(task, 1)
	if err != nil {
		t.Fatal(err)
	}
	l := Lease{Task: task, Attempt: 1, TokenSHA256: tokenSum(token), Workspace: "/repo/.zerg/tasks/f/" + task + "-1",
		Issued: issued, Coordinator: pid}
	b, _ := json.Marshal(l)
	if err := os.WriteFile(filepath.Join(board, task+LeaseSuffix), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(board, task+TokenSuffix), []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return l
}

// TestReadBoard: of the leases open on the board, only the live
// coordinator's count; one HandOut printed is working, not fresh, the next
// time the board is read, and a second HandOut of it hands nothing out.
func TestReadBoard(t *testing.T) {
	board := t.TempDir()
	now := time.Now()
	postLease(t, board, "T1", 7, now)
	postLease(t, board, "T2", 7, now.Add(time.Second))
	postLease(t, board, "T3", 3, now) // a coordinator that died left it
	b, err := ReadBoard(board, 7)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Fresh) != 2 || b.Fresh[0].Task != "T1" || b.Fresh[1].Task != "T2" || len(b.Working) != 0 {
		t.Fatalf("fresh board: %+v", b)
	}
	if b.Open["T3"] || !b.Open["T1"] || !b.Open["T2"] {
		t.Fatalf("open tasks %v, want T1 and T2 only", b.Open)
	}
	h, ok, err := HandOut(board, b.Fresh[0])
	if err != nil || !ok || h.ID == "" {
		t.Fatalf("HandOut: %+v %v %v", h, ok, err)
	}
	if _, ok, _ := HandOut(board, b.Fresh[0]); ok {
		t.Fatal("a lease was handed out twice")
	}
	b, err = ReadBoard(board, 7)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Fresh) != 1 || b.Fresh[0].Task != "T2" || len(b.Working) != 1 || b.Working[0].Task != "T1" {
		t.Fatalf("after handing T1 out: %+v", b)
	}
	if l, ok, err := OpenLease(board, "T1", 7); err != nil || !ok || !l.Holds(h.ID) {
		t.Fatalf("OpenLease T1: %+v %v %v", l, ok, err)
	}
	if _, ok, _ := OpenLease(board, "T3", 7); ok {
		t.Fatal("a dead coordinator's lease is open")
	}
}

// TestParseTasksWrite: a path is tasks mode's business only under
// .zerg/tasks, and there only as a file of a workspace of a feature.
func TestParseTasksWrite(t *testing.T) {
	for _, tc := range []struct {
		path    string
		ok      bool
		problem bool
		want    TasksWrite
	}{
		{"/repo/README.md", false, false, TasksWrite{}},
		{"/repo/.zerg/tasks/f/T1-1/src/a.go", true, false, TasksWrite{Root: "/repo", Feature: "f", Workspace: "T1-1", Rel: "src/a.go"}},
		{"/repo/.zerg/tasks/f/T1-1", true, true, TasksWrite{}},
		{"/repo/.zerg/tasks/-x/T1-1/a", true, true, TasksWrite{}},
	} {
		w, ok, problem := ParseTasksWrite(tc.path)
		if ok != tc.ok || (problem != "") != tc.problem || w != tc.want {
			t.Errorf("%s: %+v %v %q", tc.path, w, ok, problem)
		}
	}
}
