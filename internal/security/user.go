package security

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// DefaultWorkerUser is the unprivileged account workers run as when zerg
// runs as root (config: security.worker_user).
const DefaultWorkerUser = "zerg-worker"

// WorkerUser is the unprivileged account a worker runs as.
type WorkerUser struct {
	Name string
	UID  int
	GID  int
	// Home is the account's home from the passwd database. Workers do not use
	// it (their HOME is inside the attempt dir); it is reported only.
	Home string
}

func (u *WorkerUser) String() string {
	return fmt.Sprintf("%s (uid %d, gid %d)", u.Name, u.UID, u.GID)
}

// ErrWorkerUser marks a worker-user problem a person must fix.
var ErrWorkerUser = errors.New("worker user")

var userNameRE = regexp.MustCompile(`^[a-z_][a-z0-9_-]{0,30}$`)

// ValidWorkerUserName checks a configured worker user name: a portable
// system user name, never root.
func ValidWorkerUserName(name string) error {
	switch {
	case name == "root":
		return fmt.Errorf("%w: %q would run workers with full privileges", ErrWorkerUser, name)
	case !userNameRE.MatchString(name):
		return fmt.Errorf("%w: %q is not a valid user name (lower-case letters, digits, _ and -, at most 31, not starting with a digit or -)", ErrWorkerUser, name)
	}
	return nil
}

// LookupWorkerUser finds an existing worker user. A user whose uid or gid
// is 0 is refused.
func LookupWorkerUser(name string) (*WorkerUser, error) {
	if err := ValidWorkerUserName(name); err != nil {
		return nil, err
	}
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrWorkerUser, err)
	}
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("%w: %s has a non-numeric uid/gid %s/%s", ErrWorkerUser, name, u.Uid, u.Gid)
	}
	if uid == 0 || gid == 0 {
		return nil, fmt.Errorf("%w: %s has uid %d gid %d; a worker user must not be root or in group 0", ErrWorkerUser, name, uid, gid)
	}
	return &WorkerUser{Name: name, UID: uid, GID: gid, Home: u.HomeDir}, nil
}

// useradd is a seam for tests.
var useraddCommand = []string{"useradd", "--system", "--user-group", "--create-home", "--shell", "/usr/sbin/nologin"}

// EnsureWorkerUser returns the worker user, creating it first (a system
// account with its own group, a home under /var/lib and no login shell)
// when it is missing and zerg runs as root.
func EnsureWorkerUser(ctx context.Context, name string) (*WorkerUser, error) {
	if err := ValidWorkerUserName(name); err != nil {
		return nil, err
	}
	u, err := LookupWorkerUser(name)
	if err == nil {
		return u, nil
	}
	var unknown user.UnknownUserError
	if !errors.As(err, &unknown) {
		return nil, err
	}
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("%w: %s does not exist and only root can create it", ErrWorkerUser, name)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	args := append(append([]string{}, useraddCommand[1:]...), "--home-dir", filepath.Join("/var/lib", name), "--", name)
	cmd := exec.CommandContext(ctx, useraddCommand[0], args...)
	cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		// Another zerg may have created it concurrently (useradd exit 9).
		if u, lerr := LookupWorkerUser(name); lerr == nil {
			return u, nil
		}
		return nil, fmt.Errorf("%w: create %s with %s: %v: %s", ErrWorkerUser, name, useraddCommand[0], err, strings.TrimSpace(string(out)))
	}
	return LookupWorkerUser(name)
}

// ResolveWorkerUser is EnsureWorkerUser returning plain values.
func ResolveWorkerUser(name string) (uid, gid int, home string, err error) {
	u, err := EnsureWorkerUser(context.Background(), name)
	if err != nil {
		return 0, 0, "", err
	}
	return u.UID, u.GID, u.Home, nil
}

// Access bits for CheckAccess.
const (
	AccessRead  = 4
	AccessWrite = 2
	AccessExec  = 1
)

