package rush

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/diskwatch"
	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/runstate"
)

// smallDisk mounts a fresh ext4 file system of mib MiB (a loop device) and
// returns its mount point; the test's end unmounts it.
func smallDisk(t *testing.T, mib int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("the disk-full test mounts a small file system of its own: it needs root (make test runs as root)")
	}
	dir, err := os.MkdirTemp("/var/lib", "zerg-e2e-disk-")
	if err != nil {
		t.Fatal(err)
	}
	img, mnt := filepath.Join(dir, "disk.img"), filepath.Join(dir, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range [][]string{
		{"truncate", "-s", fmt.Sprintf("%dM", mib), img},
		{"mkfs.ext4", "-q", "-F", "-m", "0", img},
		{"mount", "-o", "loop", img, mnt},
	} {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			os.RemoveAll(dir)
			t.Fatalf("%s: %v\n%s", strings.Join(c, " "), err, out)
		}
	}
	t.Cleanup(func() {
		_ = exec.Command("umount", "-l", mnt).Run()
		os.RemoveAll(dir)
	})
	if err := os.Chmod(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	return mnt
}

// diskProject is a one-level feature of three tasks on disk: L1-fill fills
// the file system (while the flag file exists), L1-a and L1-b, the
// bystanders, write one file each after a pause long enough to be running
// while it fills.
func diskProject(t *testing.T, disk, flag string) *project {
	t.Helper()
	p := &project{t: t, dir: filepath.Join(disk, "repo"), home: filepath.Join(disk, "home")}
	for _, d := range []string{p.dir, p.home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	spec := filepath.Join(p.dir, ".zerg", "specs", "fill")
	if err := os.MkdirAll(spec, 0o755); err != nil {
		t.Fatal(err)
	}
	task := func(id, file string) map[string]any {
		return map[string]any{"id": id, "title": "write " + file, "level": 1, "description": "Write " + file + ".",
			"files":        map[string]any{"create": []string{file}, "modify": []string{}, "read": []string{}},
			"verification": map[string]any{"command": "test -s " + file, "timeout_seconds": 60}, "estimate_minutes": 1}
	}
	graph := map[string]any{"feature": "fill", "version": "2.0", "tasks": []any{
		task("L1-fill", "out/fill.txt"), task("L1-a", "out/a.txt"), task("L1-b", "out/b.txt")}}
	b, _ := json.MarshalIndent(graph, "", "  ")
	write := func(path, content string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(spec, "task-graph.json"), string(b))
	// All the free space at once (fallocate: between two checks of the
	// watch), then files of 4 MiB as long as they fit.
	fill := fmt.Sprintf(`if [ -e %s ]; then fallocate -l "$(df --output=avail -B1 . | tail -1)" zz-0.bin; n=0; for i in $(seq 400); do head -c 4194304 /dev/zero > zz-$i.bin 2>/dev/null || break; n=$i; done; echo "wrote $n files"; df -m .; fi`, flag)
	write(filepath.Join(spec, "scenario.yaml"), fmt.Sprintf(`title: fill
usage: {input_tokens: 1000, output_tokens: 100}
tasks:
  - name: fill
    match: "Task L1-fill:"
    turns:
      - tools: [{name: Bash, input: {command: %q, description: fill the disk}}]
      - tools: [{name: Write, input: {file_path: out/fill.txt, content: "filled\n"}}]
      - text: "Wrote out/fill.txt."
  - name: a
    match: "Task L1-a:"
    turns:
      - delay: 6s
        tools: [{name: Write, input: {file_path: out/a.txt, content: "a\n"}}]
      - delay: 4s
        text: "Wrote out/a.txt."
  - name: b
    match: "Task L1-b:"
    turns:
      - delay: 6s
        tools: [{name: Write, input: {file_path: out/b.txt, content: "b\n"}}]
      - delay: 4s
        text: "Wrote out/b.txt."
`, fill))
	write(filepath.Join(p.dir, ".zerg", "config.yaml"), `version: 1
workers: 3
retry:
  task_retries: 0
  infra_backoff_initial: 1s
  infra_backoff_max: 5s
disk:
  min_free_mb: 64
  workspace_mb: 2048
security_rules:
  enabled: false
`)
	write(filepath.Join(p.dir, ".gitignore"), ".zerg/runs/\n.zerg/cache/\n.zerg/audit.jsonl*\n")
	write(filepath.Join(p.dir, "README"), "fill\n")
	applyIsolation(t, p.dir)
	p.git("init", "-q", "-b", "main")
	p.git("add", "-A")
	p.git("commit", "-q", "-m", "fill")
	p.base = p.git("rev-parse", "HEAD")
	return p
}

// diskEnv is p's environment with the workspaces on the small disk too.
func (p *project) diskEnv() []string {
	env := p.env()
	for i, kv := range env {
		if strings.HasPrefix(kv, "ZERG_WORKSPACES=") {
			env[i] = "ZERG_WORKSPACES=" + filepath.Join(filepath.Dir(p.dir), "workspaces")
		}
	}
	return env
}

// TestDiskFullFailsTheFillerOnly: on a 384 MiB file system holding the
// repository, zerg's records and the workspaces, with disk.min_free_mb 64,
// one worker takes all the free space at once and then writes on, while two
// others work. The
// filler's attempt fails its task (disk_full) and its files are removed;
// the bystanders are not failed; the run's records are whole (the event log
// reads to its end, the audit log verifies); and after `zerg retry` of the
// filler (which no longer fills) the resume delivers every task. Control:
// the filler did fill the disk below the floor.
func TestDiskFullFailsTheFillerOnly(t *testing.T) {
	disk := smallDisk(t, 384)
	flag := filepath.Join(filepath.Dir(disk), "fill-flag")
	if err := os.WriteFile(flag, []byte("fill\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(disk), 0o755); err != nil {
		t.Fatal(err)
	}
	p := diskProject(t, disk, flag)
	env := p.diskEnv()
	r := p.zergEnv(env, "rush", "fill", "--rehearse")
	t.Logf("first run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)

	runDir := filepath.Join(p.dir, ".zerg", "runs", "fill")
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(runDir, "events.jsonl"))
			t.Logf("events.jsonl:\n%s", b)
			out, _ := exec.Command("df", "-m", disk).CombinedOutput()
			t.Logf("%s", out)
			out, _ = exec.Command("sh", "-c", "du -sm "+filepath.Dir(p.dir)+"/* 2>&1; find "+filepath.Dir(p.dir)+" -name 'zz-*' | head -3").CombinedOutput()
			t.Logf("%s", out)
		}
	})
	evs, err := eventlog.Read(filepath.Join(runDir, "events.jsonl"))
	if err != nil {
		t.Fatalf("the event log does not read after the fill: %v", err)
	}
	finished := map[string][]runstate.AttemptFinished{}
	for _, e := range evs {
		if e.Type == runstate.EvAttemptFinished {
			var af runstate.AttemptFinished
			if err := e.Decode(&af); err != nil {
				t.Fatal(err)
			}
			finished[e.Task] = append(finished[e.Task], af)
		}
	}
	t.Logf("attempts: %+v", finished)
	// Control: the filler got the disk below the floor and was stopped
	// for it.
	if f := finished["L1-fill"]; len(f) == 0 || f[0].Reason != "disk_full" {
		t.Fatalf("control: the filler's attempt ended %+v, want disk_full (it filled the disk)", f)
	}
	for _, task := range []string{"L1-a", "L1-b"} {
		for _, af := range finished[task] {
			if af.Class == "task" || af.Class == "fatal" {
				t.Errorf("bystander %s failed as %s/%s: %s", task, af.Class, af.Reason, af.Detail)
			}
		}
	}
	if v := p.zergEnv(env, "audit", "verify"); v.code != 0 {
		t.Errorf("the audit log does not verify after the fill: exit %d %s%s", v.code, v.stdout, v.stderr)
	}
	if free, err := diskwatch.Free(disk); err != nil || free < 64<<20 {
		t.Errorf("after the run %d MiB are free on the disk (%v): the filler's files were not removed", free>>20, err)
	}

	// The filler no longer fills; it is retried and the run resumed.
	if err := os.Remove(flag); err != nil {
		t.Fatal(err)
	}
	if r.code != 0 {
		if rr := p.zergEnv(env, "retry", "fill", "L1-fill"); rr.code != 0 {
			t.Fatalf("zerg retry: exit %d\n%s\n%s", rr.code, rr.stdout, rr.stderr)
		}
		r = p.zergEnv(env, "rush", "fill", "--resume", "--rehearse")
		t.Logf("resume: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r.code != 0 || !strings.Contains(r.stdout, "tasks: 3 of 3 merged") {
		t.Fatalf("the resume after the space was freed did not deliver: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	tree := p.git("ls-tree", "-r", "--name-only", run.IntegrationBranch("fill"))
	for _, f := range []string{"out/a.txt", "out/b.txt", "out/fill.txt"} {
		if !strings.Contains("\n"+tree+"\n", "\n"+f+"\n") {
			t.Errorf("%s is not on the integration branch", f)
		}
	}
}
