package rush

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/proc"
	"github.com/zergrush/zerg/internal/runstate"
)

// What shows which of proc's paths a zerg process took: the system calls
// it made, counted by strace (make test installs it), and the signals
// pending for a process.

// zergTraced runs zerg like zerg() under strace -f, counting the calls of
// each of the named system calls zerg and its children made, except those
// whose second argument is 0 (a null signal).
func (p *project) zergTraced(syscalls []string, args ...string) (result, map[string]int) {
	p.t.Helper()
	strace, err := exec.LookPath("strace")
	if err != nil {
		p.t.Fatal("strace is missing: make test installs it (apt-get install strace)")
	}
	out := filepath.Join(p.t.TempDir(), "strace.txt")
	cmd := exec.Command(strace, append([]string{"-f", "-qq", "-e", "trace=" + strings.Join(syscalls, ","), "-o", out, zergBin}, args...)...)
	cmd.Dir, cmd.Env = p.dir, p.env()
	var so, se strings.Builder
	cmd.Stdout, cmd.Stderr = &so, &se
	r := result{}
	if err := cmd.Run(); err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			p.t.Fatalf("strace zerg %v: %v", args, err)
		}
		r.code = ee.ExitCode()
	}
	r.stdout, r.stderr = so.String(), se.String()
	trace, err := os.ReadFile(out)
	if err != nil {
		p.t.Fatal(err)
	}
	calls := map[string]int{}
	for _, m := range traceCallRE.FindAllStringSubmatch(string(trace), -1) {
		if m[2] == "0" {
			// Signal 0 delivers nothing: Go's os package sends it
			// through a pidfd of its own process once, to learn whether
			// the kernel has pidfds, whichever path proc takes.
			continue
		}
		calls[m[1]]++
	}
	return r, calls
}

// traceCallRE is a call in strace -f's output ("PID name(first, second…"),
// with its second argument (a signal, for kill and pidfd_send_signal);
// the "<... name resumed>" halves of interrupted calls are not counted
// again.
var traceCallRE = regexp.MustCompile(`(?m)^\d+\s+([a-z_0-9]+)\([^,)]*(?:, ([^,)]*))?`)

// firstPIDs is the first process the log recorded for task: its CLI.
func firstPIDs(t *testing.T, evs []eventlog.Event, task string) proc.ID {
	for _, e := range evs {
		var d runstate.AttemptPIDs
		if e.Type == runstate.EvAttemptPIDs && e.Task == task && e.Decode(&d) == nil && len(d.PIDs) > 0 {
			return d.PIDs[0]
		}
	}
	t.Fatalf("no %s event for %s", runstate.EvAttemptPIDs, task)
	return proc.ID{}
}

// sigkillPending reports whether SIGKILL is pending for pid.
func sigkillPending(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if ok && (k == "SigPnd" || k == "ShdPnd") {
			if mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64); err == nil && mask&(1<<(syscall.SIGKILL-1)) != 0 {
				return true
			}
		}
	}
	return false
}