// CheckAccess reports whether u can reach p (search permission on every
// directory on the way, symlinks followed) and has the wanted access bits on
// it. The error names the first directory or file that stops it. Only mode
// bits are read: ACLs and capabilities are not considered, and supplementary
// groups do not count because workers run with none.
func (u *WorkerUser) CheckAccess(p string, want int) error {
	if !filepath.IsAbs(p) {
		return fmt.Errorf("%s is not an absolute path", p)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return fmt.Errorf("resolve %s: %w", p, err)
	}
	// Every ancestor of the path as written and of its target must be
	// searchable: the kernel walks the link itself too.
	for _, q := range uniq(filepath.Clean(p), real) {
		dirs := []string{}
		for d := filepath.Dir(q); ; d = filepath.Dir(d) {
			dirs = append(dirs, d)
			if d == filepath.Dir(d) {
				break
			}
		}
		for i := len(dirs) - 1; i >= 0; i-- {
			st, err := os.Stat(dirs[i])
			if err != nil {
				return fmt.Errorf("stat %s: %w", dirs[i], err)
			}
			if !u.can(st, AccessExec) {
				return fmt.Errorf("%w: %s cannot enter %s (mode %s, owner %s); make it searchable (chmod o+x) or move the files elsewhere",
					ErrWorkerUser, u.Name, dirs[i], st.Mode().Perm(), owner(st))
			}
		}
	}
	st, err := os.Stat(real)
	if err != nil {
		return fmt.Errorf("stat %s: %w", real, err)
	}
	if !u.can(st, want) {
		return fmt.Errorf("%w: %s lacks %s access to %s (mode %s, owner %s)", ErrWorkerUser, u.Name, accessName(want), real, st.Mode().Perm(), owner(st))
	}
	return nil
}

func uniq(a, b string) []string {
	if a == b {
		return []string{a}
	}
	return []string{a, b}
}

func (u *WorkerUser) can(st fs.FileInfo, want int) bool {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return false
	}
	perm := int(st.Mode().Perm())
	var bits int
	switch {
	case int(sys.Uid) == u.UID:
		bits = perm >> 6
	case int(sys.Gid) == u.GID:
		bits = perm >> 3
	default:
		bits = perm
	}
	return bits&7&want == want
}

func owner(st fs.FileInfo) string {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return fmt.Sprintf("%d:%d", sys.Uid, sys.Gid)
	}
	return "?"
}

func accessName(want int) string {
	var s []string
	if want&AccessRead != 0 {
		s = append(s, "read")
	}
	if want&AccessWrite != 0 {
		s = append(s, "write")
	}
	if want&AccessExec != 0 {
		s = append(s, "execute")
	}
	return strings.Join(s, "+")
}

// GiveTree makes dir and everything under it owned by u (chown -R without
// following symlinks), except the paths in keep (relative to dir), which
// stay as they are. Workspaces keep their ".git" file root's: a worker could
// still delete and replace it (it owns the directory), but not forge its
// owner, which is how gitx recognises zerg's own workspace.
func (u *WorkerUser) GiveTree(dir string, keep ...string) error {
	dir = filepath.Clean(dir)
	skip := map[string]bool{}
	for _, k := range keep {
		skip[filepath.Join(dir, k)] = true
	}
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if skip[p] {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if err := os.Lchown(p, u.UID, u.GID); err != nil {
			return fmt.Errorf("give %s to %s: %w", p, u.Name, err)
		}
		return nil
	})
}

// PrepareWorkspace hands a freshly created workspace to the worker user:
// everything becomes u's except the top-level ".git" (a worktree's gitdir
// file or a clone's git directory), and the directories above it must be
// enterable by u. Call it after `git worktree add` and before starting the
// worker; zerg's own git calls then need gitx's Trusted option.
func (u *WorkerUser) PrepareWorkspace(ws string) error {
	if err := u.GiveTree(ws, ".git"); err != nil {
		return err
	}
	return u.CheckAccess(ws, AccessRead|AccessWrite|AccessExec)
}

// PrepareAttemptDir creates the attempt's private directory so that u can
// reach it and use home/, config/ and tmp/ under it, while the directory
// itself and the files zerg puts there (settings, policy) stay zerg's and
// read-only for u. The driver calls it; it is exported for the coordinator's
// checks.
func (u *WorkerUser) PrepareAttemptDir(dir string, private ...string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create attempt dir: %w", err)
	}
	// MkdirAll keeps an existing directory's mode; the worker must be able
	// to enter it but never write it.
	if err := os.Chmod(dir, 0o755); err != nil {
		return fmt.Errorf("attempt dir: %w", err)
	}
	for _, name := range private {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(p, 0o700); err != nil {
			return fmt.Errorf("create %s: %w", p, err)
		}
		if err := u.GiveTree(p); err != nil {
			return err
		}
	}
	return u.CheckAccess(dir, AccessRead|AccessExec)
}

