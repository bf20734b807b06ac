package proc

import (
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/zergrush/zerg/internal/pathx"
)

// Options say how a tree's processes are recognised beyond its root's
// descendants.
type Options struct {
	// Marker is an environment entry ("KEY=value", unique per tree) the
	// command's environment carries: its processes inherit it, so one that
	// detached (setsid, a double fork) still carries it.
	Marker string
	// Dirs are the tree's directories: an orphan re-parented to the caller
	// whose working directory is inside one of them is the tree's.
	Dirs []string
	// Orphan, when not nil, claims an orphan (re-parented to init or to
	// the caller) that nothing else attributes: a sandbox's bwrap that lost
	// its parent carries no marker (bwrap clears its environment).
	Orphan func(pid int) bool
	// Stranded, when not nil, claims in a kill's scan (Collect full) a
	// process whose working directory is in Dirs and whose command line it
	// recognises, whoever its parent is: a container's init that the
	// engine left waiting to start when the engine's client was killed in
	// the middle of starting it, and that the engine itself no longer
	// knows (podman with runc leaves a "runc init" under a conmon of its
	// own, which neither podman rm nor the label finds).
	Stranded func(argv []string) bool
	// Cgroup, when not nil, is the command's own control group: all its
	// members are the tree's. Start starts the command in it.
	Cgroup Cgroup
	// DieWithParent makes the kernel SIGKILL the command when the thread
	// that started it exits (Pdeathsig): a coordinator killed with SIGKILL
	// cannot stop its workers itself.
	DieWithParent bool
}

// Tree is the process tree of one command zerg started. A process belongs
// to it when it is the root or was recorded as the tree's (same PID and
// start time), is a descendant of one of those, carries the tree's marker,
// is in its cgroup, or is an orphan re-parented to the caller (a subreaper,
// EnableSubreaper) whose session or process group leader is the tree's, or
// whose working directory is in the tree's directories, or, in a kill, a
// process in those directories that Options.Stranded recognises. Orphans
// in the caller's own process group are the caller's own plain children
// (git, verification commands), never the tree's. Nothing else is signalled.
// Its methods are safe for concurrent use.
type Tree struct {
	mu     sync.Mutex
	root   ID
	o      Options
	marker []byte
	self   int
	selfPG int
	known  map[int]ID // every process ever seen as the tree's, by PID
	exited bool       // the root was reaped: its PID and group may be reused
}

// NewTree returns the tree of the root process, a child of the caller not
// yet reaped (so its PID still names it).
func NewTree(root int, o Options) *Tree {
	t := newTree(o)
	t.root = ID{PID: root}
	if st, err := ReadStat(root); err == nil {
		t.root.StartTime = st.StartTime
	}
	t.known[root] = t.root
	return t
}

// Recorded returns the tree of processes an earlier zerg recorded (a
// coordinator that died): its root is long reaped, so the tree is only
// what the records, the marker, the cgroup and the orphan rules find, and a
// recorded PID counts only while its start time matches the record.
func Recorded(recorded []ID, o Options) *Tree {
	t := newTree(o)
	t.root, t.exited = ID{PID: -1}, true
	for _, p := range recorded {
		t.known[p.PID] = p
	}
	return t
}

func newTree(o Options) *Tree {
	t := &Tree{o: o, self: os.Getpid(), selfPG: syscall.Getpgrp(), known: map[int]ID{}}
	if o.Marker != "" {
		t.marker = []byte(o.Marker)
	}
	return t
}

// Root is the identity of the tree's root process.
func (t *Tree) Root() ID { return t.root }

// SetExited records that the root was reaped (by os/exec's Wait): from now
// on its PID and process group are no longer the tree's.
func (t *Tree) SetExited() {
	t.mu.Lock()
	t.exited = true
	t.mu.Unlock()
}

func (t *Tree) isExited() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.exited
}

// Recorded returns every process ever recorded as the tree's.
func (t *Tree) Recorded() []ID {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]ID, 0, len(t.known))
	for _, p := range t.known {
		out = append(out, p)
	}
	return out
}

