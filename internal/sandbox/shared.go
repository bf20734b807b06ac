package sandbox

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/zergrush/zerg/internal/pathx"
)

// Shared directories (Spec.Shared) are the user's toolchain installs and
// package caches: bound read-only at their own path. bwrap binds them as
// the sandbox's user, which cannot reach a directory inside a home of mode
// 0700 (root's /root/go/pkg/mod, say). For those, zerg, as root, starts
// bwrap through PrepCommand: in a mount namespace of its own it covers each
// unreachable ancestor with an empty tmpfs, binds the shared directories
// back into it read-only, drops to the sandbox's user and executes bwrap,
// which then finds them where they were. The host's mounts never change,
// and nothing else of that ancestor is visible to bwrap.

// PrepCommand is the hidden zerg command that prepares such a namespace.
const PrepCommand = "sandbox-prep"

// PrepConfig is what PrepCommand is asked to do; Flags and the command's
// flag set (internal/cli/sandbox.go) must agree.
type PrepConfig struct {
	UID, GID int
	Cover    []string // unreachable ancestors to cover with an empty tmpfs
	Share    []string // directories to bind back read-only, at their own path
	// Cgroups are cgroup.procs files to join first (a cgroup v1 group),
	// so that bwrap and every process of the sandbox start in the group.
	Cgroups []string
}

// Flag names of PrepCommand.
const (
	FlagUID   = "uid"
	FlagGID   = "gid"
	FlagCover = "cover"
	FlagShare = "share"
	// FlagCgroup names a cgroup.procs file PrepCommand joins.
	FlagCgroup = "cgroup-procs"
)

// Flags renders c as PrepCommand's flags (without the "--" before argv).
func (c PrepConfig) Flags() []string {
	f := []string{"--" + FlagUID, fmt.Sprint(c.UID), "--" + FlagGID, fmt.Sprint(c.GID)}
	for _, d := range c.Cover {
		f = append(f, "--"+FlagCover, d)
	}
	for _, d := range c.Share {
		f = append(f, "--"+FlagShare, d)
	}
	for _, p := range c.Cgroups {
		f = append(f, "--"+FlagCgroup, p)
	}
	return f
}

// sharedPrep returns, for the shared directories that uid:gid cannot
// reach, the ancestors to cover and the directories to bind back; nil when
// bwrap reaches them all. It is pure: reachable decides.
func sharedPrep(shared []string, reachable func(dir string) (blocked string)) *PrepConfig {
	var c PrepConfig
	for _, d := range shared {
		b := reachable(d)
		if b == "" {
			continue
		}
		c.Share = append(c.Share, d)
		if !slices.Contains(c.Cover, b) {
			c.Cover = append(c.Cover, b)
		}
	}
	if len(c.Share) == 0 {
		return nil
	}
	// A covered ancestor inside another covered one would be hidden by the
	// outer tmpfs before it could be covered: keep only the outermost.
	slices.Sort(c.Cover)
	var outer []string
	for _, a := range c.Cover {
		if !slices.ContainsFunc(outer, func(o string) bool { return pathx.Within(o, a) }) {
			outer = append(outer, a)
		}
	}
	c.Cover = outer
	return &c
}

// blockedAncestor returns the outermost ancestor of dir (dir excluded) that
// uid:gid, with no supplementary groups, may not search, or "" when it may
// reach dir. Permission bits only: an ACL that grants more is not seen,
// which costs a needless prep, never a failure.
func blockedAncestor(dir string, uid, gid int) string {
	p := "/"
	for _, part := range strings.Split(strings.TrimPrefix(filepath.Clean(dir), "/"), "/") {
		var st syscall.Stat_t
		if err := syscall.Stat(p, &st); err != nil {
			return ""
		}
		if !searchable(st, uid, gid) {
			return p
		}
		p = filepath.Join(p, part)
	}
	return ""
}

func searchable(st syscall.Stat_t, uid, gid int) bool {
	switch {
	case uid == 0:
		return true
	case int(st.Uid) == uid:
		return st.Mode&0o100 != 0
	case int(st.Gid) == gid:
		return st.Mode&0o010 != 0
	default:
		return st.Mode&0o001 != 0
	}
}
