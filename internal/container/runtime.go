// Package container runs a sandbox spec (internal/sandbox.Spec) as a
// container of an image instead of a bubblewrap sandbox on the host's root:
// container mode. The image decides the toolchain; the rest of a sandboxed
// workspace (a worker user per slot, the gateway socket as the only way
// out, zerg's init as PID 1 with its limits and seccomp refusals, the
// result as a bundle) is the sandbox driver's, unchanged. docs/container.md
// says what the mode guarantees and what it costs.
package container

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// The runtimes container.runtime may name.
const (
	Podman = "podman"
	Docker = "docker"
	Auto   = "auto"
)

// Runtime is a container engine's command-line client.
type Runtime struct {
	Name   string // podman or docker
	Binary string // its absolute path
	// Rootless is true when the engine runs as zerg's own unprivileged
	// user (podman without root): a container's user is then mapped with
	// --userns=keep-id, so files it writes in a workspace are zerg's.
	Rootless bool
}

// Command is a client command with args. It gets what the client needs
// of zerg's environment (clientEnv), nothing else: not the API key, and
// nothing a container could be handed (what a container sees is in its
// run arguments).
func (r Runtime) Command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, r.Binary, args...)
	cmd.Env = clientEnv(os.Environ())
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// clientEnv keeps the variables an engine's client reads to find its
// engine, storage and configuration.
func clientEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "PATH", k == "HOME", k == "USER", k == "LANG", k == "TMPDIR", k == "XDG_RUNTIME_DIR",
			k == "XDG_CONFIG_HOME", k == "XDG_DATA_HOME", k == "DBUS_SESSION_BUS_ADDRESS",
			strings.HasPrefix(k, "DOCKER_"), strings.HasPrefix(k, "CONTAINER_"), strings.HasPrefix(k, "CONTAINERS_"),
			strings.HasPrefix(k, "BUILDAH_"), strings.HasPrefix(k, "PODMAN_"):
			out = append(out, kv)
		}
	}
	return out
}

// Output runs a client command and returns its standard output; the error
// carries the first line of what it printed on standard error.
func (r Runtime) Output(ctx context.Context, args ...string) ([]byte, error) {
	var stderr bytes.Buffer
	cmd := r.Command(ctx, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		if msg == "" {
			msg = err.Error()
		}
		return out, fmt.Errorf("%s %s: %s", r.Name, firstWord(args), msg)
	}
	return out, nil
}

func firstWord(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[0]
}

// Detect finds the runtime container.runtime names (auto: podman, then
// docker) and checks that its engine answers. It never falls back to
// another mode; the error says what is missing for each runtime tried.
func Detect(ctx context.Context, want string) (Runtime, error) {
	var names []string
	switch want {
	case "", Auto:
		names = []string{Podman, Docker}
	case Podman, Docker:
		names = []string{want}
	default:
		return Runtime{}, fmt.Errorf("container.runtime %q is not one of auto, podman, docker", want)
	}
	var why []string
	for _, n := range names {
		r, err := probe(ctx, n)
		if err == nil {
			return r, nil
		}
		why = append(why, err.Error())
	}
	return Runtime{}, errors.New(strings.Join(why, "; "))
}

// probe checks one runtime: its client is installed and its engine answers
// (docker's client without a daemon does not).
func probe(ctx context.Context, name string) (Runtime, error) {
	bin, err := exec.LookPath(name)
	if err != nil {
		return Runtime{}, fmt.Errorf("%s is not installed (Debian: apt-get install %s)", name, name)
	}
	r := Runtime{Name: name, Binary: bin}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	switch name {
	case Podman:
		out, err := r.Output(ctx, "info", "--format", "{{.Host.Security.Rootless}}")
		if err != nil {
			return Runtime{}, fmt.Errorf("podman does not run here: %v", err)
		}
		r.Rootless = strings.TrimSpace(string(out)) == "true"
	default:
		if _, err := r.Output(ctx, "version", "--format", "{{.Server.Version}}"); err != nil {
			return Runtime{}, fmt.Errorf("docker's engine does not answer: %v", err)
		}
		r.Rootless = os.Geteuid() != 0 && dockerRootless(ctx, r)
	}
	return r, nil
}

// dockerRootless reports a rootless docker engine (its security options
// say so).
func dockerRootless(ctx context.Context, r Runtime) bool {
	out, err := r.Output(ctx, "info", "--format", "{{.SecurityOptions}}")
	return err == nil && bytes.Contains(out, []byte("rootless"))
}

// ImageID is the engine's ID of the image ref ("" when it has none).
func (r Runtime) ImageID(ctx context.Context, ref string) (string, error) {
	out, err := r.Output(ctx, "image", "inspect", "--format", "{{.Id}}", ref)
	if err == nil {
		return strings.TrimSpace(string(out)), nil
	}
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	return "", nil
}

// ImageExists reports whether the engine has ref locally. zerg never pulls:
// an image comes from container.image as the engine has it, or is built
// from the project's devcontainer.
func (r Runtime) ImageExists(ctx context.Context, ref string) (bool, error) {
	id, err := r.ImageID(ctx, ref)
	return id != "", err
}
