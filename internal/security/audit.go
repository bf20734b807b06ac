package security

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"time"

	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/fsx"
)

// The audit log records every security decision: dropped environment
// variables, hook denials, ownership violations, secrets found, rules fetched.
// It is an eventlog (append-only, fsync per entry, hash-chained JSONL) plus an
// anchor file beside it holding the seq and hash of the last entry, so that
// removing the last lines is detected too. docs/audit.md has the design.

// AuditFileRel is the audit log's path relative to the repository root.
const AuditFileRel = ".zerg/audit.jsonl"

// Audit entry kinds zerg records.
const (
	AuditEnvDropped          = "env_dropped"
	AuditDangerousEnvAllowed = "dangerous_env_allowed"
	AuditHookDenied          = "hook_denied"
	AuditOwnershipViolation  = "ownership_violation"
	AuditSecretFound         = "secret_found"
	AuditRulesFetched        = "rules_fetched"
)

// DefaultAuditLockWait bounds how long Record waits while another process
// appends. An append is one write, one fsync and one small atomic rename, so
// the wait is normally milliseconds; the bound only matters when a process
// hangs while holding the lock.
const DefaultAuditLockWait = 10 * time.Second

var auditKindRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// ErrAuditTampered marks an audit log that failed verification; Record
// refuses to append to it, because updating the anchor would hide the damage.
var ErrAuditTampered = errors.New("the audit log failed verification")

// ErrAuditBusy is returned when another process held the log for longer than
// the lock wait.
var ErrAuditBusy = errors.New("the audit log is busy")

// AuditPath returns the audit log of the repository at root.
func AuditPath(root string) string { return filepath.Join(root, filepath.FromSlash(AuditFileRel)) }

// AnchorPath returns the anchor file of the audit log at path.
func AnchorPath(path string) string { return path + ".anchor" }

// Anchor is the content of the anchor file: the last entry written.
type Anchor struct {
	Seq  int64     `json:"seq"`
	Hash string    `json:"hash"`
	Time time.Time `json:"time"`
}

// Audit appends to one audit log. It does not keep the log open: each Record
// takes the log's lock (waiting while another process holds it), checks the
// log's last entry against its anchor (it reads only the end of the log, so
// an append costs the same however long the log is; VerifyAudit checks the
// whole chain), appends one fsynced entry, updates the anchor and releases
// the lock. Several processes (the coordinator, `zerg hook
// pre-tool-use`, `zerg rules update`) can therefore append to the same log.
// An *Audit is safe for concurrent use by several goroutines.
type Audit struct {
	path string
	// LockWait bounds the wait for another process's append; set it before
	// the first Record.
	LockWait time.Duration
	mu       sync.Mutex
	closed   bool
}