// Collect scans /proc and returns the tree's live (or zombie) processes,
// recording new ones. full reads the environment of every process for the
// marker instead of only of orphans, and looks for stranded processes; it
// is what a kill uses, a periodic scan need not. Only a full scan is sure
// to be fresh: a periodic one may reuse another tree's scan of the last
// recentAge.
func (t *Tree) Collect(full bool) []Stat {
	scan := scanTable
	if !full {
		scan = func() (map[int]Stat, error) { return scanRecent(recentAge) }
	}
	procs, err := scan()
	if err != nil {
		return nil
	}
	var members []int
	if t.o.Cgroup != nil {
		members = t.o.Cgroup.PIDs()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	ours := map[int]bool{}
	for pid, p := range t.known {
		if pid <= 1 || pid == t.self {
			continue
		}
		if st, ok := procs[pid]; ok && st.StartTime == p.StartTime {
			if pid == t.root.PID && t.exited {
				continue // reaped; the PID may belong to someone else now
			}
			ours[pid] = true
		}
	}
	for _, pid := range members {
		if _, ok := procs[pid]; ok && pid > 1 && pid != t.self {
			ours[pid] = true
		}
	}
	for pid, st := range procs {
		if ours[pid] || pid == t.self || pid <= 1 {
			continue
		}
		if (full || st.PPID == t.self || st.PPID == 1) && hasEnv(pid, t.marker) {
			ours[pid] = true
		}
	}
	if t.o.Orphan != nil {
		for pid, st := range procs {
			if !ours[pid] && (st.PPID == 1 || st.PPID == t.self) && pid != t.self && pid > 1 && t.o.Orphan(pid) {
				ours[pid] = true
			}
		}
	}
	// Orphans that lost the marker (env -i) and re-parented to us before a
	// scan saw them: attribute them by session, group or working directory.
	for pid, st := range procs {
		if ours[pid] || pid <= 1 || st.PPID != t.self || st.PGID == t.selfPG || pid == t.root.PID {
			continue
		}
		if ours[st.SID] || ours[st.PGID] || t.inDirs(cwdOf(pid)) {
			ours[pid] = true
		}
	}
	if full && t.o.Stranded != nil && len(t.o.Dirs) > 0 {
		for pid := range procs {
			if !ours[pid] && pid > 1 && pid != t.self && t.inDirs(cwdOf(pid)) && t.o.Stranded(Cmdline(pid)) {
				ours[pid] = true
			}
		}
	}
	// Close over children until nothing new appears.
	children := map[int][]int{}
	for pid, st := range procs {
		children[st.PPID] = append(children[st.PPID], pid)
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
	out := make([]Stat, 0, len(ours))
	for pid := range ours {
		st := procs[pid]
		if _, ok := t.known[pid]; !ok {
			t.known[pid] = st.ID()
		}
		out = append(out, st)
	}
	return out
}

func (t *Tree) inDirs(p string) bool {
	if p == "" {
		return false
	}
	for _, d := range t.o.Dirs {
		if d != "" && pathx.Within(d, p) {
			return true
		}
	}
	return false
}

// Signal sends sig to the root's process group (while the root is not
// reaped) and to every process of the tree, and reaps the tree's zombies
// that are the caller's children. It returns how many processes (not
// zombies) it signalled.
func (t *Tree) Signal(sig syscall.Signal) int {
	procs := t.Collect(true)
	exited := t.isExited()
	if !exited {
		_ = signalGroup(t.root, sig)
	}
	n := 0
	for _, p := range procs {
		if p.PID == t.root.PID && exited {
			continue
		}
		if !p.Zombie() && Signal(p.ID(), sig) == nil {
			n++
		}
	}
	t.reap(procs)
	return n
}

// Reap collects the tree's zombies that were re-parented to the caller:
// os/exec waits only for the root.
func (t *Tree) Reap() { t.reap(t.Collect(false)) }

func (t *Tree) reap(procs []Stat) {
	for _, p := range procs {
		if p.Zombie() && p.PPID == t.self && p.PID != t.root.PID && stillZombie(p) {
			reap(p.PID)
		}
	}
}

// stillZombie reports whether p, seen a zombie in a scan that may be some
// time old, is that same zombie now: its PID may have been reaped since and
// reused by another child of ours, whose exit status belongs to its own
// Wait.
func stillZombie(p Stat) bool {
	now, err := ReadStat(p.PID)
	return err == nil && now.Zombie() && now.StartTime == p.StartTime && now.PPID == p.PPID
}

// Live returns the tree's processes that still run, reaping its zombies.
func (t *Tree) Live() []ID {
	procs := t.Collect(true)
	t.reap(procs)
	exited := t.isExited()
	var out []ID
	for _, p := range procs {
		if !p.Zombie() && !(p.PID == t.root.PID && exited) {
			out = append(out, p.ID())
		}
	}
	return out
}

// Terminate stops the whole tree: SIGTERM, grace, SIGKILL (Terminate). It
// returns what was still alive at the end (normally nothing).
func (t *Tree) Terminate(grace time.Duration) []ID {
	return Terminate(t, grace, nil)
}
