package rush

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/runstate"
)

// The live view on the real binary: each test runs zerg in a tmux pane (a
// real terminal: raw mode, the alternate screen, keys) and reads the pane
// as a person sees it (capture-pane). make test installs tmux.

// pane is one zerg command line in its own tmux server.
type pane struct {
	t    *testing.T
	sock string
}

// startPane runs zerg with args in a 120×45 tmux pane of the project. The
// shell prints ZERG-EXIT=<code> when zerg exits and keeps the pane.
func (p *project) startPane(extraEnv []string, args ...string) *pane {
	p.t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		p.t.Fatal("tmux is missing: make test installs it (apt-get install tmux)")
	}
	line := zergBin + " " + strings.Join(args, " ") + "; echo ZERG-EXIT=$?; exec sleep 600"
	return p.tmuxPane("", 120, 45, line, append([]string{"TERM=screen"}, extraEnv...))
}

// tmuxPane runs the shell line in a width×height pane of its own tmux
// server (conf: its configuration, "" for none) in the project.
func (p *project) tmuxPane(conf string, width, height int, line string, env []string) *pane {
	p.t.Helper()
	// A socket path must be short (sun_path): not under t.TempDir.
	dir, err := os.MkdirTemp("", "zt")
	if err != nil {
		p.t.Fatal(err)
	}
	confFile := "/dev/null"
	if conf != "" {
		confFile = filepath.Join(dir, "tmux.conf")
		if err := os.WriteFile(confFile, []byte(conf), 0o644); err != nil {
			p.t.Fatal(err)
		}
	}
	tp := &pane{t: p.t, sock: filepath.Join(dir, "s")}
	cmd := exec.Command("tmux", "-S", tp.sock, "-f", confFile, "new-session", "-d", "-x", strconv.Itoa(width), "-y", strconv.Itoa(height), "-c", p.dir, "sh", "-c", line)
	cmd.Env = append(p.env(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		p.t.Fatalf("tmux: %v\n%s", err, out)
	}
	p.t.Cleanup(func() {
		exec.Command("tmux", "-S", tp.sock, "kill-server").Run()
		os.RemoveAll(dir)
	})
	return tp
}

// screen is what the pane shows now.
func (tp *pane) screen() string {
	out, err := exec.Command("tmux", "-S", tp.sock, "capture-pane", "-p").Output()
	if err != nil {
		tp.t.Fatalf("capture-pane: %v", err)
	}
	return string(out)
}

// waitFor waits until the pane shows every one of want at once, and
// returns that screen.
func (tp *pane) waitFor(timeout time.Duration, want ...string) string {
	tp.t.Helper()
	deadline := time.Now().Add(timeout)
	var s string
	for {
		s = tp.screen()
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains(s, w)
		}
		if ok {
			return s
		}
		if time.Now().After(deadline) {
			tp.t.Fatalf("the pane did not show %q within %s:\n%s", want, timeout, s)
		}
		time.Sleep(150 * time.Millisecond)
	}
}

func (tp *pane) keys(k ...string) {
	tp.t.Helper()
	if out, err := exec.Command("tmux", append([]string{"-S", tp.sock, "send-keys"}, k...)...).CombinedOutput(); err != nil {
		tp.t.Fatalf("send-keys %v: %v\n%s", k, err, out)
	}
}

// slowNames makes L1-names take a few seconds, so keys land while workers
// run.
func slowNames(t *testing.T, dir string) {
	editFile(t, scenarioPath(dir), func(s string) string {
		return strings.Replace(s, "      - tools: [{name: Write, input: {file_path: data/names.txt",
			"      - delay: 6s\n        tools: [{name: Write, input: {file_path: data/names.txt", 1)
	})
}

var workersRow = regexp.MustCompile(`workers \(\d+ running\)`)

var barRow = regexp.MustCompile(`level 1  [█░]{10,}  4/4  merged`)

// TestLiveViewShowsProgressAndAFailure: on a terminal a rehearsal rush
// shows the live view (not the progress lines): bars per level, a row per
// running worker, then L2-shout's failed verification with its diagnosis
// while its retry runs; the view ends with the run and the report prints
// on the restored terminal.
func TestLiveViewShowsProgressAndAFailure(t *testing.T) {
	t.Parallel()
	p := newProject(t, failingShout(t))
	tp := p.startPane(nil, "rush", "demo", "--rehearse")
	s := tp.waitFor(2*time.Minute, "zerg demo · running (rehearsal)", "workers (", "TASK", "LAST TOOL", "level 1", "ETA ")
	if !strings.HasPrefix(s, "zerg demo · ") {
		t.Errorf("the view is not alone on the screen (progress lines drawn over it?):\n%s", s)
	}
	s = tp.waitFor(2*time.Minute, "failures (1)", "L2-shout failed 1 time(s)", "verification `sh bin/shout | grep -qx LINUS` failed", "diagnosis: ")
	if !barRow.MatchString(s) {
		t.Errorf("no full bar for the merged level 1:\n%s", s)
	}
	s = tp.waitFor(2*time.Minute, "ZERG-EXIT=1")
	for _, want := range []string{"demo: NOT DELIVERED", "L2-shout FAILED (level 2, 2 attempt(s))", "diagnosis: "} {
		if !strings.Contains(s, want) {
			t.Errorf("the report after the view lacks %q:\n%s", want, s)
		}
	}
}

