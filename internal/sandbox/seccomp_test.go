//go:build linux

package sandbox

import (
	"encoding/binary"
	"testing"

	"golang.org/x/sys/unix"
)

// runBPF evaluates a classic BPF program over a seccomp_data, supporting the
// instructions filterProgram uses.
func runBPF(t *testing.T, prog []unix.SockFilter, nr int32, arch uint32, args ...uint64) uint32 {
	t.Helper()
	data := make([]byte, 64)
	binary.LittleEndian.PutUint32(data[0:], uint32(nr))
	binary.LittleEndian.PutUint32(data[4:], arch)
	for i, a := range args {
		binary.LittleEndian.PutUint64(data[16+8*i:], a)
	}
	var acc uint32
	for pc := 0; pc < len(prog); pc++ {
		in := prog[pc]
		switch in.Code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			acc = binary.LittleEndian.Uint32(data[in.K:])
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K:
			if acc == in.K {
				pc += int(in.Jt)
			} else {
				pc += int(in.Jf)
			}
		case unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K:
			if acc >= in.K {
				pc += int(in.Jt)
			} else {
				pc += int(in.Jf)
			}
		case unix.BPF_RET | unix.BPF_K:
			return in.K
		default:
			t.Fatalf("instruction %d: unknown code %#x", pc, in.Code)
		}
	}
	t.Fatal("the program fell off its end")
	return 0
}

// The numbers the live filter uses are the ones checked here.
func TestFilterNumbers(t *testing.T) {
	if unix.SYS_IO_URING_SETUP != sysIOUringSetup || unix.SYS_IO_URING_ENTER != sysIOUringEnter || unix.SYS_IO_URING_REGISTER != sysIOUringRegister {
		t.Fatal("io_uring syscall numbers differ on this architecture")
	}
}

// Every decision of the filter, on both architectures zerg builds for,
// including the one a live test cannot reach: code of a foreign
// architecture is killed.
func TestFilterProgram(t *testing.T) {
	const (
		allow = unix.SECCOMP_RET_ALLOW
		eperm = retEPERM
		kill  = unix.SECCOMP_RET_KILL_PROCESS
	)
	type call struct {
		name string
		nr   int32
		arch uint32
		args []uint64
		want uint32
	}
	const (
		x86Socket, x86Read, x86Getpid = 41, 0, 39
		armSocket                     = 198
	)
	x86 := filterProgram(unix.AUDIT_ARCH_X86_64, 0x40000000, x86Socket)
	arm := filterProgram(unix.AUDIT_ARCH_AARCH64, 0, armSocket)
	for _, tc := range []struct {
		arch  string
		prog  []unix.SockFilter
		calls []call
	}{
		{"amd64", x86, []call{
			{"read", x86Read, unix.AUDIT_ARCH_X86_64, nil, allow},
			{"socket(AF_UNIX)", x86Socket, unix.AUDIT_ARCH_X86_64, []uint64{unix.AF_UNIX}, eperm},
			{"socket(AF_UNIX) with high bits set", x86Socket, unix.AUDIT_ARCH_X86_64, []uint64{1<<32 | unix.AF_UNIX}, eperm},
			{"socket(AF_INET)", x86Socket, unix.AUDIT_ARCH_X86_64, []uint64{unix.AF_INET}, allow},
			{"socket(AF_INET6)", x86Socket, unix.AUDIT_ARCH_X86_64, []uint64{unix.AF_INET6}, allow},
			{"socketpair(AF_UNIX)", 53, unix.AUDIT_ARCH_X86_64, []uint64{unix.AF_UNIX}, allow},
			{"io_uring_setup", 425, unix.AUDIT_ARCH_X86_64, nil, eperm},
			{"io_uring_enter", 426, unix.AUDIT_ARCH_X86_64, nil, eperm},
			{"io_uring_register", 427, unix.AUDIT_ARCH_X86_64, nil, eperm},
			{"x32 getpid", 0x40000000 | x86Getpid, unix.AUDIT_ARCH_X86_64, nil, eperm},
			{"x32 socket", 0x40000000 | x86Socket, unix.AUDIT_ARCH_X86_64, []uint64{unix.AF_INET}, eperm},
			{"i386 socketcall", 102, unix.AUDIT_ARCH_I386, nil, kill},
			{"i386 read", 3, unix.AUDIT_ARCH_I386, nil, kill},
		}},
		{"arm64", arm, []call{
			{"socket(AF_UNIX)", armSocket, unix.AUDIT_ARCH_AARCH64, []uint64{unix.AF_UNIX}, eperm},
			{"socket(AF_INET)", armSocket, unix.AUDIT_ARCH_AARCH64, []uint64{unix.AF_INET}, allow},
			{"io_uring_setup", 425, unix.AUDIT_ARCH_AARCH64, nil, eperm},
			{"getpid", 172, unix.AUDIT_ARCH_AARCH64, nil, allow},
			{"arm32 code", 281, unix.AUDIT_ARCH_ARM, nil, kill},
		}},
	} {
		for _, c := range tc.calls {
			if got := runBPF(t, tc.prog, c.nr, c.arch, c.args...); got != c.want {
				t.Errorf("%s %s: %#x, want %#x", tc.arch, c.name, got, c.want)
			}
		}
	}
}