// OpenAudit prepares appending to the audit log at path (normally
// AuditPath(root)); the file is created on the first Record. It does not take
// the lock, so opening never fails because another process is appending.
func OpenAudit(path string) (*Audit, error) {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("open audit log: %s is not a regular file", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	return &Audit{path: path, LockWait: DefaultAuditLockWait}, nil
}

// Path returns the log's path.
func (a *Audit) Path() string { return a.path }

// Record appends one entry of kind (lower case, like "hook_denied") with
// fields marshalled as its data. Fields must name what was decided and where
// (a variable's name, a path, a rule id), never a secret's value. When Record
// returns nil the entry is on disk (fsynced) and anchored.
func (a *Audit) Record(kind string, fields any) error {
	return a.RecordTask("", 0, kind, fields)
}

// RecordTask is Record for a decision about one task attempt.
func (a *Audit) RecordTask(task string, attempt int, kind string, fields any) error {
	if !auditKindRE.MatchString(kind) {
		return fmt.Errorf("record audit entry: bad kind %q (lower-case letters, digits and _)", kind)
	}
	var data json.RawMessage
	if fields != nil {
		b, err := json.Marshal(fields)
		if err != nil {
			return fmt.Errorf("record audit entry %s: %w", kind, err)
		}
		data = b
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return errors.New("record audit entry: the audit log is closed")
	}
	l, last, err := a.lock()
	if err != nil {
		return err
	}
	defer l.Close()
	if err := checkAnchorTail(a.path, last); err != nil {
		return fmt.Errorf("record audit entry %s: %w: %v; run zerg audit verify", kind, ErrAuditTampered, err)
	}
	e, err := l.Append(eventlog.Event{Type: kind, Task: task, Attempt: attempt, Data: data})
	if err != nil {
		return fmt.Errorf("record audit entry %s: %w", kind, err)
	}
	// The lock is still held: no other process can append between the entry
	// and its anchor. A crash here leaves the anchor one entry behind, which
	// verification accepts and the next Record repairs.
	anchor, err := json.Marshal(Anchor{Seq: e.Seq, Hash: e.Hash, Time: e.Time})
	if err != nil {
		return err
	}
	// A writer killed while it updated the anchor left its temporary file
	// in the user's .zerg/; under the lock nobody else is writing one.
	if err := fsx.RemoveStaleTemps(AnchorPath(a.path)); err != nil {
		return fmt.Errorf("record audit entry %s: %w", kind, err)
	}
	if err := fsx.WritePrivate(AnchorPath(a.path), append(anchor, '\n')); err != nil {
		return fmt.Errorf("record audit entry %s: update anchor: %w", kind, err)
	}
	return nil
}

// lock opens the log for one append, retrying with a short randomized
// backoff while another process holds it (eventlog.OpenAppend does not
// wait), and returns its last entry.
func (a *Audit) lock() (*eventlog.Log, eventlog.Event, error) {
	wait := a.LockWait
	if wait <= 0 {
		wait = DefaultAuditLockWait
	}
	deadline := time.Now().Add(wait)
	delay := 2 * time.Millisecond
	for {
		l, last, err := eventlog.OpenAppend(a.path)
		if err == nil {
			return l, last, nil
		}
		var ce *eventlog.CorruptError
		switch {
		case errors.As(err, &ce):
			return nil, eventlog.Event{}, fmt.Errorf("record audit entry: %w: %s: %s; run zerg audit verify", ErrAuditTampered, a.path, ce.Reason)
		case !errors.Is(err, eventlog.ErrLocked):
			return nil, eventlog.Event{}, fmt.Errorf("record audit entry: %w", err)
		case time.Now().After(deadline):
			return nil, eventlog.Event{}, fmt.Errorf("record audit entry: %w: another process held %s for more than %s", ErrAuditBusy, a.path, wait)
		}
		// Jitter keeps several waiting hook processes from retrying in step.
		time.Sleep(delay/2 + rand.N(delay))
		delay = min(delay*2, 100*time.Millisecond)
	}
}

// Close stops further Records. It holds nothing open, so it never fails.
func (a *Audit) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closed = true
	return nil
}

// readAnchor returns the anchor of the log at path; ok is false when there is
// no anchor file.
func readAnchor(path string) (Anchor, bool, error) {
	data, err := os.ReadFile(AnchorPath(path))
	if errors.Is(err, fs.ErrNotExist) {
		return Anchor{}, false, nil
	}
	if err != nil {
		return Anchor{}, false, err
	}
	var an Anchor
	if err := json.Unmarshal(data, &an); err != nil || an.Seq < 1 || an.Hash == "" {
		return Anchor{}, true, fmt.Errorf("the anchor %s is not valid", filepath.Base(AnchorPath(path)))
	}
	return an, true, nil
}

// AuditError names the first bad line of an audit log and why. Line 0 means
// the problem is not one line (the anchor file is missing or unreadable).
type AuditError struct {
	Path   string
	Line   int
	Reason string
}

func (e *AuditError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", e.Path, e.Reason)
	}
	return fmt.Sprintf("%s line %d: %s", e.Path, e.Line, e.Reason)
}

// anchorProblem compares a chain-valid list of events with the anchor and
// returns the first bad line and why, or 0 and "". behind reports the one
// tolerated difference: the last entry is written but the anchor still names
// the one before (a crash between the two writes).
func anchorProblem(path string, events []eventlog.Event) (line int, reason string, behind bool) {
	an, ok, err := readAnchor(path)
	if err != nil {
		return 0, err.Error() + " (edited or damaged)", false
	}
	n := int64(len(events))
	switch {
	case !ok && n == 0:
		return 0, "", false
	case !ok && n == 1:
		// The very first entry can be written before its anchor exists.
		return 0, "", true
	case !ok:
		return 0, fmt.Sprintf("the anchor %s is missing (it was removed, or the log was not written by zerg); the log has %d entries", filepath.Base(AnchorPath(path)), n), false
	case an.Seq > n:
		return int(n) + 1, fmt.Sprintf("missing: the anchor records %d entries ending in hash %.12s…, the log ends after line %d (the last lines were removed)", an.Seq, an.Hash, n), false
	case events[an.Seq-1].Hash != an.Hash:
		return int(an.Seq), fmt.Sprintf("its hash %.12s… is not the anchor's %.12s… (the log was rewritten up to this line)", events[an.Seq-1].Hash, an.Hash), false
	case n > an.Seq+1:
		return int(an.Seq) + 2, fmt.Sprintf("not covered by the anchor, which ends at line %d (lines were appended without zerg)", an.Seq), false
	}
	return 0, "", n == an.Seq+1
}

