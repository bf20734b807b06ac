// Package cgroup gives one sandboxed command (a worker and everything it
// starts, a verification, a gate) a control group of its own, so that its
// memory and its processes are limited as totals, not per process: a
// worker that starts five processes of 1 GiB each under a 2 GiB limit
// gets at most 2 GiB, whatever uid or rlimit each has. It uses cgroup v2
// where zerg may create groups with the memory and pids controllers, else
// the v1 memory and pids hierarchies (as root), else nothing (the
// sandbox's per-process rlimits still hold; docs/sandbox.md says so).
package cgroup

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/zergrush/zerg/internal/proc"
)

// Limits are totals over every process of a group; 0 means none.
type Limits struct {
	MemoryBytes int64
	Processes   int
}

// Manager creates groups below zerg's own place in the hierarchy.
type Manager struct {
	// v2 is the directory new groups go in (cgroup v2), "" when v2 is not
	// used.
	v2 string
	// v1 maps the memory and pids controllers to the directories new
	// groups go in (cgroup v1), nil when v1 is not used.
	v1 map[string]string
}

// ErrUnavailable is returned by Detect when no cgroup can be used here.
var ErrUnavailable = errors.New("no cgroup zerg can create here")

// fsRoot is where cgroup filesystems are read from; tests point it at a
// directory laid out like /sys/fs/cgroup.
var fsRoot = "/proc/self"

// Detect finds where zerg may create groups: cgroup v2 when zerg's own
// group offers the memory and pids controllers to its children (a group
// delegated to zerg's user, or root's), else cgroup v1's memory and pids
// hierarchies when zerg may write them (root). The error says why neither.
func Detect() (*Manager, error) {
	mounts, err := cgroupMounts(filepath.Join(fsRoot, "mountinfo"))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	own, err := ownGroups(filepath.Join(fsRoot, "cgroup"))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	var why []string
	if mnt, ok := mounts["cgroup2"]; ok {
		dir, err := v2Parent(filepath.Join(mnt, own[""]))
		if err == nil {
			return &Manager{v2: dir}, nil
		}
		why = append(why, "cgroup v2: "+err.Error())
	}
	v1 := map[string]string{}
	for _, c := range []string{"memory", "pids"} {
		mnt, ok := mounts[c]
		if !ok {
			why = append(why, "cgroup v1: no "+c+" hierarchy")
			break
		}
		dir := filepath.Join(mnt, own[c], "zerg")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			why = append(why, fmt.Sprintf("cgroup v1: %v", err))
			break
		}
		v1[c] = dir
	}
	if len(v1) == 2 {
		return &Manager{v1: v1}, nil
	}
	return nil, fmt.Errorf("%w: %s", ErrUnavailable, strings.Join(why, "; "))
}

// String says which cgroups the manager uses.
func (m *Manager) String() string {
	if m == nil {
		return "none"
	}
	if m.v2 != "" {
		return "cgroup v2 (" + m.v2 + ")"
	}
	return "cgroup v1 (memory, pids)"
}

// v2Parent returns the directory for zerg's groups below own (zerg's own
// group): own/zerg, with the memory and pids controllers enabled for its
// children. A group with processes cannot pass controllers to children
// (cgroup v2's rule), so zerg's own group must offer them already, and
// zerg creates its groups one level further down.
func v2Parent(own string) (string, error) {
	ctrl, err := os.ReadFile(filepath.Join(own, "cgroup.controllers"))
	if err != nil {
		return "", err
	}
	have := strings.Fields(string(ctrl))
	for _, c := range []string{"memory", "pids"} {
		if !slices.Contains(have, c) {
			return "", fmt.Errorf("the %s controller is not available in %s", c, own)
		}
	}
	dir := filepath.Join(own, "zerg")
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("+memory +pids"), 0o644); err != nil {
		return "", fmt.Errorf("enable memory and pids below %s: %w", dir, err)
	}
	return dir, nil
}

// Group is one command's control group (in each v1 hierarchy, or one v2
// directory).
type Group struct {
	v2   string
	dirs []string // v1: memory, pids
	fd   int      // v2: the open directory, for CLONE_INTO_CGROUP; -1 otherwise
}

// New creates the group name (a path element) with the limits.
func (m *Manager) New(name string, l Limits) (*Group, error) {
	if m == nil {
		return nil, ErrUnavailable
	}
	if name == "" || strings.ContainsAny(name, "/\x00") || name == "." || name == ".." {
		return nil, fmt.Errorf("create cgroup: bad name %q", name)
	}
	g := &Group{fd: -1}
	if m.v2 != "" {
		dir := filepath.Join(m.v2, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			return nil, fmt.Errorf("create cgroup: %w", err)
		}
		g.v2 = dir
		if err := g.setLimits(l); err != nil {
			_ = g.Close() // undoing a half-made group: the error returned is the one to report
			return nil, err
		}
		fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
		if err != nil {
			_ = g.Close()
			return nil, fmt.Errorf("open cgroup: %w", err)
		}
		g.fd = fd
		return g, nil
	}
	for _, c := range []string{"memory", "pids"} {
		dir := filepath.Join(m.v1[c], name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			_ = g.Close()
			return nil, fmt.Errorf("create cgroup: %w", err)
		}
		g.dirs = append(g.dirs, dir)
	}
	if err := g.setLimits(l); err != nil {
		_ = g.Close()
		return nil, err
	}
	return g, nil
}

