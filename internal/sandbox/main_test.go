package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/sandbox/sandboxtest"
)

// The tests that start real sandboxes are in e2e/sandbox. Those here run
// Check against a fake bwrap, which it starts as the sandbox's
// unprivileged user (sandboxtest.UserName when the tests run as root).
var testUID, testGID int

func TestMain(m *testing.M) {
	var err error
	testUID, testGID, err = sandboxtest.User()
	if err != nil {
		fmt.Fprintln(os.Stderr, "internal/sandbox: the test user:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func mkdir(t *testing.T, d string) {
	t.Helper()
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
}

// The mount order: parents before children, a tmpfs before a bind of the
// same path, read-only after writable; the fixed binds and the init last.
func TestBwrapArgsOrder(t *testing.T) {
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	work := filepath.Join(ws, "work")
	attempt := filepath.Join(root, "runs", "a1")
	home := filepath.Join(attempt, "home")
	hooks := filepath.Join(work, ".git", "hooks")
	shared := filepath.Join(root, "shared")
	for _, d := range []string{work, home, hooks, shared} {
		mkdir(t, d)
	}
	s := Spec{
		Workdir: work, Home: home, UID: testUID, GID: testGID,
		Hide:     []string{ws, filepath.Join(root, "runs"), shared},
		ReadOnly: []string{hooks, attempt, shared},
		Writable: []string{shared},
		Env:      []string{"A=1=2"},
		Limits:   Limits{Processes: 64, FileSizeBytes: 1 << 20},
	}
	args, _, err := s.bwrapArgs([]string{"/bin/sh", "-c", "x"})
	if err != nil {
		t.Fatal(err)
	}
	joined := " " + strings.Join(args, " ") + " "
	pos := func(s string) int {
		t.Helper()
		i := strings.Index(joined, " "+s+" ")
		if i < 0 {
			t.Fatalf("args lack %q:\n%s", s, joined)
		}
		return i
	}
	before := func(a, b string) {
		t.Helper()
		if pos(a) >= pos(b) {
			t.Fatalf("%q must come before %q:\n%s", a, b, joined)
		}
	}
	before("--ro-bind / /", "--tmpfs /tmp")
	before("--tmpfs "+ws, "--bind "+work+" "+work)
	before("--bind "+work+" "+work, "--ro-bind "+hooks+" "+hooks)
	before("--ro-bind "+attempt+" "+attempt, "--bind "+home+" "+home)
	before("--tmpfs "+filepath.Join(root, "runs"), "--ro-bind "+attempt+" "+attempt)
	before("--ro-bind "+hooks+" "+hooks, "--cap-drop ALL")
	// The same path thrice: the tmpfs first, then the binds, read-only last.
	before("--tmpfs "+shared, "--bind "+shared+" "+shared)
	before("--bind "+shared+" "+shared, "--ro-bind "+shared+" "+shared)
	before("--setenv A 1=2", "--chdir "+work)
	if !strings.HasSuffix(joined, " -- "+insideExe+" "+InitCommand+" --processes 64 --file-size-bytes 1048576 -- /bin/sh -c x ") {
		t.Fatalf("the command line ends in %q", joined[len(joined)-120:])
	}
	for _, f := range []string{"--die-with-parent", "--new-session", "--unshare-all", "--unshare-user", "--disable-userns", "--as-pid-1", "--clearenv"} {
		if pos(f) > pos("--chdir") {
			t.Fatalf("%s is not a bwrap flag here:\n%s", f, joined)
		}
	}
}

// A hidden file is covered by /dev/null after every mount of its
// directories (a tmpfs or a read-only bind of its parent would otherwise
// undo the cover, or be undone by it); a file that is not there is refused
// rather than left uncovered.
func TestBwrapArgsHideFile(t *testing.T) {
	root := t.TempDir()
	work := filepath.Join(root, "work")
	etc := filepath.Join(root, "etc")
	for _, d := range []string{work, etc} {
		mkdir(t, d)
	}
	creds := filepath.Join(etc, "a1.creds.json")
	if err := os.WriteFile(creds, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := Spec{Workdir: work, UID: testUID, GID: testGID, ReadOnly: []string{etc}, Hide: []string{etc}, HideFiles: []string{creds}}
	args, _, err := s.bwrapArgs([]string{"/bin/true"})
	if err != nil {
		t.Fatal(err)
	}
	joined := " " + strings.Join(args, " ") + " "
	cover := strings.Index(joined, " --ro-bind /dev/null "+creds+" ")
	if cover < 0 {
		t.Fatalf("no cover of %s:\n%s", creds, joined)
	}
	for _, m := range []string{"--tmpfs " + etc, "--ro-bind " + etc + " " + etc} {
		if i := strings.Index(joined, " "+m+" "); i < 0 || i > cover {
			t.Errorf("%q must come before the cover:\n%s", m, joined)
		}
	}
	// Control: without HideFiles there is no cover.
	s.HideFiles = nil
	args, _, _ = s.bwrapArgs([]string{"/bin/true"})
	if strings.Contains(strings.Join(args, " "), "/dev/null "+creds) {
		t.Errorf("control: a cover without HideFiles")
	}
	s.HideFiles = []string{filepath.Join(etc, "missing.json")}
	if _, _, err := s.bwrapArgs([]string{"/bin/true"}); err == nil {
		t.Errorf("a hidden file that does not exist was accepted")
	}
}
