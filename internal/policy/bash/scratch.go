package bash

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"

	"github.com/zergrush/zerg/internal/pathx"
)

// Scratch space outside the workspace for the worker's Bash commands
// (subprocess mode): its own TMPDIR under the attempt dir (Policy.Scratch),
// and entries of its own in the machine's /tmp (Policy.SharedTmp), where
// models habitually put a built binary, a log or a throwaway repository.
//
// /tmp is shared with every user and process of the machine, so an entry
// there is the worker's only when it does not exist yet (the command makes
// it) or it is owned by the worker's uid, is not a symbolic link and, if a
// directory, is writable by nobody else; /tmp itself is never listed nor a
// working directory, and names other programs keep their state or
// credentials under are never the worker's (reservedTmpName). What remains:
// when zerg does not run as root, workers have the uid of the user running
// zerg, so a /tmp entry that user made (outside those names) passes too.
// Run zerg as root (workers get their own user) or use sandbox mode, where
// /tmp is private to the worker.

// reservedTmpPrefixes are /tmp names of other programs' state and sockets,
// never a worker's scratch: Claude Code's own (claude-<uid>, read only
// through claudeTaskOutput), zerg's, Kerberos tickets, agents, terminal
// multiplexers, the desktop session.
var reservedTmpPrefixes = []string{"claude-", "zerg", "krb5", "ssh-", "tmux-", "screen", "systemd-", "snap-", "gpg",
	"pulse-", "dbus-", "vscode", "jetbrains", "keyring", "xdg", "runtime-", "sddm", "lightdm", "gnome", "kde", "mc-",
	"agent", "pyright", "hsperfdata"}

func reservedTmpName(name string) bool {
	return strings.HasPrefix(name, ".") || hasPrefix(name, reservedTmpPrefixes...)
}

// inScratch reports whether the resolved path is inside (or is) one of the
// worker's own scratch directories.
func (sc Scope) InScratch(resolved string) bool { return within(resolved, sc.Scratch...) }

// sharedTmpOK reports whether the resolved path is inside an entry of the
// shared /tmp that is the worker's own (see the top of this file). An entry
// holding the workspace, a read dir or a protected path (a workspace or an
// attempt dir that lives in /tmp) is zerg's, never scratch.
func (sc Scope) sharedTmpOK(resolved string) bool {
	if sc.SharedTmp == "" {
		return false
	}
	rel, ok := pathx.Rel(sc.SharedTmp, resolved)
	if !ok || rel == "." {
		return false
	}
	top := strings.Split(rel, string(filepath.Separator))[0]
	if reservedTmpName(top) {
		return false
	}
	entry := filepath.Join(sc.SharedTmp, top)
	if sc.holdsOwn(entry) {
		return false
	}
	fi, err := os.Lstat(entry)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return true // made by this command line
	case err != nil, fi.Mode()&os.ModeSymlink != 0:
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) != os.Geteuid() {
		return false
	}
	return !fi.IsDir() || fi.Mode().Perm()&0o022 == 0
}

// holdsOwn reports whether the entry of a temporary directory holds the
// workspace, a read dir or a protected path: zerg's, never scratch.
func (sc Scope) holdsOwn(entry string) bool {
	return slices.ContainsFunc(append(append([]string{sc.Workspace}, sc.Reads...), sc.Protected...), func(z string) bool { return pathx.Within(entry, z) })
}

// ownDir reports whether the resolved directory may be the shell's working
// directory outside the workspace: a scratch directory, or an entry of the
// shared /tmp that is the worker's own.
func (sc Scope) ownDir(resolved string) bool {
	return sc.InScratch(resolved) || sc.sharedTmpOK(resolved)
}

// claudeTaskOutput reports whether the resolved path is the output file of
// a Claude Code background task under the shared /tmp
// (/tmp/claude-<uid>/<project>/tasks/<id>.output): the CLI tells the model to
// read it there when its temporary directory is the default one. Read only.
func (sc Scope) claudeTaskOutput(resolved string) bool {
	if sc.SharedTmp == "" {
		return false
	}
	rel, ok := pathx.Rel(sc.SharedTmp, resolved)
	if !ok {
		return false
	}
	return claudeTaskRE.MatchString(filepath.ToSlash(rel))
}

var claudeTaskRE = regexp.MustCompile(`^claude-[0-9]+/[^/]+/tasks/[A-Za-z0-9_-]+\.output$`)

// inSharedTmp reports whether the shell may be in a directory of the
// shared /tmp: programs other than the default commands would then read
// configuration they find there and in /tmp itself (a Makefile, a
// package.json, a conftest.py), which anyone may have put there.
func (ck *bashChecker) inSharedTmp() bool {
	return ck.sc.SharedTmp != "" && slices.ContainsFunc(ck.cwds, func(c string) bool {
		return within(c, ck.sc.SharedTmp) && !within(c, ck.sc.Workspace) && !ck.sc.InScratch(c)
	})
}

// tmpRootCommands may run with the shared /tmp itself as the working
// directory: they only open the files they name (and "." or a pattern
// there, which would be /tmp itself, is refused as any other path).
var tmpRootCommands = set("mkdir rm rmdir touch cp mv cat head tail wc echo printf true false test [ sleep chmod tee stat file diff cmp")

// inTmpRoot reports whether the shell may be in the shared /tmp itself.
func (ck *bashChecker) inTmpRoot() bool {
	return ck.sc.SharedTmp != "" && slices.Contains(ck.cwds, ck.sc.SharedTmp)
}