// TestPlainLinesWhenAsked: the control of the test above: ZERG_NO_TUI=1
// on the same terminal prints the progress lines and no view.
func TestPlainLinesWhenAsked(t *testing.T) {
	t.Parallel()
	p := newProject(t, nil)
	tp := p.startPane([]string{"ZERG_NO_TUI=1"}, "rush", "demo", "--rehearse")
	s := tp.waitFor(2*time.Minute, "ZERG-EXIT=0")
	if !strings.Contains(s, "level 3: merged 1 task(s)") || workersRow.MatchString(s) || strings.Contains(s, "ETA ") {
		t.Errorf("want the plain lines, no view:\n%s", s)
	}
}

// failingShout: L2-shout's verification never passes, and each attempt
// takes 3s, so its first failure shows while the second runs.
func failingShout(t *testing.T) func(dir string) {
	return func(dir string) {
		editFile(t, scenarioPath(dir), func(s string) string {
			s = strings.Replace(s, `match_regexp: "(?s)Task L2-shout:.*Previous attempt failed"`, `match_regexp: "never matches"`, 1)
			return strings.Replace(s, "    match: \"Task L2-shout:\"\n    turns:\n      - tools:", "    match: \"Task L2-shout:\"\n    turns:\n      - delay: 3s\n        tools:", 1)
		})
		editFile(t, filepath.Join(dir, ".zerg", "config.yaml"), func(s string) string {
			return strings.Replace(s, "task_retries: 2", "task_retries: 1", 1)
		})
	}
}

// TestLiveViewCtrlCStopsTheRun: Ctrl-C in the view stops the run as a
// Ctrl-C without it does: the stop recorded, no worker left, exit 3, and
// --resume delivers.
func TestLiveViewCtrlCStopsTheRun(t *testing.T) {
	t.Parallel()
	p := newProject(t, func(dir string) { slowNames(t, dir) })
	tp := p.startPane(nil, "rush", "demo", "--rehearse")
	tp.waitFor(2*time.Minute, "workers (", "L1-names")
	p.waitEvent(runstate.EvAttemptPIDs, "L1-names")
	tp.keys("C-c")
	s := tp.waitFor(time.Minute, "ZERG-EXIT=3")
	for _, want := range []string{"stopping the run of demo", "demo: stopped", "zerg rush demo --resume continues it"} {
		if !strings.Contains(s, want) {
			t.Errorf("after Ctrl-C the terminal lacks %q:\n%s", want, s)
		}
	}
	evs := p.events()
	if st := runstate.Replay(evs); st.Stopped == nil || st.Finished != nil {
		t.Errorf("want a recorded stop and no finish: stopped %v, finished %v", st.Stopped, st.Finished)
	}
	if left := runProcesses(evs); len(left) > 0 {
		t.Errorf("processes left after Ctrl-C: %v", left)
	}
	if r := p.zerg("rush", "demo", "--rehearse", "--resume"); r.code != 0 {
		t.Fatalf("resume: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestLiveViewQLeavesTheRunGoing: q closes the view; the rush goes on,
// printing its progress lines, and delivers.
func TestLiveViewQLeavesTheRunGoing(t *testing.T) {
	t.Parallel()
	p := newProject(t, func(dir string) { slowNames(t, dir) })
	tp := p.startPane(nil, "rush", "demo", "--rehearse")
	tp.waitFor(2*time.Minute, "workers (", "L1-names")
	p.waitEvent(runstate.EvAttemptPIDs, "L1-names")
	tp.keys("q")
	tp.waitFor(30*time.Second, "live view closed; the run of demo goes on")
	s := tp.waitFor(2*time.Minute, "ZERG-EXIT=0")
	for _, want := range []string{"level 2: merged 2 task(s)", "demo: DELIVERED (rehearsal)"} {
		if !strings.Contains(s, want) {
			t.Errorf("after q the terminal lacks %q:\n%s", want, s)
		}
	}
	st := runstate.Replay(p.events())
	if st.Stopped != nil || len(st.MergeCount) != 7 {
		t.Errorf("want the run to go on to all 7 tasks: stopped %v, merged %d", st.Stopped, len(st.MergeCount))
	}
}

// TestWatchLiveWaitsAndQLeavesTheRun: zerg status --watch started before
// the run waits for it, then shows the live view of the run another
// process runs; l opens the selected task's log; q ends the watch and the
// run goes on to deliver.
func TestWatchLiveWaitsAndQLeavesTheRun(t *testing.T) {
	t.Parallel()
	p := newProject(t, func(dir string) { slowNames(t, dir) })
	tp := p.startPane(nil, "status", "--watch", "demo")
	tp.waitFor(30*time.Second, "no run of demo yet; waiting for it to start")
	cmd, out := p.startRushUntil(runstate.EvAttemptStarted, "L1-names")
	tp.waitFor(time.Minute, "zerg demo · running (rehearsal)", "> L1-")
	tp.keys("l")
	tp.waitFor(30*time.Second, "log of L1-", "== L1-")
	tp.keys("Escape")
	tp.waitFor(30*time.Second, "workers (")
	tp.keys("q")
	tp.waitFor(30*time.Second, "ZERG-EXIT=0")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the rush after the watch quit: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "demo: DELIVERED") {
		t.Errorf("rush:\n%s", out.String())
	}
}

// waitEvent waits for the run's log to hold an event of typ for task.
func (p *project) waitEvent(typ, task string) {
	p.t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !hasEvent(p.eventsIfAny(), typ, task) {
		if time.Now().After(deadline) {
			p.t.Fatalf("no %s event for %s", typ, task)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// eventsIfAny is the run's log, or nothing before it exists.
func (p *project) eventsIfAny() []eventlog.Event {
	evs, _ := eventlog.Read(filepath.Join(p.dir, ".zerg", "runs", "demo", "events.jsonl"))
	return evs
}
