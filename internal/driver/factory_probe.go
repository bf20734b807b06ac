package driver

import (
	"context"
	"io"
	"strings"

	"github.com/zergrush/zerg/internal/cgroup"
	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/container"
	"github.com/zergrush/zerg/internal/sandbox"
)

// The checks zerg doctor makes of the modes that need more than the CLI and
// git (Factory.Probe): the same checks their Ready makes before a run.

// ProbeSandboxAs starts a sandbox as uid:gid (sandbox mode's Probe).
func ProbeSandboxAs(ctx context.Context, uid, gid int) error {
	return sandbox.Check(ctx, uid, gid)
}

// CgroupProbe is whether sandboxed attempts get a control group of their
// own (memory and processes as totals), of which kind, or why not.
type CgroupProbe struct {
	Available    bool
	Kind, Detail string
}

// ProbeCgroups is what sandboxed attempts will get: internal/cgroup's
// detection, which creates zerg's own (empty) group directory.
func ProbeCgroups() CgroupProbe {
	m, err := cgroup.Detect()
	if err != nil {
		return CgroupProbe{Detail: strings.TrimPrefix(err.Error(), cgroup.ErrUnavailable.Error()+": ")}
	}
	return CgroupProbe{Available: true, Kind: m.String()}
}

// ContainerProbe is whether container mode works here: the engine, the
// image, and a container of it started, or the error that stopped it.
type ContainerProbe struct {
	Runtime  string
	Rootless bool
	Image    string
	Source   string
	Err      error
}

// ProbeContainerOf finds the engine and the image container mode would use
// with cfg in the repository at root ("" outside one), building a
// devcontainer's image when it is not built yet as a rush would (its output
// to out), and starts a container of it as uid:gid (container mode's Probe).
func ProbeContainerOf(ctx context.Context, cfg config.Config, root string, out io.Writer, user func() (uid, gid int, err error)) ContainerProbe {
	rt, err := container.Detect(ctx, cfg.Container.Runtime)
	if err != nil {
		return ContainerProbe{Err: err}
	}
	ct := ContainerProbe{Runtime: rt.Name, Rootless: rt.Rootless}
	if root == "" && cfg.Container.Image == "" {
		ct.Err = errNoImage
		return ct
	}
	img, err := container.ResolveImage(ctx, rt, root, cfg.Container.Image, out)
	if err != nil {
		ct.Err = err
		return ct
	}
	ct.Image, ct.Source = img.Ref, img.Source
	uid, gid, err := user()
	if err != nil {
		ct.Err = err
		return ct
	}
	path, err := rt.ImagePath(ctx, img.Ref)
	if err != nil {
		ct.Err = err
		return ct
	}
	box := container.Box{Runtime: rt, Image: img.Ref, Path: path, Run: "doctor"}
	if err := container.Check(ctx, box, uid, gid, sandbox.Limits{}); err != nil {
		ct.Err = err
		return ct
	}
	return ct
}

type probeError string

func (e probeError) Error() string { return string(e) }

const errNoImage = probeError("no image: outside a repository there is no devcontainer, and container.image is not set")
