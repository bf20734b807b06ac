package container

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/zergrush/zerg/internal/capture"
	"github.com/zergrush/zerg/internal/fsx"
	"github.com/zergrush/zerg/internal/sandbox"
	"github.com/zergrush/zerg/internal/textx"
)

// checkScript is what every container of a run needs of its image: a
// shell (commands run with /bin/sh -c) and git (the worker's commits and
// the result's bundle are made inside).
const checkScript = `command -v git >/dev/null 2>&1 || { echo "the image has no git (zerg commits and bundles the result inside)"; exit 3; }`

// Check starts one container of b as uid:gid in an empty directory, with
// the limits given, and runs the image check: what a rush needs before its
// first worker, so that a broken engine or image is named before any model
// call.
func Check(ctx context.Context, b Box, uid, gid int, limits sandbox.Limits) error {
	dir, err := fsx.MkdirTemp("zerg-container-check-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := os.Chown(dir, uid, gid); err != nil && os.Geteuid() == 0 {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd, done, err := b.Command(ctx, sandbox.Spec{Workdir: dir, UID: uid, GID: gid, Limits: limits, Env: []string{"HOME=" + dir}},
		"/bin/sh", "-c", checkScript)
	if err != nil {
		return err
	}
	out := capture.New()
	cmd.Stdout, cmd.Stderr = out, out
	err = cmd.Run()
	done()
	if err != nil {
		msg := textx.Clip(textx.OneLine(strings.TrimSpace(out.String())), 300)
		return fmt.Errorf("a container of %s did not start with %s (%v): %s", b.Image, b.Runtime.Name, err, msg)
	}
	return nil
}