// checkAnchorTail compares the log's last entry (the zero Event for an
// empty log) with the anchor, as anchorProblem does for the whole log: the
// anchor names that entry, or the one before it (a crash between the two
// writes); without an anchor the log holds at most one entry.
func checkAnchorTail(path string, last eventlog.Event) error {
	an, ok, err := readAnchor(path)
	if err != nil {
		return &AuditError{Path: path, Reason: err.Error() + " (edited or damaged)"}
	}
	switch {
	case !ok && last.Seq <= 1:
		return nil
	case !ok:
		return &AuditError{Path: path, Reason: fmt.Sprintf("the anchor %s is missing (it was removed, or the log was not written by zerg); the log has %d entries", filepath.Base(AnchorPath(path)), last.Seq)}
	case last.Seq == an.Seq && last.Hash == an.Hash:
		return nil
	case last.Seq == an.Seq+1 && last.Prev == an.Hash:
		return nil
	case last.Seq < an.Seq:
		return &AuditError{Path: path, Line: int(last.Seq) + 1, Reason: fmt.Sprintf("missing: the anchor records %d entries, the log ends after %d (the last lines were removed)", an.Seq, last.Seq)}
	}
	return &AuditError{Path: path, Line: int(last.Seq), Reason: fmt.Sprintf("the last entry (seq %d, hash %.12s…) is not the anchor's (seq %d, hash %.12s…): the log was rewritten or appended to without zerg", last.Seq, last.Hash, an.Seq, an.Hash)}
}

// AuditStatus is the result of a successful verification.
type AuditStatus struct {
	Path     string `json:"path"`
	Entries  int    `json:"entries"`
	HeadSeq  int64  `json:"head_seq"`
	HeadHash string `json:"head_hash"`
	// AnchorBehind is true when the last entry is not yet anchored (a crash
	// between writing it and the anchor); the next Record repairs it.
	AnchorBehind bool `json:"anchor_behind"`
}

// VerifyAudit checks the audit log at path: every line's hash, the chain of
// prev hashes and the sequence (an edited, removed, inserted, reordered or
// duplicated line), a torn or unparsable last line, and the anchor (removed
// last lines, a missing anchor, a log rewritten up to its end). A bad log is an
// *AuditError naming the first bad line. A log that does not exist, with no
// anchor either, is valid and empty: nothing was recorded yet.
//
// What it cannot detect: someone who rewrites the whole chain and the anchor
// consistently (the hashes are not keyed), or who deletes both files. Keep
// HeadHash somewhere else (a CI log, a run report) to detect that.
func VerifyAudit(path string) (AuditStatus, error) {
	st := AuditStatus{Path: path}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		if _, ok, _ := readAnchor(path); ok {
			return st, &AuditError{Path: path, Line: 0, Reason: fmt.Sprintf("the log is missing but its anchor %s exists (the log was removed)", filepath.Base(AnchorPath(path)))}
		}
		return st, nil
	}
	if _, err := eventlog.Verify(path); err != nil {
		var ce *eventlog.CorruptError
		if errors.As(err, &ce) {
			return st, &AuditError{Path: path, Line: ce.Line, Reason: ce.Reason}
		}
		return st, fmt.Errorf("verify audit log: %w", err)
	}
	events, err := eventlog.Read(path)
	if err != nil {
		return st, fmt.Errorf("verify audit log: %w", err)
	}
	line, reason, behind := anchorProblem(path, events)
	if reason != "" {
		return st, &AuditError{Path: path, Line: line, Reason: reason}
	}
	st.Entries = len(events)
	st.AnchorBehind = behind
	if n := len(events); n > 0 {
		st.HeadSeq, st.HeadHash = events[n-1].Seq, events[n-1].Hash
	}
	return st, nil
}

// ReadAudit returns the entries of the audit log at path without verifying
// the anchor (use VerifyAudit for that). A missing log has no entries.
func ReadAudit(path string) ([]eventlog.Event, error) {
	events, err := eventlog.Read(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return events, err
}
