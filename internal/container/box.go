package container

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/zergrush/zerg/internal/fsx"
	"github.com/zergrush/zerg/internal/pathx"
	"github.com/zergrush/zerg/internal/sandbox"
)

// LabelRun is the label on every container zerg starts: its value is the
// run's directory, so that resume and stop find the containers a dead
// coordinator left (Reap) by what zerg wrote on them, never by their names.
const LabelRun = "io.zerg.run"

// insideDir is where zerg's init and the proxy socket are inside, and the
// lifeline.
var (
	insideDir      = filepath.Dir(sandbox.InsideExecutable)
	insideLifeline = insideDir + "/lifeline"
)

// DefaultPath is PATH inside a container whose image sets none.
const DefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Box runs sandbox specs as containers of one image.
type Box struct {
	Runtime Runtime
	Image   string
	// Run is the value of LabelRun on the containers.
	Run string
	// Path is PATH inside: the image's own, where its toolchain is. The
	// host's PATH means nothing there.
	Path string
	// Lifeline is a FIFO NewLifeline holds (""= none): every container
	// ends when the process that holds it is gone.
	Lifeline string
}

// Command returns the client command that runs argv in a new container
// laid out as s describes: the image's root read-only; the workdir, the
// home and s.Writable the only writable host paths, each at its own path;
// s.ReadOnly and s.Shared read-only at their paths; nothing else of the
// host (s.Hide needs no covering: it is not there); /tmp, /var/tmp and
// /run empty tmpfs; no network (--network none) but the proxy socket, to
// which zerg's init forwards 127.0.0.1:3128 as in a sandbox; every
// capability dropped, no new privileges, the runtime's seccomp profile
// with the init's refusals on top; s.UID:s.GID as the user; the limits as
// the container's cgroup limits and as the init's per-process limits. The
// environment is s.Env, from a private file (never in argv). The exit
// status is the command's.
//
// done must be called once the command has ended, however it ended: it
// removes the container when the client did not (a client killed by a
// signal leaves its container running) and the environment file.
func (b Box) Command(ctx context.Context, s sandbox.Spec, argv ...string) (cmd *exec.Cmd, done func(), err error) {
	name, err := containerName()
	if err != nil {
		return nil, nil, err
	}
	exe, err := sandbox.Executable()
	if err != nil {
		return nil, nil, fmt.Errorf("container: find the zerg executable: %w", err)
	}
	envFile, err := writeEnvFile(b.env(s.Env))
	if err != nil {
		return nil, nil, err
	}
	args, err := b.runArgs(s, name, envFile, exe, argv)
	if err != nil {
		os.Remove(envFile)
		return nil, nil, err
	}
	cmd = b.Runtime.Command(ctx, args...)
	done = func() {
		defer os.Remove(envFile)
		if st := cmd.ProcessState; st != nil && st.Exited() {
			return // the client waited for the container and removed it (--rm)
		}
		b.remove(context.WithoutCancel(ctx), name)
	}
	return cmd, done, nil
}

// remove deletes a container whatever its state; a missing one is fine.
func (b Box) remove(ctx context.Context, names ...string) {
	args := []string{"rm", "-f"}
	if b.Runtime.Name == Podman {
		args = append(args, "--ignore", "--time", "0")
	}
	_ = b.Runtime.Command(ctx, append(args, names...)...).Run()
}

// env is the container's environment: s.Env with the image's PATH, and
// without TMPDIR where it names no mounted directory.
func (b Box) env(env []string) []string {
	path := b.Path
	if path == "" {
		path = DefaultPath
	}
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "PATH="+path)
}

