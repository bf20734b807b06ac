package rush

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/container"
	"github.com/zergrush/zerg/internal/runstate"
)

// needContainers skips without podman and the test image, or fails where
// make test (ZERG_E2E_CONTAINER=required) has installed both.
func needContainers(t *testing.T) {
	t.Helper()
	stop := t.Skipf
	if os.Getenv("ZERG_E2E_CONTAINER") == "required" {
		stop = t.Fatalf
	}
	if _, err := exec.LookPath("podman"); err != nil {
		stop("podman is not installed: make podman (as root) installs it")
	}
	if err := exec.Command("podman", "image", "exists", testImage).Run(); err != nil {
		stop("podman has no %s: make container-image builds it", testImage)
	}
}

// A project with no container.image and a devcontainer whose Dockerfile
// builds on the test image: the rush builds it once (cached by the hash of
// what goes into it) and every worker, verification and gate runs in it.
// The gate passes only inside that image (a file its Dockerfile wrote);
// the same project in sandbox mode, on the host, is the control: its gate
// fails.
func TestRushInTheDevcontainersImage(t *testing.T) {
	t.Parallel()
	needContainers(t)
	project := func(mode string) *project {
		return newProject(t, func(dir string) {
			os.MkdirAll(filepath.Join(dir, ".devcontainer"), 0o755)
			os.WriteFile(filepath.Join(dir, ".devcontainer", "devcontainer.json"), []byte(`{
  // The project's development image: zerg builds it for container mode.
  "name": "demo",
  "build": {"dockerfile": "Dockerfile"},
  "postCreateCommand": "true",
}
`), 0o644)
			os.WriteFile(filepath.Join(dir, ".devcontainer", "Dockerfile"), []byte(
				"FROM "+testImage+"\nRUN echo devcontainer > /etc/zerg-devcontainer\n"), 0o644)
			editFile(t, filepath.Join(dir, ".zerg", "config.yaml"), func(s string) string {
				s = strings.Replace(s, "    command: for f in", "    command: grep -qx devcontainer /etc/zerg-devcontainer || exit 1; for f in", 1)
				return s + "mode: " + mode + "\n"
			})
		})
	}
	p := project("container")
	r := p.zerg("rush", "demo", "--rehearse")
	if r.code != 0 || !strings.Contains(r.stdout, "demo: DELIVERED") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout+r.stderr, "postCreateCommand") {
		t.Errorf("the devcontainer fields zerg does not honour were not named:\n%s\n%s", r.stdout, r.stderr)
	}
	st := runstate.Replay(p.events())
	if len(st.Gates) != 3 {
		t.Fatalf("gates: %+v", st.Gates)
	}
	for _, g := range st.Gates {
		if g.Exit != 0 {
			t.Errorf("gate %+v did not pass in the devcontainer's image", g)
		}
	}

	// What a dead coordinator could leave: containers labelled with the
	// run's directory. zerg stop removes them, and only them.
	runDir := filepath.Join(p.dir, ".zerg", "runs", "demo")
	leftover := startLabelled(t, runDir)
	other := startLabelled(t, runDir+"-other")
	s := p.zerg("stop", "demo")
	if s.code != 0 || !strings.Contains(s.stdout, "removed 1 leftover container(s)") {
		t.Errorf("zerg stop: exit %d\n%s%s", s.code, s.stdout, s.stderr)
	}
	if exec.Command("podman", "container", "exists", leftover).Run() == nil {
		t.Error("zerg stop left the run's container")
	}
	if exec.Command("podman", "container", "exists", other).Run() != nil {
		t.Error("zerg stop removed a container of another run")
	}

	control := project("sandbox")
	if r := control.zerg("rush", "demo", "--rehearse"); r.code == 0 {
		t.Errorf("control: the gate passed on the host, so it proves nothing about the image\n%s", r.stdout)
	}
}

// startLabelled starts a container that sleeps, labelled as run's, and
// returns its name; the test removes it in the end.
func startLabelled(t *testing.T, run string) string {
	t.Helper()
	name := fmt.Sprintf("zerg-e2e-%d-%d", os.Getpid(), time.Now().UnixNano())
	out, err := exec.Command("podman", "run", "-d", "--name", name, "--label", container.LabelRun+"="+run,
		"--network", "none", "--ulimit", "nofile=1024:1024", "--ulimit", "nproc=4096:4096", testImage, "sleep", "600").CombinedOutput()
	if err != nil {
		t.Fatalf("podman run: %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command("podman", "rm", "-f", "--ignore", "--time", "0", name).Run() })
	return name
}
