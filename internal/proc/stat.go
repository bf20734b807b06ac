package proc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ID identifies one process across PID reuse: its PID and its start time in
// clock ticks since boot (field 22 of /proc/PID/stat). The kernel never
// gives two processes alive at the same time the same PID, and a recycled
// PID has a later start time, so the pair names one process for good.
type ID struct {
	PID       int    `json:"pid"`
	StartTime uint64 `json:"start_time"`
}

// Stat is what zerg reads from /proc/PID/stat.
type Stat struct {
	PID, PPID, PGID, SID int
	State                byte // R, S, D, Z, T, …
	StartTime            uint64
}

// ID is the process's identity.
func (s Stat) ID() ID { return ID{PID: s.PID, StartTime: s.StartTime} }

// Zombie reports whether the process has exited and waits to be reaped.
func (s Stat) Zombie() bool { return s.State == 'Z' || s.State == 'X' }

// procRoot is where process information is read; tests do not change it,
// but keeping one name makes every read of it easy to find.
const procRoot = "/proc/"

// ReadStat reads and parses /proc/PID/stat.
func ReadStat(pid int) (Stat, error) {
	data, err := os.ReadFile(procRoot + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Stat{}, err
	}
	return ParseStat(pid, data)
}

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

// Scan reads every process's stat. Processes that vanish mid-scan are
// skipped.
func Scan() (map[int]Stat, error) {
	ents, err := os.ReadDir(procRoot)
	if err != nil {
		return nil, fmt.Errorf("scan /proc: %w", err)
	}
	out := make(map[int]Stat, len(ents))
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		if st, err := ReadStat(pid); err == nil {
			out[pid] = st
		}
	}
	return out, nil
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

// Cmdline returns pid's arguments (nil when it cannot be read, or for a
// kernel thread or zombie).
func Cmdline(pid int) []string {
	raw, err := os.ReadFile(procRoot + strconv.Itoa(pid) + "/cmdline")
	if err != nil || len(raw) == 0 {
		return nil
	}
	return strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
}

// hasEnv reports whether pid's initial environment contains the entry kv
// ("KEY=value").
func hasEnv(pid int, kv []byte) bool {
	if len(kv) == 0 {
		return false
	}
	data, err := os.ReadFile(procRoot + strconv.Itoa(pid) + "/environ")
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

// cwdOf returns the current directory of pid, "" when unknown.
func cwdOf(pid int) string {
	p, err := os.Readlink(procRoot + strconv.Itoa(pid) + "/cwd")
	if err != nil {
		return ""
	}
	return p
}
