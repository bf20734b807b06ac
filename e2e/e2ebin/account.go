package e2ebin

import (
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"testing"
)

// OtherAccountName is the second account the red-team tests attack from:
// another user of the same host, no relation to zerg or its workers.
const OtherAccountName = "zerg-rt-other"

// Account is a user of the host.
type Account struct {
	Name     string
	UID, GID int
}

// OtherAccount is the red team's second account, created when missing
// (the tests run as root, as CI does; without root they fail, never skip:
// an attack that was never tried is not a defence).
func OtherAccount(t testing.TB) Account {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("this red-team test needs root: it attacks from a second account, " + OtherAccountName)
	}
	u, err := user.Lookup(OtherAccountName)
	if err != nil {
		out, err := exec.Command("useradd", "--system", "--user-group", "--no-create-home", "--home-dir", "/nonexistent",
			"--shell", "/usr/sbin/nologin", OtherAccountName).CombinedOutput()
		if err != nil {
			// Another suite may have made it at the same moment.
			if u, err = user.Lookup(OtherAccountName); err != nil {
				t.Fatalf("useradd %s: %v\n%s", OtherAccountName, err, out)
			}
		} else if u, err = user.Lookup(OtherAccountName); err != nil {
			t.Fatal(err)
		}
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return Account{Name: u.Username, UID: uid, GID: gid}
}

// As is argv run as the account, no groups of root's. setpriv changes
// the credentials and execs argv in place (runuser would fork and wait),
// so the process the Cmd starts is argv's own: killing it kills the
// program, and nothing of the account's outlives the test holding what
// the test holds (the e2e lock's descriptor, say).
func (a Account) As(argv ...string) *exec.Cmd {
	return exec.Command("setpriv", append([]string{"--reuid=" + strconv.Itoa(a.UID), "--regid=" + strconv.Itoa(a.GID), "--clear-groups",
		"--reset-env", "--"}, argv...)...)
}