// runArgs are the client's arguments (pure: tested without an engine).
func (b Box) runArgs(s sandbox.Spec, name, envFile, exe string, argv []string) ([]string, error) {
	if len(argv) == 0 || !filepath.IsAbs(argv[0]) {
		return nil, fmt.Errorf("container: the command must start with an absolute path, got %q", argv)
	}
	if b.Image == "" {
		return nil, errors.New("container: no image")
	}
	if s.UID <= 0 || s.GID <= 0 {
		return nil, fmt.Errorf("container: refusing uid %d / gid %d: a container runs as an unprivileged worker user", s.UID, s.GID)
	}
	l := s.Limits
	if l.MemoryBytes < 0 || l.Processes < 0 || l.CPUSeconds < 0 || l.FileSizeBytes < 0 || l.OpenFiles < 0 {
		return nil, fmt.Errorf("container: a negative limit in %+v (0 means no limit)", l)
	}
	args := []string{"run", "--rm", "-i", "--name", name,
		"--label", LabelRun + "=" + b.Run,
		"--pull", "never",
		"--network", "none",
		"--hostname", "sandbox",
		"--read-only",
		"--cap-drop", "ALL",
		"--security-opt", "no-new-privileges",
		"--log-driver", "none",
		"--env-file", envFile,
		"--workdir", s.Workdir,
		"--entrypoint", sandbox.InsideExecutable,
	}
	if b.Runtime.Name == Podman {
		// The tmpfs below are zerg's, with its sizes; and podman would
		// otherwise copy its own proxy variables into the container.
		args = append(args, "--read-only-tmpfs=false", "--http-proxy=false")
	}
	if b.Runtime.Rootless {
		// The worker is zerg's own user, mapped to itself: what it writes
		// in the workspace is zerg's.
		args = append(args, "--userns", "keep-id", "--user", fmt.Sprintf("%d:%d", os.Getuid(), os.Getgid()))
	} else {
		args = append(args, "--user", fmt.Sprintf("%d:%d", s.UID, s.GID))
	}
	// Every tmpfs is memory: each is bounded by the memory limit.
	size := ""
	if l.MemoryBytes > 0 {
		size = ",size=" + strconv.FormatInt(l.MemoryBytes, 10)
	}
	for _, d := range []string{"/tmp", "/var/tmp", "/run"} {
		args = append(args, "--tmpfs", d+":rw,nosuid,nodev,mode=1777"+size)
	}
	// Limits: the container's cgroup bounds memory and processes together
	// (so the init does not also bound each process's data segment: the
	// CLI's JavaScript engine reserves more than it uses); rlimits cap the
	// rest per process. The engine's own ulimits must be set: a rootful
	// engine cannot raise the defaults it would otherwise copy.
	initLimits := l
	if l.MemoryBytes > 0 {
		m := strconv.FormatInt(l.MemoryBytes, 10)
		args = append(args, "--memory", m, "--memory-swap", m)
		initLimits.MemoryBytes = 0
	}
	if l.Processes > 0 {
		args = append(args, "--pids-limit", strconv.Itoa(l.Processes))
	}
	nofile, nproc := l.OpenFiles, l.Processes
	if nofile == 0 {
		nofile = 1024
	}
	if nproc == 0 {
		nproc = 4096
	}
	args = append(args, "--ulimit", fmt.Sprintf("nofile=%d:%d", nofile, nofile), "--ulimit", fmt.Sprintf("nproc=%d:%d", nproc, nproc))

	mount := func(src, dst string, ro bool) error {
		r, err := filepath.EvalSymlinks(src)
		if err != nil {
			return fmt.Errorf("container: mount %s: %w", src, err)
		}
		if dst == "" {
			// At its own path, which must not be where zerg's init is.
			if pathx.Within(insideDir, r) {
				return fmt.Errorf("container: %s is under %s, which the container uses itself", r, insideDir)
			}
			dst = r
		}
		for _, p := range []string{r, dst} {
			if !filepath.IsAbs(p) || p == "/" || strings.ContainsAny(p, ":,\n") {
				return fmt.Errorf("container: cannot mount %q: a mounted path must be absolute, not /, and without ':' ',' or a newline", p)
			}
		}
		opt := "rw"
		if ro {
			opt = "ro"
		}
		args = append(args, "-v", r+":"+dst+":"+opt)
		return nil
	}
	if err := mount(s.Workdir, "", false); err != nil {
		return nil, err
	}
	if s.Home != "" {
		if err := mount(s.Home, "", false); err != nil {
			return nil, err
		}
	}
	for _, p := range s.Writable {
		if err := mount(p, "", false); err != nil {
			return nil, err
		}
	}
	for _, p := range append(append([]string{}, s.ReadOnly...), s.Shared...) {
		if err := mount(p, "", true); err != nil {
			return nil, err
		}
	}
	if err := mount(exe, sandbox.InsideExecutable, true); err != nil {
		return nil, err
	}
	// The container's memory cgroup is its own, and gone when the engine
	// removes it: the init reports an OOM kill in it by its exit code.
	ic := sandbox.InitConfig{Limits: initLimits, ReportOOM: l.MemoryBytes > 0}
	if b.Lifeline != "" {
		if err := mount(b.Lifeline, insideLifeline, true); err != nil {
			return nil, err
		}
		ic.Lifeline = insideLifeline
	}
	if s.ProxySocket != "" {
		if err := mount(s.ProxySocket, sandbox.InsideProxy, true); err != nil {
			return nil, err
		}
		ic.Proxy = sandbox.InsideProxy
	}
	args = append(args, b.Image, sandbox.InitCommand)
	args = append(args, ic.Flags()...)
	args = append(args, "--")
	return append(args, argv...), nil
}

