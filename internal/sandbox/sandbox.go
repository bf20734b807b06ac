// Package sandbox runs one worker process in an operating-system sandbox
// built with bubblewrap (bwrap): its own user, PID, mount, network, IPC, UTS
// and cgroup namespaces, a read-only view of the host with the user's
// secrets and sockets hidden, one writable project directory, an emptied
// environment, no network but an optional proxy socket, a seccomp filter and
// resource limits. docs/sandbox.md explains every flag and what the sandbox
// does not do.
//
// Inside the sandbox, zerg itself is PID 1 (`zerg sandbox-init`, see
// init.go): it forwards TCP to the proxy socket, sets the limits, installs
// the seccomp filter on the command and reaps every process.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/zergrush/zerg/internal/cgroup"
	"github.com/zergrush/zerg/internal/pathx"
)

// Limits are resource limits (setrlimit) of the command and of every process
// it starts. Each applies per process, except Processes (see docs/sandbox.md).
// 0 means no limit.
type Limits struct {
	MemoryBytes   int64 // RLIMIT_DATA: writable private memory per process (not set when Spec.Cgroup bounds it together); each tmpfs's size
	Processes     int   // RLIMIT_NPROC: processes and threads of the sandbox's uid
	CPUSeconds    int   // RLIMIT_CPU: CPU time per process (SIGXCPU, then SIGKILL a second later)
	FileSizeBytes int64 // RLIMIT_FSIZE: largest file a process may write (SIGXFSZ)
	OpenFiles     int   // RLIMIT_NOFILE: open file descriptors per process
}

// Spec describes one sandbox. Every path is absolute; symbolic links in them
// are resolved, and the resolved path is the one used inside.
type Spec struct {
	Workdir  string   // the only project path, bound read-write at the same path; the command starts here
	Home     string   // host directory bound read-write at the same path (the caller sets HOME in Env); "" = none
	ReadOnly []string // extra host paths bound read-only at the same path (needed when a tmpfs hides them)
	Writable []string // extra host paths bound read-write at the same path
	// Shared are host directories bound read-only at the same path even
	// where the sandbox's user cannot reach them (the user's toolchains and
	// package caches in a home of mode 0700; see shared.go).
	Shared []string
	Hide   []string // existing host directories covered by an empty tmpfs: nothing of them is visible inside
	// HideFiles are existing host files covered by /dev/null, bound like
	// every other path without device access: inside, the path is a
	// character device that cannot be opened. For a secret in a directory
	// that cannot be hidden whole, such as an agent's credentials file.
	HideFiles []string
	Env       []string // the complete environment inside (KEY=VALUE)
	// ProxySocket is a host unix socket. When set, it is bound inside and a
	// forwarder listens on 127.0.0.1:3128 inside, piping each TCP connection
	// to it. "" = no network at all (only lo).
	ProxySocket string
	// UID and GID are the unprivileged host user bwrap is launched as (with
	// no supplementary groups); the command runs as the same uid inside.
	// UID 0 means zerg's own user, which must then not be root.
	UID, GID int
	Limits   Limits
	Hostname string // default "sandbox"
	// Cgroup, when set, is the control group every process of the sandbox
	// starts in (its memory and processes as totals; internal/cgroup).
	Cgroup *cgroup.Group
}

// Fixed paths inside the sandbox. /run is an empty tmpfs, so nothing else is
// there.
const (
	insideDir   = "/run/zerg"
	insideExe   = insideDir + "/zerg"
	insideProxy = insideDir + "/proxy.sock"
	// Executable path of zerg inside every sandbox (GOCACHEPROG runs it).
	InsideExecutable = insideExe
	// InsideProxy is where the proxy socket is inside (a container binds
	// it there too).
	InsideProxy = insideProxy
	// ProxyAddr is where the forwarder listens inside the sandbox when
	// Spec.ProxySocket is set.
	ProxyAddr = "127.0.0.1:3128"
)

// InitCommand is the hidden zerg command that runs as PID 1 in the sandbox.
const InitCommand = "sandbox-init"

// Executable is the zerg binary bound into the sandbox to run InitCommand.
// Tests replace it: under `go test` the running binary is not zerg.
var Executable = os.Executable

// systemTmpfs are covered by empty tmpfs in every sandbox: they hold the
// host users' secrets (ssh keys, tokens) and unix sockets (/run, /tmp), which
// a read-only bind would not stop connect() from reaching.
var systemTmpfs = []string{"/tmp", "/home", "/root", "/run", "/var/tmp"}

