//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The seccomp filter of the command (classic BPF over struct seccomp_data).
//
//   - socket(AF_UNIX, …) → EPERM. The tmpfs over /run, /tmp and the homes
//     hides the usual host sockets, but any socket left in a read-only bind
//     (a database under /var/lib, say) would still accept connect(): only
//     the forwarder, outside the filter, may speak AF_UNIX. socketpair stays
//     allowed: it reaches nothing outside and Node uses it for child stdio.
//   - io_uring_setup/enter/register → EPERM: io_uring performs operations
//     without the syscalls that this filter sees.
//   - x32 system calls (amd64) → EPERM: another numbering of the same calls,
//     which would slip past the checks above.
//   - any other architecture (i386 code on amd64, with socketcall) → the
//     process is killed: its numbers mean other calls.
//   - everything else is allowed.
const (
	offNr   = 0  // seccomp_data.nr
	offArch = 4  // seccomp_data.arch
	offArg0 = 16 // seccomp_data.args[0], low 32 bits on little-endian machines
)

// io_uring's system calls, numbered alike on every architecture.
const (
	sysIOUringSetup    = 425
	sysIOUringEnter    = 426
	sysIOUringRegister = 427
)

// retEPERM is SECCOMP_RET_ERRNO with EPERM.
const retEPERM = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)

// filterProgram builds the filter for one architecture: its audit arch
// value, its x32 syscall bit (0: no such ABI) and its number of socket(2).
// The io_uring calls have the same numbers everywhere.
func filterProgram(arch, x32Bit, sysSocket uint32) []unix.SockFilter {
	stmt := func(code uint16, k uint32) unix.SockFilter { return unix.SockFilter{Code: code, K: k} }
	jump := func(code uint16, k uint32, jt, jf uint8) unix.SockFilter {
		return unix.SockFilter{Code: code, K: k, Jt: jt, Jf: jf}
	}
	const (
		ldw = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		ret = unix.BPF_RET | unix.BPF_K
	)
	// The tail, whose positions the jumps count towards.
	tail := []unix.SockFilter{
		stmt(ret, unix.SECCOMP_RET_ALLOW), // allow
		stmt(ldw, offArg0),                // socket:
		jump(jeq, unix.AF_UNIX, 1, 0),     //   AF_UNIX → eperm
		stmt(ret, unix.SECCOMP_RET_ALLOW), //   other families
		stmt(ret, retEPERM),               // eperm
		stmt(ret, unix.SECCOMP_RET_KILL_PROCESS),
	}
	const (
		tAllow  = 0
		tSocket = 1
		tEPERM  = 4
		tKill   = 5
	)
	var checks []unix.SockFilter
	if x32Bit != 0 {
		checks = append(checks, unix.SockFilter{Code: jge, K: x32Bit}) // → eperm
	}
	checks = append(checks,
		unix.SockFilter{Code: jeq, K: sysSocket}, // → socket
		unix.SockFilter{Code: jeq, K: sysIOUringSetup},
		unix.SockFilter{Code: jeq, K: sysIOUringEnter},
		unix.SockFilter{Code: jeq, K: sysIOUringRegister},
	)
	// head: load arch, check it, load nr; then the checks; then the tail.
	head := 3
	n := len(checks)
	prog := make([]unix.SockFilter, 0, head+n+len(tail))
	// From instruction i, a jump of d lands on i+1+d.
	to := func(i, target int) uint8 { return uint8(target - i - 1) }
	tailAt := head + n
	prog = append(prog,
		stmt(ldw, offArch),
		jump(jeq, arch, 0, to(1, tailAt+tKill)),
		stmt(ldw, offNr),
	)
	for j, c := range checks {
		i := head + j
		target := tailAt + tEPERM
		if c.K == sysSocket && c.Code == jeq {
			target = tailAt + tSocket
		}
		c.Jt = to(i, target)
		if j == n-1 {
			c.Jf = to(i, tailAt+tAllow)
		}
		prog = append(prog, c)
	}
	return append(prog, tail...)
}

// installFilter sets no_new_privs (required to install a filter without
// privileges, and it keeps setuid binaries from gaining any) and installs the
// filter: on the calling thread only, or with tsync on every thread of the
// process.
func installFilter(tsync bool) error {
	if auditArch == 0 {
		return errors.New("seccomp: no filter for this architecture")
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("set no_new_privs: %w", err)
	}
	prog := filterProgram(auditArch, x32Bit, sysSocket)
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	var flags uintptr
	if tsync {
		flags = unix.SECCOMP_FILTER_FLAG_TSYNC
	}
	r, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&fprog)))
	switch {
	case errno != 0:
		return fmt.Errorf("install the seccomp filter: %w", errno)
	case r != 0:
		return fmt.Errorf("install the seccomp filter: thread %d could not be synchronised", r)
	}
	return nil
}
