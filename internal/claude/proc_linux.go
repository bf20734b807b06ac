package claude

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/zergrush/zerg/internal/pathx"
	"golang.org/x/sys/unix"
)

// Proc identifies one process across PID reuse: the PID plus its start time
// in clock ticks since boot (field 22 of /proc/PID/stat).
type Proc struct {
	PID       int    `json:"pid"`
	StartTime uint64 `json:"start_time"`
}

var (
	subreaperOnce sync.Once
	subreaperErr  error
)

// EnableSubreaper makes this process a child subreaper (PR_SET_CHILD_SUBREAPER),
// so processes that a worker's Bash tool detaches with setsid re-parent to us
// instead of PID 1 and can still be found and killed. Call it once at start-up,
// before launching workers; later calls return the first result.
func EnableSubreaper() error {
	subreaperOnce.Do(func() {
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			subreaperErr = fmt.Errorf("set child subreaper: %w", err)
		}
	})
	return subreaperErr
}

// IsSubreaper reports whether this process is a child subreaper.
func IsSubreaper() bool {
	var v int32
	if err := unix.Prctl(unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&v)), 0, 0, 0); err != nil {
		return false
	}
	return v != 0
}

// procStat is what the tree walk needs from /proc/PID/stat.
type procStat struct {
	pid, ppid, pgid, sid int
	state                byte
	start                uint64
}

// readStat parses /proc/PID/stat; comm may contain spaces and parentheses,
// so fields are counted from the last ')'.
func readStat(pid int) (procStat, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	return parseStat(pid, data)
}

func parseStat(pid int, data []byte) (procStat, error) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 || i+2 > len(data) {
		return procStat{}, fmt.Errorf("parse /proc/%d/stat", pid)
	}
	f := strings.Fields(string(data[i+1:]))
	// f[0] is field 3 (state); field N is f[N-3].
	if len(f) < 20 || len(f[0]) != 1 {
		return procStat{}, fmt.Errorf("parse /proc/%d/stat: %d fields", pid, len(f))
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgid, err2 := strconv.Atoi(f[2])
	sid, err3 := strconv.Atoi(f[3])
	start, err4 := strconv.ParseUint(f[19], 10, 64)
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return procStat{}, fmt.Errorf("parse /proc/%d/stat: %w", pid, err)
	}
	return procStat{pid: pid, ppid: ppid, pgid: pgid, sid: sid, state: f[0][0], start: start}, nil
}

// scanProcs reads every process's stat. Processes that vanish mid-scan are skipped.
func scanProcs() (map[int]procStat, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("scan /proc: %w", err)
	}
	out := make(map[int]procStat, len(ents))
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		if st, err := readStat(pid); err == nil {
			out[pid] = st
		}
	}
	return out, nil
}