// Command returns an *exec.Cmd that runs argv inside the sandbox. The caller
// sets Stdin/Stdout/Stderr, may add SysProcAttr fields (Setpgid, Pdeathsig)
// and starts it; Command sets SysProcAttr.Credential itself, and an empty
// environment for bwrap (the sandbox's comes from Spec.Env). argv[0] must be
// an absolute path visible inside. The exit status is the command's, or
// 128+signal when a signal killed it. Cancelling ctx kills bwrap, and with it
// every process in the sandbox.
func Command(ctx context.Context, s Spec, argv ...string) (*exec.Cmd, error) {
	if err := Supported(); err != nil {
		return nil, err
	}
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		return nil, fmt.Errorf("sandbox: bubblewrap (bwrap) is not installed: %w", err)
	}
	args, cred, err := s.bwrapArgs(argv)
	if err != nil {
		return nil, err
	}
	var prep *PrepConfig
	if cred != nil {
		prep = sharedPrep(s.resolvedShared(), func(d string) string { return blockedAncestor(d, s.UID, s.GID) })
	}
	// A cgroup v2 group is entered at clone (CLONE_INTO_CGROUP); a v1
	// group by writing a pid, which the prep step does as root before it
	// starts anything.
	v1Group := s.Cgroup != nil && s.Cgroup.FD() < 0
	if v1Group && cred == nil {
		return nil, errors.New("sandbox: a cgroup v1 group needs zerg to run as root")
	}
	if v1Group && prep == nil {
		prep = &PrepConfig{}
	}
	if prep == nil {
		cmd := exec.CommandContext(ctx, bwrap, args...)
		cmd.Env = []string{} // not nil: nil would hand bwrap zerg's environment
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		s.intoCgroup(cmd.SysProcAttr)
		return cmd, nil
	}
	// Some shared directory is out of the sandbox user's reach: bwrap starts
	// through PrepCommand, as root in a mount namespace of its own, which
	// drops to that user itself.
	exe, err := Executable()
	if err != nil {
		return nil, fmt.Errorf("sandbox: find the zerg executable: %w", err)
	}
	prep.UID, prep.GID = s.UID, s.GID
	if v1Group {
		prep.Cgroups = s.Cgroup.ProcsFiles()
	}
	pargs := append(append([]string{PrepCommand}, prep.Flags()...), "--", bwrap)
	cmd := exec.CommandContext(ctx, exe, append(pargs, args...)...)
	cmd.Env = []string{}
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	privateMounts(cmd.SysProcAttr)
	s.intoCgroup(cmd.SysProcAttr)
	return cmd, nil
}

// intoCgroup starts the process in the spec's cgroup v2 group.
func (s Spec) intoCgroup(a *syscall.SysProcAttr) {
	if fd := s.Cgroup.FD(); fd >= 0 {
		intoCgroupFD(a, fd)
	}
}

// resolvedShared is Spec.Shared as bwrapArgs binds it (bwrapArgs has
// checked every path resolves).
func (s Spec) resolvedShared() []string {
	var out []string
	for _, p := range s.Shared {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			out = append(out, r)
		}
	}
	return out
}