// writeEnvFile writes env to a new private file for --env-file: the
// variables never appear in a command line another user can read.
func writeEnvFile(env []string) (string, error) {
	var b strings.Builder
	for _, kv := range env {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" || strings.ContainsAny(kv, "\n\x00") {
			return "", fmt.Errorf("container: environment entry %q is not KEY=VALUE on one line", kv)
		}
		b.WriteString(kv)
		b.WriteByte('\n')
	}
	f, err := fsx.CreateTemp("zerg-env-")
	if err != nil {
		return "", err
	}
	if _, err := f.WriteString(b.String()); err != nil {
		_ = f.Close() // on the error path; the file is removed next
		os.Remove(f.Name())
		return "", err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

func containerName() (string, error) {
	var r [8]byte
	if _, err := rand.Read(r[:]); err != nil {
		return "", err
	}
	return "zerg-" + hex.EncodeToString(r[:]), nil
}

// Reap removes every container labelled as run's (LabelRun): what a dead
// coordinator left. It returns how many there were.
func (r Runtime) Reap(ctx context.Context, run string) (int, error) {
	out, err := r.Output(ctx, "ps", "-a", "-q", "--filter", "label="+LabelRun+"="+run)
	if err != nil {
		return 0, err
	}
	ids := strings.Fields(string(out))
	if len(ids) == 0 {
		return 0, nil
	}
	Box{Runtime: r}.remove(ctx, ids...)
	return len(ids), nil
}

// ImagePath is PATH as the image sets it ("" when it sets none).
func (r Runtime) ImagePath(ctx context.Context, ref string) (string, error) {
	out, err := r.Output(ctx, "image", "inspect", "--format", "{{range .Config.Env}}{{println .}}{{end}}", ref)
	if err != nil {
		return "", err
	}
	for _, l := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "PATH="); ok {
			return v, nil
		}
	}
	return "", nil
}

// Mode is the config mode a Box is the boundary of.
func (Box) Mode() string { return "container" }

// ReapLeftovers removes the containers of the run a dead coordinator left
// (resume calls it before it recovers the attempts).
func (b Box) ReapLeftovers(ctx context.Context) int {
	n, _ := b.Runtime.Reap(ctx, b.Run)
	return n
}

// ReapAll removes the containers labelled as run's on every engine
// installed here (podman, docker): zerg stop and resume call it without
// knowing which engine a dead coordinator used. Engines that do not answer
// are skipped.
func ReapAll(ctx context.Context, run string) int {
	n := 0
	for _, name := range []string{Podman, Docker} {
		bin, err := exec.LookPath(name)
		if err != nil {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		k, _ := Runtime{Name: name, Binary: bin}.Reap(cctx, run)
		cancel()
		n += k
	}
	return n
}