// hasMarker reports whether pid's initial environment contains KEY=value.
func hasMarker(pid int, kv []byte) bool {
	if len(kv) == 0 {
		return false
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	for len(data) > 0 {
		var ent []byte
		ent, data, _ = bytes.Cut(data, []byte{0})
		if bytes.Equal(ent, kv) {
			return true
		}
	}
	return false
}

// cwdOf returns the current directory of pid.
func cwdOf(pid int) string {
	p, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/cwd")
	if err != nil {
		return ""
	}
	return p
}

// tree tracks the processes of one run. A process belongs to the run when it
// is the CLI itself or was recorded as the run's (same PID and start time), is
// a descendant of one of those, carries the run's marker in its environment,
// or is an orphan re-parented to us (we are the subreaper) whose session or
// process group leader is the run's, or whose cwd is inside the run's
// directories. Orphans in our own process group are our own plain children
// (git, verification commands), never a worker's. Nothing else is signalled.
type tree struct {
	mu     sync.Mutex
	root   Proc
	marker []byte   // "ZERG_RUN_MARKER=<value>"
	dirs   []string // the run's workdir and attempt dir
	self   int
	selfPG int
	known  map[int]Proc // every process ever seen as ours, keyed by PID
	exited bool         // root has been reaped by os/exec
}

func newTree(root int, markerKV string, dirs ...string) *tree {
	t := &tree{marker: []byte(markerKV), dirs: dirs, self: os.Getpid(), selfPG: syscall.Getpgrp(), known: map[int]Proc{}}
	t.root = Proc{PID: root}
	if st, err := readStat(root); err == nil {
		t.root.StartTime = st.start
	}
	t.known[root] = t.root
	return t
}

// collect scans /proc and returns the live (or zombie) processes of the run,
// recording any new ones. fullMarkerScan reads the environment of every
// process instead of only those re-parented to us; it is used when killing.
func (t *tree) collect(fullMarkerScan bool) []procStat {
	procs, err := scanProcs()
	if err != nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	ours := map[int]bool{}
	for pid, p := range t.known {
		if pid <= 1 || pid == t.self {
			continue
		}
		if st, ok := procs[pid]; ok && st.start == p.StartTime {
			if pid == t.root.PID && t.exited {
				continue // reaped; the PID may belong to someone else now
			}
			ours[pid] = true
		}
	}
	for pid, st := range procs {
		if ours[pid] || pid == t.self || pid <= 1 {
			continue
		}
		if (fullMarkerScan || st.ppid == t.self || st.ppid == 1) && hasMarker(pid, t.marker) {
			ours[pid] = true
		}
	}
	// A sandbox's inner bwrap orphaned before it started the command (its
	// outer bwrap was killed during setup): pid 1 of its own namespace, it
	// has no marker (bwrap's environment is empty) and --die-with-parent
	// cannot reach it. It is re-parented to init, or to us as a subreaper;
	// its command line names the run's workdir.
	for pid, st := range procs {
		if !ours[pid] && (st.ppid == 1 || st.ppid == t.self) && pid != t.self && t.sandboxIn(pid) {
			ours[pid] = true
		}
	}
	// Orphans that lost the marker (env -i) and re-parented to us before a
	// scan saw them: attribute them by session, group or working directory.
	for pid, st := range procs {
		if ours[pid] || pid <= 1 || st.ppid != t.self || st.pgid == t.selfPG || pid == t.root.PID {
			continue
		}
		if ours[st.sid] || ours[st.pgid] || t.inDirs(cwdOf(pid)) {
			ours[pid] = true
		}
	}
	// Close over children until nothing new appears.
	children := map[int][]int{}
	for pid, st := range procs {
		children[st.ppid] = append(children[st.ppid], pid)
	}
	queue := make([]int, 0, len(ours))
	for pid := range ours {
		queue = append(queue, pid)
	}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children[pid] {
			if !ours[c] && c != t.self {
				ours[c] = true
				queue = append(queue, c)
			}
		}
	}
	out := make([]procStat, 0, len(ours))
	for pid := range ours {
		st := procs[pid]
		if _, ok := t.known[pid]; !ok {
			t.known[pid] = Proc{PID: pid, StartTime: st.start}
		}
		out = append(out, st)
	}
	return out
}

// sandboxIn reports whether pid is a bwrap whose sandbox starts in one of
// the run's directories (its "--chdir DIR").
func (t *tree) sandboxIn(pid int) bool {
	if len(t.dirs) == 0 {
		return false
	}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	argv := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
	if len(argv) < 3 || filepath.Base(argv[0]) != "bwrap" {
		return false
	}
	for i := 1; i+1 < len(argv); i++ {
		if argv[i] == "--chdir" {
			return slices.Contains(t.dirs, argv[i+1])
		}
	}
	return false
}

func (t *tree) inDirs(p string) bool {
	if p == "" {
		return false
	}
	for _, d := range t.dirs {
		if d != "" && pathx.Within(d, p) {
			return true
		}
	}
	return false
}

// recorded returns every process ever recorded for the run.
func (t *tree) recorded() []Proc {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]Proc, 0, len(t.known))
	for _, p := range t.known {
		out = append(out, p)
	}
	return out
}