// Invoker is the user a kept workspace is handed back to: the one who ran
// zerg (SUDO_UID/SUDO_GID when zerg runs as root through sudo), so that
// their own git reads it.
func Invoker() (uid, gid int) {
	uid, gid = os.Geteuid(), os.Getegid()
	if uid == 0 {
		if u, err := strconv.Atoi(os.Getenv("SUDO_UID")); err == nil && u > 0 {
			uid = u
			if g, err := strconv.Atoi(os.Getenv("SUDO_GID")); err == nil && g > 0 {
				gid = g
			}
		}
	}
	return uid, gid
}

// HandBack makes a sandboxed workspace zerg keeps for a person (its
// worker's work could not be committed) theirs and safe for their git:
// the worker's .git/config and hooks (where a planted core.fsmonitor,
// filter or hook would run as whoever runs git there) are set aside as
// config.worker and hooks.worker, a plain config takes their place, and
// the tree is chowned to the invoking user. git would otherwise refuse the
// worker-owned repository ("dubious ownership"), rightly.
func HandBack(ws string) error {
	gitDir := filepath.Join(ws, ".git")
	if fi, err := os.Lstat(gitDir); err == nil && fi.IsDir() {
		for _, name := range []string{"config", "hooks"} {
			p := filepath.Join(gitDir, name)
			if _, err := os.Lstat(p); err == nil {
				if err := os.Rename(p, p+".worker"); err != nil {
					return fmt.Errorf("set aside %s: %w", p, err)
				}
			}
		}
		if err := os.WriteFile(filepath.Join(gitDir, "config"), []byte("[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n"), 0o644); err != nil {
			return err
		}
	}
	return giveInvoker(ws, "")
}

// HandBackWorktree makes a subprocess-mode worktree zerg keeps for a
// person (it holds uncommitted work) theirs, so that their git works
// there: everything but its top-level .git, the file that points into the
// repository, which stays zerg's (gitx recognises zerg's workspace by it).
// The worktree's git configuration is the repository's own, which no
// worker writes.
func HandBackWorktree(ws string) error { return giveInvoker(ws, ".git") }

// InvokerOwns reports whether the invoking user owns p itself: a kept
// workspace zerg handed back.
func InvokerOwns(p string) bool {
	fi, err := os.Lstat(p)
	if err != nil {
		return false
	}
	sys, ok := fi.Sys().(*syscall.Stat_t)
	uid, _ := Invoker()
	return ok && int(sys.Uid) == uid
}

// giveInvoker chowns ws and everything under it to the invoking user,
// without following links, but for its top-level entry skip ("" for none).
func giveInvoker(ws, skip string) error {
	ws = filepath.Clean(ws)
	uid, gid := Invoker()
	return filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if skip != "" && p == filepath.Join(ws, skip) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if err := os.Lchown(p, uid, gid); err != nil {
			return fmt.Errorf("hand %s back: %w", p, err)
		}
		return nil
	})
}

// WorkerUserForRoot is the unprivileged user zerg runs model sessions and
// the code they write as when it runs as root (nil otherwise): never root,
// which would read every secret on the machine and whose files could later
// run as root. A missing user is created (EnsureWorkerUser); failing that,
// the error says what to set, the caller's bad input.
func WorkerUserForRoot(ctx context.Context, name string) (*WorkerUser, error) {
	return workerUserFor(ctx, os.Geteuid(), name)
}

func workerUserFor(ctx context.Context, euid int, name string) (*WorkerUser, error) {
	if euid != 0 {
		return nil, nil
	}
	u, err := EnsureWorkerUser(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("running as root needs the unprivileged worker user %q: %v (set security.worker_user in .zerg/config.yaml, or run zerg as a normal user)", name, err)
	}
	return u, nil
}
