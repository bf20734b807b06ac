package rush

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/run"
)

// TestCommitsCarryTheUserIdentity: with user.name and user.email set in
// the repository, every commit zerg makes (the task commits and merges on
// the integration branch, and the merge commit zerg merge makes on the
// user's branch) is authored by the user. By default zerg is the
// committer; with commits.sign and commits.signoff each commit is signed
// with the user's SSH key (as their git config says), verifies, names the
// user as committer and carries the sign-off and zerg's trailer.
func TestCommitsCarryTheUserIdentity(t *testing.T) {
	t.Parallel()
	for _, signed := range []bool{false, true} {
		name := map[bool]string{false: "default", true: "signed"}[signed]
		t.Run(name, func(t *testing.T) {
			key := filepath.Join(t.TempDir(), "key")
			if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "ada@example.org", "-f", key).CombinedOutput(); err != nil {
				t.Fatalf("ssh-keygen: %v %s", err, out)
			}
			p := newProject(t, func(dir string) {
				if signed {
					editFile(t, filepath.Join(dir, ".zerg", "config.yaml"), func(s string) string {
						return s + "commits:\n  sign: true\n  signoff: true\n"
					})
				}
			})
			pub, _ := os.ReadFile(key + ".pub")
			allowed := filepath.Join(t.TempDir(), "allowed")
			os.WriteFile(allowed, []byte("ada@example.org "+string(pub)), 0o644)
			for _, kv := range [][2]string{{"user.name", "Ada Lovelace"}, {"user.email", "ada@example.org"},
				{"gpg.format", "ssh"}, {"user.signingKey", key}, {"gpg.ssh.allowedSignersFile", allowed}} {
				p.git("config", kv[0], kv[1])
			}
			if r := p.zerg("rush", "demo", "--rehearse"); r.code != 0 {
				t.Fatalf("rush: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			// A commit of the user's on main, so that the merge is a merge
			// commit on their branch.
			os.WriteFile(filepath.Join(p.dir, "NOTES.md"), []byte("mine\n"), 0o644)
			p.git("add", "NOTES.md")
			p.git("commit", "-q", "-m", "my notes")
			if m := p.zerg("merge", "demo", "--into", "main"); m.code != 0 {
				t.Fatalf("merge: exit %d\n%s%s", m.code, m.stdout, m.stderr)
			}
			committer := "zerg <zerg@localhost>"
			if signed {
				committer = "Ada Lovelace <ada@example.org>"
			}
			commits := strings.Fields(p.git("rev-list", p.base+".."+run.IntegrationBranch("demo")))
			if len(commits) < 7 {
				t.Fatalf("%d commits on the integration branch", len(commits))
			}
			merge := p.git("rev-parse", "main")
			if parents := strings.Fields(p.git("rev-list", "--parents", "-n", "1", merge)); len(parents) != 3 {
				t.Fatalf("main's head %s is not a merge commit: %v", merge, parents)
			}
			for _, c := range append(commits, merge) {
				got := p.git("log", "-1", "--format=%an <%ae>|%cn <%ce>|%B", c)
				if !strings.HasPrefix(got, "Ada Lovelace <ada@example.org>|"+committer+"|") {
					t.Errorf("commit %s: %q, want author Ada Lovelace and committer %s", c[:10], strings.SplitN(got, "|", 3)[:2], committer)
				}
				if !strings.Contains(got, "Zerg-Feature: demo") {
					t.Errorf("commit %s lacks zerg's trailer:\n%s", c[:10], got)
				}
				cmd := exec.Command("git", "verify-commit", c)
				cmd.Dir, cmd.Env = p.dir, append(p.env(), "GIT_CONFIG_NOSYSTEM=1")
				out, err := cmd.CombinedOutput()
				if signed != (err == nil) {
					t.Errorf("commit %s: signed %v, verify-commit: %v %s", c[:10], signed, err, out)
				}
				if signed && !strings.Contains(got, "Signed-off-by: Ada Lovelace <ada@example.org>") {
					t.Errorf("commit %s lacks the sign-off:\n%s", c[:10], got)
				}
			}
		})
	}
}
