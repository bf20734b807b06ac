package proc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ID identifies one process across PID reuse: its PID and its start time
// (Linux: clock ticks since boot, field 22 of /proc/PID/stat; macOS:
// microseconds since the epoch, kinfo_proc's p_starttime). The kernel never
// gives two processes alive at the same time the same PID, and a recycled
// PID has a later start time, so the pair names one process for good.
// Start times are compared on the machine that recorded them only.
type ID struct {
	PID       int    `json:"pid"`
	StartTime uint64 `json:"start_time"`
}

// Stat is what zerg reads of a process (Linux: /proc/PID/stat; macOS: the
// kern.proc sysctl).
type Stat struct {
	PID, PPID, PGID, SID int
	State                byte // R, S, D, Z, T, …
	StartTime            uint64
}

// ID is the process's identity.
func (s Stat) ID() ID { return ID{PID: s.PID, StartTime: s.StartTime} }

// Zombie reports whether the process has exited and waits to be reaped.
func (s Stat) Zombie() bool { return s.State == 'Z' || s.State == 'X' }

// ParseStat parses the contents of /proc/PID/stat. The command name
// (field 2) may contain spaces and parentheses, so fields are counted from
// the last ')'.
func ParseStat(pid int, data []byte) (Stat, error) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 || i+2 > len(data) {
		return Stat{}, fmt.Errorf("parse /proc/%d/stat", pid)
	}
	f := strings.Fields(string(data[i+1:]))
	// f[0] is field 3 (state); field N is f[N-3].
	if len(f) < 20 || len(f[0]) != 1 {
		return Stat{}, fmt.Errorf("parse /proc/%d/stat: %d fields", pid, len(f))
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgid, err2 := strconv.Atoi(f[2])
	sid, err3 := strconv.Atoi(f[3])
	start, err4 := strconv.ParseUint(f[19], 10, 64)
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return Stat{}, fmt.Errorf("parse /proc/%d/stat: %w", pid, err)
	}
	return Stat{PID: pid, PPID: ppid, PGID: pgid, SID: sid, State: f[0][0], StartTime: start}, nil
}

// Identify returns the identity of the process pid now names.
func Identify(pid int) (ID, error) {
	if pid <= 0 {
		return ID{}, fmt.Errorf("no process %d", pid)
	}
	st, err := ReadStat(pid)
	if err != nil {
		return ID{}, err
	}
	return st.ID(), nil
}

// Alive reports whether the process id names still runs: its PID names a
// process with the same start time that is not a zombie.
func (id ID) Alive() bool {
	if id.PID <= 0 {
		return false
	}
	st, err := ReadStat(id.PID)
	return err == nil && st.StartTime == id.StartTime && !st.Zombie()
}

// parseProcargs2 parses what macOS's kern.procargs2 sysctl returns for a
// process: its argc as a 32-bit integer, the executable's path, NUL
// padding, then argc NUL-terminated arguments and the NUL-terminated
// entries of the initial environment, which end at an empty string (the
// kernel's own strings follow). It is here, not in the darwin file, so
// that the tests run it where they run.
func parseProcargs2(buf []byte) (argv, env []string, err error) {
	if len(buf) < 4 {
		return nil, nil, errors.New("procargs2: too short")
	}
	argc := int(binary.LittleEndian.Uint32(buf))
	rest := buf[4:]
	// The executable's path, then the padding.
	i := bytes.IndexByte(rest, 0)
	if i < 0 {
		return nil, nil, errors.New("procargs2: no executable path")
	}
	rest = rest[i:]
	for len(rest) > 0 && rest[0] == 0 {
		rest = rest[1:]
	}
	next := func() (string, bool) {
		i := bytes.IndexByte(rest, 0)
		if i < 0 {
			return "", false
		}
		s := string(rest[:i])
		rest = rest[i+1:]
		return s, true
	}
	for range argc {
		a, ok := next()
		if !ok {
			return nil, nil, fmt.Errorf("procargs2: %d of %d arguments", len(argv), argc)
		}
		argv = append(argv, a)
	}
	for {
		e, ok := next()
		if !ok || e == "" {
			return argv, env, nil
		}
		env = append(env, e)
	}
}
