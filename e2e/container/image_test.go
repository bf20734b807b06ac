// Package container_test holds container mode's end-to-end tests: real
// podman, the test image (make container-image builds
// localhost/zerg-test:bookworm from Debian packages), and the devcontainer
// fixture in e2e/testdata/devcontainer. Without podman or the test image
// they skip and say what is missing.
package container_test

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/container"
)

// TestImage is the image the fixture's Dockerfile builds on.
const TestImage = "localhost/zerg-test:bookworm"

// needPodman returns the podman runtime, or skips the test saying what is
// missing; under make test (ZERG_E2E_CONTAINER=required), which installs
// both, it fails instead: a skip there would hide a suite that never ran.
func needPodman(t *testing.T) container.Runtime {
	t.Helper()
	stop := t.Skipf
	if os.Getenv("ZERG_E2E_CONTAINER") == "required" {
		stop = t.Fatalf
	}
	if _, err := exec.LookPath("podman"); err != nil {
		stop("podman is not installed: make podman (as root) installs it")
	}
	ctx := context.Background()
	rt, err := container.Detect(ctx, container.Podman)
	if err != nil {
		stop("podman does not run here: %v", err)
	}
	have, err := rt.ImageExists(ctx, TestImage)
	if err != nil {
		t.Fatal(err)
	}
	if !have {
		stop("podman has no %s: make container-image builds it", TestImage)
	}
	return rt
}

// copyFixture copies e2e/testdata/NAME to a directory of the same name
// under a temporary directory and returns it.
func copyFixture(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join("..", "testdata", name)
	dst := filepath.Join(t.TempDir(), name)
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, fi.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// The fixture's devcontainer is built by the real engine the first time,
// offline, and found by its content hash the second: no build.
func TestDevcontainerBuildThenCacheHit(t *testing.T) {
	rt := needPodman(t)
	ctx := context.Background()
	root := copyFixture(t, "devcontainer")
	// A file of this run's own in the build context makes the hash, and so
	// the tag, this run's: the first resolve builds whatever earlier runs
	// left, and the image is removed at the end.
	nonce := fmt.Sprintf("%s %d\n", t.Name(), time.Now().UnixNano())
	if err := os.WriteFile(filepath.Join(root, ".nonce"), []byte(nonce), 0o644); err != nil {
		t.Fatal(err)
	}

	var progress bytes.Buffer
	start := time.Now()
	img, err := container.ResolveImage(ctx, rt, root, "", &progress)
	if err != nil {
		t.Fatalf("first resolve: %v\n%s", err, progress.String())
	}
	t.Cleanup(func() { _, _ = rt.Output(context.Background(), "rmi", img.Ref) })
	t.Logf("first resolve (a build): %v, %s", time.Since(start).Round(time.Millisecond), img.Ref)
	if !img.Built || img.Source != ".devcontainer/devcontainer.json" || len(img.Ignored) != 0 ||
		!strings.HasPrefix(img.Ref, "localhost/zerg-devcontainer-devcontainer:") {
		t.Fatalf("first resolve: %+v", img)
	}
	if !strings.Contains(progress.String(), "podman build | ") {
		t.Fatalf("the build's output was not streamed:\n%s", progress.String())
	}
	// The build arg reached the image, and the RUN step ran the project's
	// own file, copied from the build context.
	label, err := rt.Output(ctx, "image", "inspect", "--format", `{{index .Labels "org.zerg.fixture.greeting"}}`, img.Ref)
	if err != nil || strings.TrimSpace(string(label)) != "hello from the devcontainer" {
		t.Fatalf("label: %q %v", label, err)
	}

	progress.Reset()
	start = time.Now()
	again, err := container.ResolveImage(ctx, rt, root, "", &progress)
	if err != nil {
		t.Fatalf("second resolve: %v", err)
	}
	t.Logf("second resolve (a cache hit): %v", time.Since(start).Round(time.Millisecond))
	if again.Built || again.Ref != img.Ref || progress.Len() != 0 {
		t.Fatalf("second resolve built or said something: %+v %q", again, progress.String())
	}
}

// zerg never pulls: an image the engine lacks is an error saying so, with
// the real engine's answer to image inspect.
func TestConfiguredImageMissing(t *testing.T) {
	rt := needPodman(t)
	_, err := container.ResolveImage(context.Background(), rt, t.TempDir(), "localhost/zerg-no-such-image:0", nil)
	want := "container.image localhost/zerg-no-such-image:0: the engine (podman) has no such image; zerg never pulls"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("error %v, want %s...", err, want)
	}
	img, err := container.ResolveImage(context.Background(), rt, t.TempDir(), TestImage, nil)
	if err != nil || img.Ref != TestImage || img.Built {
		t.Fatalf("the test image as container.image: %+v %v", img, err)
	}
}