// bwrapArgs validates the spec and returns bwrap's arguments and the
// credential to launch it with (nil: zerg's own).
func (s Spec) bwrapArgs(argv []string) ([]string, *syscall.Credential, error) {
	if len(argv) == 0 || !filepath.IsAbs(argv[0]) {
		return nil, nil, fmt.Errorf("sandbox: the command must start with an absolute path, got %q", argv)
	}
	cred, err := credential(s.UID, s.GID)
	if err != nil {
		return nil, nil, err
	}
	if l := s.Limits; l.MemoryBytes < 0 || l.Processes < 0 || l.CPUSeconds < 0 || l.FileSizeBytes < 0 || l.OpenFiles < 0 {
		return nil, nil, fmt.Errorf("sandbox: a negative limit in %+v (0 means no limit)", l)
	}
	exe, err := Executable()
	if err != nil {
		return nil, nil, fmt.Errorf("sandbox: find the zerg executable: %w", err)
	}
	workdir, err := resolve("workdir", s.Workdir)
	if err != nil {
		return nil, nil, err
	}
	if fi, err := os.Stat(workdir); err != nil || !fi.IsDir() {
		return nil, nil, fmt.Errorf("sandbox: workdir %s is not a directory", workdir)
	}
	// Every tmpfs is memory: each is bounded by the memory limit (and, in a
	// cgroup, their pages count towards its total).
	tmpfsSize := s.Limits.MemoryBytes
	var ops []mountOp
	for _, d := range systemTmpfs {
		ops = append(ops, mountOp{kind: opTmpfs, path: d, size: tmpfsSize})
	}
	add := func(kind opKind, what string, paths ...string) error {
		for _, p := range paths {
			r, err := resolve(what, p)
			if err != nil {
				return err
			}
			ops = append(ops, mountOp{kind: kind, path: r, size: tmpfsSize})
		}
		return nil
	}
	if err := add(opTmpfs, "hide", s.Hide...); err != nil {
		return nil, nil, err
	}
	if err := add(opHideFile, "hidden file", s.HideFiles...); err != nil {
		return nil, nil, err
	}
	if err := add(opReadOnly, "read-only path", s.ReadOnly...); err != nil {
		return nil, nil, err
	}
	if err := add(opReadOnly, "shared directory", s.Shared...); err != nil {
		return nil, nil, err
	}
	ops = append(ops, mountOp{kind: opWritable, path: workdir})
	if s.Home != "" {
		if err := add(opWritable, "home", s.Home); err != nil {
			return nil, nil, err
		}
	}
	if err := add(opWritable, "writable path", s.Writable...); err != nil {
		return nil, nil, err
	}
	sortMounts(ops)

	hostname := s.Hostname
	if hostname == "" {
		hostname = "sandbox"
	}
	args := []string{
		"--die-with-parent", "--new-session",
		"--unshare-all", "--unshare-user", "--disable-userns",
		"--as-pid-1",
		"--hostname", hostname,
		"--ro-bind", "/", "/",
		"--dev", "/dev",
		"--proc", "/proc",
	}
	for _, op := range ops {
		args = append(args, op.args()...)
	}
	if s.ProxySocket != "" {
		sock, err := resolve("proxy socket", s.ProxySocket)
		if err != nil {
			return nil, nil, err
		}
		args = append(args, "--ro-bind", sock, insideProxy)
	}
	args = append(args, "--ro-bind", exe, insideExe, "--cap-drop", "ALL", "--clearenv")
	for _, kv := range s.Env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, nil, fmt.Errorf("sandbox: environment entry %q is not KEY=VALUE", kv)
		}
		args = append(args, "--setenv", k, v)
	}
	args = append(args, "--chdir", workdir, "--", insideExe, InitCommand)
	ic := InitConfig{Limits: s.Limits}
	if s.Cgroup != nil {
		// The group bounds the memory its processes use together; a data
		// segment limit per process would only count what they reserve
		// (the CLI's JavaScript engine reserves more than it ever uses).
		ic.Limits.MemoryBytes = 0
	}
	if s.ProxySocket != "" {
		ic.Proxy = insideProxy
	}
	args = append(args, ic.Flags()...)
	args = append(args, "--")
	args = append(args, argv...)
	return args, cred, nil
}

// credential is how bwrap is launched: as uid/gid with no supplementary
// groups, or as zerg's own user when uid is 0. Root is refused: a
// root-launched bwrap maps the sandbox's user to host root, so every
// root-owned file (/etc/shadow) is the sandbox's own.
func credential(uid, gid int) (*syscall.Credential, error) {
	if uid < 0 || gid < 0 {
		return nil, fmt.Errorf("sandbox: invalid uid %d / gid %d", uid, gid)
	}
	if uid == 0 {
		if os.Geteuid() == 0 {
			return nil, errors.New("sandbox: refusing to run a sandbox as root: give it an unprivileged user (Spec.UID, Spec.GID)")
		}
		return nil, nil
	}
	if gid == 0 {
		return nil, fmt.Errorf("sandbox: refusing gid 0 (root's group) for uid %d", uid)
	}
	if uid == os.Geteuid() && gid == os.Getegid() {
		return nil, nil
	}
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("sandbox: zerg runs as uid %d and cannot launch a sandbox as uid %d: only root can", os.Geteuid(), uid)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, nil
}

// resolve makes p absolute-and-real: the path bwrap binds and the one the
// sandbox sees. bwrap would otherwise follow a link inside the new root,
// where it may point elsewhere.
func resolve(what, p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("sandbox: %s %q is not an absolute path", what, p)
	}
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", fmt.Errorf("sandbox: %s: %w", what, err)
	}
	if r == "/" {
		return "", fmt.Errorf("sandbox: %s %q is the root directory", what, p)
	}
	if pathx.Within(insideDir, r) {
		return "", fmt.Errorf("sandbox: %s %q is under %s, which the sandbox uses itself", what, p, insideDir)
	}
	return r, nil
}

