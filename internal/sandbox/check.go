package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// minVersion is the first bubblewrap with --disable-userns.
var minVersion = [3]int{0, 8, 0}

var versionRE = regexp.MustCompile(`(\d+)\.(\d+)(?:\.(\d+))?`)

// Check reports whether this machine can run sandboxes as uid/gid (0: zerg's
// own user, which must not be root): bwrap is installed, is at least 0.8.0
// (for --disable-userns), and starts `true` in a sandbox with the namespaces,
// mounts and zerg binary bind of Command. The error says what is missing and
// how to fix it.
func Check(ctx context.Context, uid, gid int) error {
	if err := Supported(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		return fmt.Errorf("sandbox: bubblewrap (bwrap) is not installed; install it (Debian/Ubuntu: apt-get install bubblewrap, Fedora: dnf install bubblewrap): %w", err)
	}
	out, err := exec.CommandContext(ctx, bwrap, "--version").CombinedOutput()
	if err != nil {
		return fmt.Errorf("sandbox: %s --version: %w: %s", bwrap, err, strings.TrimSpace(string(out)))
	}
	v, ok := parseVersion(string(out))
	if !ok {
		return fmt.Errorf("sandbox: cannot read the version of %s from %q", bwrap, strings.TrimSpace(string(out)))
	}
	if less(v, minVersion) {
		return fmt.Errorf("sandbox: %s is bubblewrap %d.%d.%d; zerg needs 0.8.0 or later (for --disable-userns): upgrade bubblewrap", bwrap, v[0], v[1], v[2])
	}
	truePath, err := exec.LookPath("true")
	if err != nil {
		return fmt.Errorf("sandbox: no `true` to start in a sandbox: %w", err)
	}
	cred, err := credential(uid, gid)
	if err != nil {
		return err
	}
	exe, err := Executable()
	if err != nil {
		return fmt.Errorf("sandbox: find the zerg executable: %w", err)
	}
	// Command's namespaces and mounts, with `true` in place of the init:
	// under `go test` the executable is not zerg. Binding it still shows
	// whether the sandbox's user can reach it.
	args := []string{"--die-with-parent", "--new-session", "--unshare-all", "--unshare-user", "--disable-userns", "--as-pid-1",
		"--hostname", "sandbox", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"}
	for _, d := range systemTmpfs {
		args = append(args, "--tmpfs", d)
	}
	args = append(args, "--ro-bind", exe, insideExe, "--cap-drop", "ALL", "--clearenv", "--", truePath)
	cmd := exec.CommandContext(ctx, bwrap, args...)
	cmd.Env = []string{}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		who := "zerg's user"
		if cred != nil {
			who = fmt.Sprintf("uid %d", uid)
		}
		msg := strings.TrimSpace(stderr.String())
		return fmt.Errorf("sandbox: bwrap cannot start a sandbox as %s: %w: %s%s", who, err, msg, hint(msg, exe))
	}
	return nil
}

// hint turns bwrap's complaint into what to do.
func hint(msg, exe string) string {
	switch {
	case strings.Contains(msg, "Can't find source path") && strings.Contains(msg, exe):
		return fmt.Sprintf(" (the sandbox's user cannot reach the zerg binary %s: install zerg where every user can read it, e.g. /usr/local/bin)", exe)
	case strings.Contains(msg, "namespace") || strings.Contains(msg, "uid map") || strings.Contains(msg, "Operation not permitted") || strings.Contains(msg, "Permission denied"):
		return " (unprivileged user namespaces look disabled: check `sysctl user.max_user_namespaces` (> 0) and, on Debian, `kernel.unprivileged_userns_clone=1`; on Ubuntu 23.10+ allow them for bwrap with an AppArmor profile or `sysctl kernel.apparmor_restrict_unprivileged_userns=0`; in a container, run it with user namespaces allowed)"
	}
	return ""
}

func parseVersion(s string) ([3]int, bool) {
	m := versionRE.FindStringSubmatch(s)
	if m == nil {
		return [3]int{}, false
	}
	var v [3]int
	for i := range 3 {
		if m[i+1] != "" {
			v[i], _ = strconv.Atoi(m[i+1])
		}
	}
	return v, true
}

func less(a, b [3]int) bool {
	for i := range 3 {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}