func (t *tree) setExited() {
	t.mu.Lock()
	t.exited = true
	t.mu.Unlock()
}

// signal sends sig to the CLI's process group (while the CLI is not reaped)
// and to every process of the run. It returns how many processes it found.
func (t *tree) signal(sig syscall.Signal) int {
	procs := t.collect(true)
	t.mu.Lock()
	exited := t.exited
	t.mu.Unlock()
	if !exited {
		// The group leader's PID cannot be reused while it is unreaped.
		_ = syscall.Kill(-t.root.PID, sig)
	}
	n := 0
	for _, p := range procs {
		if p.pid == t.root.PID && exited {
			continue
		}
		if p.state != 'Z' {
			_ = syscall.Kill(p.pid, sig)
			n++
		}
	}
	t.reap(procs)
	return n
}

// reap collects zombies of the run that were re-parented to us: os/exec only
// waits for the CLI. Only exact recorded PIDs are waited for, never -1, so
// other components' children keep their exit statuses.
func (t *tree) reap(procs []procStat) {
	for _, p := range procs {
		if p.state == 'Z' && p.ppid == t.self && p.pid != t.root.PID {
			var ws unix.WaitStatus
			_, _ = unix.Wait4(p.pid, &ws, unix.WNOHANG, nil)
		}
	}
}

// alive returns the run's processes that are not zombies, reaping zombies.
func (t *tree) alive() []procStat {
	procs := t.collect(true)
	t.reap(procs)
	var out []procStat
	for _, p := range procs {
		if p.state != 'Z' && !(p.pid == t.root.PID && t.isExited()) {
			out = append(out, p)
		}
	}
	return out
}

func (t *tree) isExited() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.exited
}

// terminate sends SIGTERM to the run, waits up to grace for it to go, then
// SIGKILLs whatever is left until nothing of the run remains (bounded).
// It returns the processes that were still alive at the end (normally none).
func (t *tree) terminate(grace time.Duration) []procStat {
	if grace > 0 {
		if t.signal(syscall.SIGTERM) == 0 && t.isExited() {
			return nil
		}
		deadline := time.Now().Add(grace)
		for time.Now().Before(deadline) {
			if len(t.alive()) == 0 {
				return nil
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return t.kill()
}

// kill SIGKILLs the run repeatedly (a dying parent's children re-parent and
// must be found again) until no process of it is left or 5 s have passed.
func (t *tree) kill() []procStat {
	deadline := time.Now().Add(5 * time.Second)
	for {
		t.signal(syscall.SIGKILL)
		time.Sleep(20 * time.Millisecond)
		left := t.alive()
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
	}
}

// KillRecorded kills processes a previous zerg recorded for a run (for a
// coordinator resuming after a crash): a PID is signalled only if its start
// time still matches the record, or it carries the run's marker, or it is a
// sandbox's orphaned bwrap started in one of workdirs (the attempts'
// workspaces); their descendants go too. It returns the PIDs signalled.
func KillRecorded(marker string, recorded []Proc, grace time.Duration, workdirs ...string) []int {
	if marker == "" && len(recorded) == 0 && len(workdirs) == 0 {
		return nil
	}
	// bwrap names a directory by its resolved path.
	for _, d := range workdirs {
		if r, err := filepath.EvalSymlinks(d); err == nil && r != d {
			workdirs = append(workdirs, r)
		}
	}
	t := &tree{marker: []byte(EnvRunMarker + "=" + marker), self: os.Getpid(), selfPG: syscall.Getpgrp(),
		known: map[int]Proc{}, exited: true, root: Proc{PID: -1}, dirs: workdirs}
	if marker == "" {
		t.marker = nil
	}
	for _, p := range recorded {
		t.known[p.PID] = p
	}
	var pids []int
	for _, p := range t.alive() {
		pids = append(pids, p.pid)
	}
	t.terminate(grace)
	return pids
}
