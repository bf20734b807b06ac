package proc

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Linux: every process is read from /proc.

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