func (g *Group) setLimits(l Limits) error {
	write := func(dir, file, v string) error {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(v), 0o644); err != nil {
			return fmt.Errorf("set cgroup limit %s: %w", file, err)
		}
		return nil
	}
	if g.v2 != "" {
		if l.MemoryBytes > 0 {
			if err := write(g.v2, "memory.max", strconv.FormatInt(l.MemoryBytes, 10)); err != nil {
				return err
			}
			// No swap beyond the limit, where the kernel has swap accounting.
			_ = write(g.v2, "memory.swap.max", "0")
		}
		if l.Processes > 0 {
			return write(g.v2, "pids.max", strconv.Itoa(l.Processes))
		}
		return nil
	}
	if l.MemoryBytes > 0 {
		if err := write(g.dirs[0], "memory.limit_in_bytes", strconv.FormatInt(l.MemoryBytes, 10)); err != nil {
			return err
		}
		if _, err := os.Stat(filepath.Join(g.dirs[0], "memory.memsw.limit_in_bytes")); err == nil {
			if err := write(g.dirs[0], "memory.memsw.limit_in_bytes", strconv.FormatInt(l.MemoryBytes, 10)); err != nil {
				return err
			}
		}
	}
	if l.Processes > 0 {
		return write(g.dirs[1], "pids.max", strconv.Itoa(l.Processes))
	}
	return nil
}

// FD is the open group directory to start a process in with
// CLONE_INTO_CGROUP (syscall.SysProcAttr.UseCgroupFD), -1 when the group
// must be joined by writing a pid to ProcsFiles instead (cgroup v1).
func (g *Group) FD() int {
	if g == nil {
		return -1
	}
	return g.fd
}

// ProcsFiles are the cgroup.procs files a process writes its pid to to
// join the group (before it starts anything).
func (g *Group) ProcsFiles() []string {
	if g == nil {
		return nil
	}
	if g.v2 != "" {
		return []string{filepath.Join(g.v2, "cgroup.procs")}
	}
	var out []string
	for _, d := range g.dirs {
		out = append(out, filepath.Join(d, "cgroup.procs"))
	}
	return out
}

// Join moves the calling process into the groups of files (ProcsFiles),
// which its children then start in.
func Join(files []string) error {
	pid := strconv.Itoa(os.Getpid())
	for _, f := range files {
		if err := os.WriteFile(f, []byte(pid), 0o644); err != nil {
			return fmt.Errorf("join cgroup %s: %w", filepath.Dir(f), err)
		}
	}
	return nil
}

// PIDs are the processes in the group now.
func (g *Group) PIDs() []int {
	seen := map[int]bool{}
	var out []int
	for _, f := range g.ProcsFiles() {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, l := range strings.Fields(string(data)) {
			if pid, err := strconv.Atoi(l); err == nil && !seen[pid] {
				seen[pid] = true
				out = append(out, pid)
			}
		}
	}
	return out
}

// MemoryPeak is the most memory the group's processes used together, in
// bytes (0 when the kernel does not say).
func (g *Group) MemoryPeak() int64 {
	file := ""
	switch {
	case g == nil:
		return 0
	case g.v2 != "":
		file = filepath.Join(g.v2, "memory.peak")
	default:
		file = filepath.Join(g.dirs[0], "memory.max_usage_in_bytes")
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	return n
}

// OOMKills is how many processes of the group the kernel killed for
// passing its memory limit.
func (g *Group) OOMKills() int {
	file := ""
	switch {
	case g == nil:
		return 0
	case g.v2 != "":
		file = filepath.Join(g.v2, "memory.events")
	default:
		file = filepath.Join(g.dirs[0], "memory.oom_control")
	}
	f, err := os.Open(file)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), " "); ok && k == "oom_kill" {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

// Close kills what is left in the group (every process in it was started
// by zerg for this command) and removes it. Safe to call twice.
func (g *Group) Close() error {
	if g == nil {
		return nil
	}
	if g.fd >= 0 {
		_ = syscall.Close(g.fd) // a directory opened read-only: nothing to lose
		g.fd = -1
	}
	var errs []error
	// cgroup v2's cgroup.kill where there is one, every member otherwise.
	killFile := ""
	if g.v2 != "" {
		killFile = filepath.Join(g.v2, "cgroup.kill")
	}
	proc.KillMembers(g, killFile)
	dirs := g.dirs
	if g.v2 != "" {
		dirs = []string{g.v2}
	}
	for _, d := range dirs {
		var err error
		for i := 0; i < 50; i++ {
			if err = os.Remove(d); err == nil || errors.Is(err, os.ErrNotExist) {
				err = nil
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("remove cgroup: %w", err))
		}
	}
	g.dirs, g.v2 = nil, ""
	return errors.Join(errs...)
}

// cgroupMounts maps "cgroup2" and each v1 controller to its mount point,
// from a mountinfo file.
func cgroupMounts(mountinfo string) (map[string]string, error) {
	f, err := os.Open(mountinfo)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options … - fstype source superoptions
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		pf, qf := strings.Fields(pre), strings.Fields(post)
		if len(pf) < 5 || len(qf) < 3 {
			continue
		}
		switch qf[0] {
		case "cgroup2":
			if _, seen := out["cgroup2"]; !seen {
				out["cgroup2"] = pf[4]
			}
		case "cgroup":
			for _, o := range strings.Split(qf[2], ",") {
				if o == "memory" || o == "pids" {
					out[o] = pf[4]
				}
			}
		}
	}
	return out, sc.Err()
}

// ownGroups maps each v1 controller (and "" for v2) to the calling
// process's group path, from a /proc/self/cgroup file.
func ownGroups(file string) (map[string]string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		parts := strings.SplitN(l, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[1] == "" {
			out[""] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			out[c] = parts[2]
		}
	}
	return out, nil
}
