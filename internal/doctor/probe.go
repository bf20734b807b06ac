package doctor

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/zergrush/zerg/internal/cliprobe"
	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/driver"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/security"
)

// CheckTool finds name on PATH with lookPath and reads its version line
// with version (ToolVersion outside tests).
func CheckTool(ctx context.Context, lookPath func(string) (string, error), version func(ctx context.Context, path string, args ...string) (string, error), name string, args ...string) ToolCheck {
	p, err := lookPath(name)
	if err != nil {
		return ToolCheck{Error: name + " not found on PATH"}
	}
	tc := ToolCheck{Found: true, Path: p}
	if v, err := version(ctx, p, args...); err != nil {
		tc.Error = err.Error()
	} else {
		tc.Version = v
	}
	return tc
}

// ToolVersion runs `path args...` and returns its first output line.
func ToolVersion(ctx context.Context, path string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, args...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", filepath.Base(path), strings.Join(args, " "), err)
	}
	first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return first, nil
}

// ProbeCgroups is what sandboxed attempts will get: internal/cgroup's
// detection, which creates zerg's own (empty) group directory.
func ProbeCgroups() CgroupCheck {
	cg := driver.ProbeCgroups()
	return CgroupCheck{Available: cg.Available, Kind: cg.Kind, Detail: cg.Detail}
}

// ProbeSandbox starts a sandbox as the user workers would run as: the
// worker user of cfg (nil: no config) when zerg runs as root (nobody while
// that user does not exist yet: zerg creates it on the first run), else
// zerg's own user.
func ProbeSandbox(ctx context.Context, cfg *config.Config) SandboxCheck {
	uid, gid, who, err := probeUser(cfg)
	if err != nil {
		return SandboxCheck{Error: err.Error()}
	}
	if err := driver.ProbeSandboxAs(ctx, uid, gid); err != nil {
		return SandboxCheck{User: who, Error: err.Error()}
	}
	return SandboxCheck{Available: true, User: who}
}

// probeUser is the user a probe starts a sandbox or container as.
func probeUser(cfg *config.Config) (uid, gid int, who string, err error) {
	who = "zerg's own user"
	if u, err := user.Current(); err == nil {
		who = fmt.Sprintf("%s (uid %s)", u.Username, u.Uid)
	}
	if os.Geteuid() != 0 {
		return 0, 0, who, nil
	}
	name := config.DefaultWorkerUser
	if cfg != nil && cfg.Security.WorkerUser != "" {
		name = cfg.Security.WorkerUser
	}
	if u, err := security.LookupWorkerUser(name); err == nil {
		return u.UID, u.GID, u.String(), nil
	}
	n, err := user.Lookup("nobody")
	if err != nil {
		return 0, 0, who, fmt.Errorf("no unprivileged user to try it as: %s and nobody do not exist", name)
	}
	uid, _ = strconv.Atoi(n.Uid)
	gid, _ = strconv.Atoi(n.Gid)
	return uid, gid, fmt.Sprintf("nobody (uid %d; the worker user %s does not exist yet)", uid, name), nil
}

// ProbeContainer finds the engine and the image container mode would use
// with cfg (nil: the defaults) in the repository around dir ("": none),
// building a devcontainer's image when it is not built yet, as a rush
// would (its output to out), and starts a container of it.
func ProbeContainer(ctx context.Context, cfg *config.Config, dir string, out io.Writer) ContainerCheck {
	c := config.Default()
	if cfg != nil {
		c = *cfg
	}
	root := ""
	if dir != "" {
		root, _ = gitx.New(dir).TopLevel(ctx)
	}
	p := driver.ProbeContainerOf(ctx, c, root, out, func() (int, int, error) {
		uid, gid, _, err := probeUser(cfg)
		if err == nil && uid == 0 {
			uid, gid = os.Getuid(), os.Getgid()
		}
		return uid, gid, err
	})
	ct := ContainerCheck{Available: p.Err == nil, Runtime: p.Runtime, Rootless: p.Rootless, Image: p.Image, Source: p.Source}
	if p.Err != nil {
		ct.Error = p.Err.Error()
	}
	return ct
}

// LaunchProbe is the verdict on the launch probe's report rep (err: the
// probe could not run).
func LaunchProbe(rep *cliprobe.Report, err error) *ProbeCheck {
	if err != nil {
		return &ProbeCheck{Error: err.Error()}
	}
	pc := &ProbeCheck{MaxTokens: rep.MaxTokens, Betas: rep.Betas, Unreviewed: rep.Unreviewed}
	for _, m := range rep.Models {
		pm := ProbedModel{Model: m.Model}
		if len(m.Resolved) > 0 {
			pm.Resolved = m.Resolved[0]
		}
		pc.Models = append(pc.Models, pm)
	}
	if m, r := rep.Refusal(); r != nil {
		pc.Refused = fmt.Sprintf("model %s: %s", m.Model, r.Reason)
		pc.Fix = r.Fix
	} else if m, why := rep.Problem(); why != "" {
		pc.Error = fmt.Sprintf("model %s: %s", m.Model, why)
	} else {
		pc.OK = true
	}
	return pc
}

// ConfiguredClaude is claude.path of cfg, "" without a config (zerg doctor
// also runs outside a project).
func ConfiguredClaude(cfg *config.Config) string {
	if cfg == nil {
		return ""
	}
	return cfg.Claude.Path
}
