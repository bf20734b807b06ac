package bench

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/container"
	"github.com/zergrush/zerg/internal/sandbox"
	"github.com/zergrush/zerg/internal/sandbox/sandboxtest"
)

// BenchmarkStartSandbox measures what a sandbox adds to starting a process:
// Command + Run of /bin/true in the full spec (hidden directories,
// read-only and writable binds, limits, the seccomp step and, with a proxy
// socket, the forwarder), next to a plain exec of /bin/true. The goal is at
// most 10 ms more than the plain exec. docs/sandbox.md records the figures of
//
//	go test -run '^$' -bench Sandbox -benchtime 50x ./bench/
func BenchmarkStartSandbox(b *testing.B) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		b.Skip("SKIPPED: bubblewrap (bwrap) is not installed")
	}
	// Under `go test` the running binary is not zerg: the sandbox's init
	// needs the real one.
	bin, cleanup, err := sandboxtest.BuildZerg()
	if err != nil {
		b.Fatal(err)
	}
	defer cleanup()
	old := sandbox.Executable
	sandbox.Executable = func() (string, error) { return bin, nil }
	defer func() { sandbox.Executable = old }()
	uid, gid, err := sandboxtest.User()
	if err != nil {
		b.Fatal(err)
	}

	root := b.TempDir()
	if err := sandboxtest.Open(root); err != nil {
		b.Fatal(err)
	}
	dirs := map[string]string{}
	for _, name := range []string{"ws/work", "ws/other", "home", "runs/a1/config", "tools", "sock"} {
		d := filepath.Join(root, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
		dirs[name] = d
	}
	sock := filepath.Join(dirs["sock"], "proxy.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	spec := sandbox.Spec{
		Workdir:  dirs["ws/work"],
		Home:     dirs["home"],
		ReadOnly: []string{dirs["tools"], filepath.Join(root, "runs", "a1")},
		Writable: []string{dirs["runs/a1/config"]},
		Hide:     []string{filepath.Join(root, "ws"), filepath.Join(root, "runs")},
		Env:      []string{"PATH=/usr/bin:/bin", "HOME=" + dirs["home"], "HTTPS_PROXY=http://" + sandbox.ProxyAddr},
		UID:      uid,
		GID:      gid,
		Limits:   sandbox.Limits{MemoryBytes: 4 << 30, Processes: 512, CPUSeconds: 3600, FileSizeBytes: 1 << 30, OpenFiles: 4096},
	}

	b.Run("subprocess", benchSubprocess)
	b.Run("sandbox", func(b *testing.B) {
		s := spec
		s.ProxySocket = sock
		benchSandbox(b, s)
	})
	b.Run("sandbox-no-proxy", func(b *testing.B) { benchSandbox(b, spec) })
	// Container mode: the same spec as a container of the end-to-end
	// suites' image (make container-image), warm, with the proxy and the
	// lifeline. The goal is at most 500 ms per start.
	b.Run("container", func(b *testing.B) {
		box, err := benchBox(b, root)
		if err != nil {
			b.Skip("SKIPPED: " + err.Error())
		}
		s := spec
		s.ProxySocket = sock
		var m medians
		for b.Loop() {
			start := time.Now()
			cmd, done, err := box.Command(context.Background(), s, "/bin/true")
			if err != nil {
				b.Fatal(err)
			}
			out, err := cmd.CombinedOutput()
			done()
			if err != nil {
				b.Fatalf("%v: %s", err, out)
			}
			m.add(start)
		}
		m.report(b)
	})
	// With two shared caches inside a home of mode 0700 (root's go module
	// and build caches, say): as root, the sandbox's user cannot reach them
	// and bwrap starts through zerg sandbox-prep (docs/sandbox.md).
	b.Run("sandbox-shared-0700", func(b *testing.B) {
		home := filepath.Join(root, "userhome")
		for _, d := range []string{"go/pkg/mod", ".cache/go-build"} {
			if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
				b.Fatal(err)
			}
		}
		if err := os.Chmod(home, 0o700); err != nil {
			b.Fatal(err)
		}
		s := spec
		s.Shared = []string{filepath.Join(home, "go/pkg/mod"), filepath.Join(home, ".cache/go-build")}
		benchSandbox(b, s)
	})
}

// benchBox is container mode's boundary with the suites' image, or why
// there is none here.
func benchBox(b *testing.B, dir string) (container.Box, error) {
	rt, err := container.Detect(context.Background(), container.Podman)
	if err != nil {
		return container.Box{}, err
	}
	const image = "localhost/zerg-test:bookworm"
	if ok, _ := rt.ImageExists(context.Background(), image); !ok {
		return container.Box{}, errors.New("no " + image + " (make container-image)")
	}
	life := filepath.Join(dir, "lifeline")
	if err := container.NewLifeline(life); err != nil {
		b.Fatal(err)
	}
	return container.Box{Runtime: rt, Image: image, Run: "bench", Lifeline: life}, nil
}

// BenchmarkStartSubprocess is the baseline alone: fork and exec of /bin/true.
func BenchmarkStartSubprocess(b *testing.B) { benchSubprocess(b) }

func benchSubprocess(b *testing.B) {
	var m medians
	for b.Loop() {
		start := time.Now()
		if err := exec.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
		m.add(start)
	}
	m.report(b)
}

func benchSandbox(b *testing.B, s sandbox.Spec) {
	var m medians
	for b.Loop() {
		start := time.Now()
		cmd, err := sandbox.Command(context.Background(), s, "/bin/true")
		if err != nil {
			b.Fatal(err)
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
		m.add(start)
	}
	m.report(b)
}

// medians adds the median start time to ns/op (a mean): on a busy machine
// a few slow starts move the mean far more than the median.
type medians []time.Duration

func (m *medians) add(start time.Time) { *m = append(*m, time.Since(start)) }

func (m medians) report(b *testing.B) {
	if len(m) == 0 {
		return
	}
	slices.Sort(m)
	b.ReportMetric(float64(m[len(m)/2].Nanoseconds()), "median-ns")
}