type opKind int

// The order at equal depth: a tmpfs first, so that a bind of the same path
// lands on top of it; a read-only bind after a writable one, so it wins; a
// hidden file's cover last.
const (
	opTmpfs opKind = iota
	opWritable
	opReadOnly
	opHideFile
)

type mountOp struct {
	kind opKind
	path string
	size int64 // a tmpfs's size in bytes; 0: the kernel's default (half the memory)
}

func (m mountOp) args() []string {
	switch m.kind {
	case opTmpfs:
		if m.size > 0 {
			return []string{"--size", strconv.FormatInt(m.size, 10), "--tmpfs", m.path}
		}
		return []string{"--tmpfs", m.path}
	case opWritable:
		return []string{"--bind", m.path, m.path}
	case opHideFile:
		return []string{"--ro-bind", "/dev/null", m.path}
	default:
		return []string{"--ro-bind", m.path, m.path}
	}
}

// sortMounts orders mounts parents first: a later mount covers what an
// earlier one put at or below its path. So the workdir inside a hidden
// workspaces root is bound on top of that root's tmpfs, and a read-only
// directory inside the workdir stays read-only.
func sortMounts(ops []mountOp) {
	sort.SliceStable(ops, func(i, j int) bool {
		di, dj := depth(ops[i].path), depth(ops[j].path)
		if di != dj {
			return di < dj
		}
		return ops[i].kind < ops[j].kind
	})
}

func depth(p string) int { return strings.Count(filepath.Clean(p), "/") }

// InitConfig is what InitCommand is asked to do; Flags and the command's
// flag set (internal/cli/sandbox.go) must agree.
type InitConfig struct {
	Proxy string // the socket inside to forward ProxyAddr to; "" = no forwarder
	// Lifeline is a FIFO whose only writer is the process that started the
	// sandbox: when that process is gone (killed too), the init ends and
	// takes every process of the sandbox with it. A container's engine
	// keeps it running without its client, where bwrap's
	// --die-with-parent would end it.
	Lifeline string
	// ReportOOM makes the init exit with ExitOutOfMemory when the command
	// failed after the kernel killed a process of its memory cgroup (a
	// container's own cgroup, which the driver cannot read once the engine
	// has removed it).
	ReportOOM   bool
	SeccompExec bool // be the seccomp step: limits, seccomp, exec
	// ExecStep makes the init start the command through the seccomp step
	// even where it could trace it. Command never sets it; it is the path
	// taken where ptrace is refused, and tests take it on purpose.
	ExecStep bool
	Limits   Limits
}

// Flag names of InitCommand.
const (
	FlagProxy       = "proxy"
	FlagLifeline    = "lifeline"
	FlagReportOOM   = "report-oom"
	FlagSeccompExec = "seccomp-exec"
	FlagExecStep    = "exec-step"
	FlagMemory      = "memory-bytes"
	FlagProcesses   = "processes"
	FlagCPU         = "cpu-seconds"
	FlagFileSize    = "file-size-bytes"
	FlagOpenFiles   = "open-files"
)

// Flags renders c as InitCommand's flags (without the "--" before argv).
func (c InitConfig) Flags() []string {
	var f []string
	if c.Proxy != "" {
		f = append(f, "--"+FlagProxy, c.Proxy)
	}
	if c.Lifeline != "" {
		f = append(f, "--"+FlagLifeline, c.Lifeline)
	}
	if c.ReportOOM {
		f = append(f, "--"+FlagReportOOM)
	}
	if c.SeccompExec {
		f = append(f, "--"+FlagSeccompExec)
	}
	if c.ExecStep {
		f = append(f, "--"+FlagExecStep)
	}
	num := func(name string, v int64) {
		if v > 0 {
			f = append(f, "--"+name, strconv.FormatInt(v, 10))
		}
	}
	num(FlagMemory, c.Limits.MemoryBytes)
	num(FlagProcesses, int64(c.Limits.Processes))
	num(FlagCPU, int64(c.Limits.CPUSeconds))
	num(FlagFileSize, c.Limits.FileSizeBytes)
	num(FlagOpenFiles, int64(c.Limits.OpenFiles))
	return f
}
