package proc

import (
	"fmt"
	"os"
	"slices"

	"golang.org/x/sys/unix"
)

// macOS has no /proc: processes are read through sysctl (kern.proc for
// the process table, kern.procargs2 for a process's arguments and initial
// environment, readable for zerg's own user's processes, and for every
// process when zerg runs as root).

// ReadStat reads one process's entry of the process table.
func ReadStat(pid int) (Stat, error) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		// No entry (the sysctl returns nothing): reported as EIO.
		return Stat{}, fmt.Errorf("read process %d: %w", pid, os.ErrNotExist)
	}
	if int(kp.Proc.P_pid) != pid {
		return Stat{}, fmt.Errorf("read process %d: %w", pid, os.ErrNotExist)
	}
	return kinfoStat(kp), nil
}

// kinfoStat is a process table entry as a Stat.
func kinfoStat(kp *unix.KinfoProc) Stat {
	pid := int(kp.Proc.P_pid)
	sid, err := unix.Getsid(pid)
	if err != nil {
		sid = 0 // not ours to ask: rule 5 then does not apply
	}
	tv := kp.Proc.P_starttime
	return Stat{
		PID:       pid,
		PPID:      int(kp.Eproc.Ppid),
		PGID:      int(kp.Eproc.Pgid),
		SID:       sid,
		State:     darwinState(kp.Proc.P_stat),
		StartTime: uint64(tv.Sec)*1_000_000 + uint64(tv.Usec),
	}
}

// darwinState maps p_stat (sys/proc.h) to the letters of Linux's stat.
func darwinState(s int8) byte {
	switch s {
	case 1, 2: // SIDL (being created), SRUN
		return 'R'
	case 3: // SSLEEP
		return 'S'
	case 4: // SSTOP
		return 'T'
	case 5: // SZOMB
		return 'Z'
	}
	return '?'
}

// Scan reads the whole process table.
func Scan() (map[int]Stat, error) {
	kps, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return nil, fmt.Errorf("read the process table: %w", err)
	}
	out := make(map[int]Stat, len(kps))
	for i := range kps {
		if pid := int(kps[i].Proc.P_pid); pid > 0 {
			out[pid] = kinfoStat(&kps[i])
		}
	}
	return out, nil
}

// procargs returns pid's arguments and initial environment.
func procargs(pid int) (argv, env []string, err error) {
	buf, err := unix.SysctlRaw("kern.procargs2", pid)
	if err != nil {
		return nil, nil, err
	}
	return parseProcargs2(buf)
}

// Cmdline returns pid's arguments (nil when they cannot be read: another
// user's process, or a zombie).
func Cmdline(pid int) []string {
	argv, _, err := procargs(pid)
	if err != nil || len(argv) == 0 {
		return nil
	}
	return argv
}

// hasEnv reports whether pid's initial environment contains the entry kv
// ("KEY=value").
func hasEnv(pid int, kv []byte) bool {
	if len(kv) == 0 {
		return false
	}
	_, env, err := procargs(pid)
	return err == nil && slices.Contains(env, string(kv))
}

// cwdOf returns "": a process's working directory is read with libproc's
// proc_pidinfo, which zerg does not call (no cgo). The rule that uses it
// concerns orphans re-parented to zerg, and without a child subreaper
// macOS re-parents orphans to launchd instead.
func cwdOf(int) string { return "" }
