package gitx

import (
	"context"
	"fmt"
	"os"
	"strings"
)

// Identity is a name and an email as a commit carries them.
type Identity struct{ Name, Email string }

// String is the identity as git writes it: "Name <email>".
func (id Identity) String() string { return fmt.Sprintf("%s <%s>", id.Name, id.Email) }

// ZergIdentity is zerg's own: the committer of its commits, and their
// author where the repository names nobody.
var ZergIdentity = Identity{Name: "zerg", Email: "zerg@localhost"}

// CommitPolicy is how the commits a runner makes are written (config
// commits.*): who they name, whether they are signed off and signed, and
// the feature whose Zerg-Feature trailer each one carries.
type CommitPolicy struct {
	Author    Identity
	Committer Identity
	// Signoff adds "Signed-off-by: <Author>".
	Signoff bool
	// Sign signs with the user's git signing setup (-S, which the
	// hardening's commit.gpgSign=false does not override); Signing is
	// that setup as the repository's config has it (SigningConfig), for
	// the commits zerg makes outside it (in a quarantine).
	Sign    bool
	Signing []string
	// Feature, when set, is the Zerg-Feature trailer of every commit that
	// does not carry one: what tells zerg's commits from anyone else's
	// (MadeByZerg).
	Feature string
}

// ZergCommits is the policy of a runner from New: zerg authors and
// commits, nothing is signed.
func ZergCommits() CommitPolicy {
	return CommitPolicy{Author: ZergIdentity, Committer: ZergIdentity}
}

// WithCommits returns a copy of r whose commits follow p.
func (r *Runner) WithCommits(p CommitPolicy) *Runner {
	c := *r
	c.Commits = p
	return &c
}

// ConfiguredIdentity is the repository's user.name and user.email as
// git reads them for a commit (the repository's config, then the user's
// global one; never the system one, which zerg's git does not read); ok is
// false when either is not set.
func (r *Runner) ConfiguredIdentity(ctx context.Context) (id Identity, ok bool) {
	name, _ := trim(r.Run(ctx, "config", "--get", "user.name"))
	email, _ := trim(r.Run(ctx, "config", "--get", "user.email"))
	if name == "" || email == "" || strings.ContainsAny(name+email, "<>\n") {
		return Identity{}, false
	}
	return Identity{Name: name, Email: email}, true
}

// signingKeys are the options of git's signing setup.
var signingKeys = []string{"gpg.format", "user.signingkey", "gpg.program", "gpg.openpgp.program", "gpg.x509.program", "gpg.ssh.program", "gpg.ssh.defaultkeycommand"}

// SigningConfig is the repository's signing setup (its config, then the
// user's global one) as "key=value" pairs for -c: a commit zerg makes in a
// quarantine, a repository of its own, is signed as one made in the
// repository would be.
func (r *Runner) SigningConfig(ctx context.Context) []string {
	var out []string
	for _, k := range signingKeys {
		if v, _ := trim(r.Run(ctx, "config", "--get", k)); v != "" {
			out = append(out, k+"="+v)
		}
	}
	return out
}

// signingOptions are the -c options of the policy's signing setup.
func (r *Runner) signingOptions() []string {
	if !r.Commits.Sign {
		return nil
	}
	var out []string
	for _, kv := range r.Commits.Signing {
		out = append(out, "-c", kv)
	}
	return out
}

// signingEnv are the variables a signing program needs to reach its agent
// or its keys; passed only when the runner signs.
var signingEnv = []string{"GNUPGHOME", "GPG_AGENT_INFO", "GPG_TTY", "SSH_AUTH_SOCK"}

// identityEnv is the part of git's environment that names the author and
// committer, and what signing needs.
func (r *Runner) identityEnv() []string {
	p := r.Commits
	if p.Author == (Identity{}) {
		p.Author = ZergIdentity
	}
	if p.Committer == (Identity{}) {
		p.Committer = ZergIdentity
	}
	env := []string{
		"GIT_AUTHOR_NAME=" + p.Author.Name,
		"GIT_AUTHOR_EMAIL=" + p.Author.Email,
		"GIT_COMMITTER_NAME=" + p.Committer.Name,
		"GIT_COMMITTER_EMAIL=" + p.Committer.Email,
	}
	if p.Sign {
		for _, k := range signingEnv {
			if v, ok := os.LookupEnv(k); ok {
				env = append(env, k+"="+v)
			}
		}
	}
	return env
}

// signArgs are the options of a commit-making call under the policy.
func (r *Runner) signArgs() []string {
	if r.Commits.Sign {
		return []string{"-S"}
	}
	return nil
}

// zergTrailers are trailers with the policy's own added: the feature's
// Zerg-Feature and the author's Signed-off-by.
func (r *Runner) zergTrailers(trailers map[string]string) map[string]string {
	p := r.Commits
	if p.Feature == "" && !p.Signoff {
		return trailers
	}
	out := map[string]string{}
	for k, v := range trailers {
		out[k] = v
	}
	if _, ok := out[FeatureTrailer]; !ok && p.Feature != "" {
		out[FeatureTrailer] = p.Feature
	}
	if p.Signoff {
		author := p.Author
		if author == (Identity{}) {
			author = ZergIdentity
		}
		out["Signed-off-by"] = author.String()
	}
	return out
}

// FeatureTrailer is the trailer that names the feature of a commit zerg
// made.
const FeatureTrailer = "Zerg-Feature"

// MadeByZerg reports whether a commit is one zerg made for feature: its
// committer is zerg, or (a signed commit names its signer) it carries
// the feature's Zerg-Feature trailer.
func MadeByZerg(committer Identity, featureTrailer, feature string) bool {
	return committer == ZergIdentity || (feature != "" && featureTrailer == feature)
}

// ForeignCommit is a commit on a branch that zerg did not make.
type ForeignCommit struct {
	Commit, Subject string
	Committer       Identity
}

// ForeignCommits lists the commits of tip that no branch, tag or remote
// outside the prefix holds (deleting every branch under prefix would
// lose them) and that zerg did not make for feature (MadeByZerg), newest
// first, at most limit of them.
func (r *Runner) ForeignCommits(ctx context.Context, tip, prefix, feature string, limit int) ([]ForeignCommit, error) {
	if !isHex(tip) {
		return nil, fmt.Errorf("foreign commits: %q is not a full object id", tip)
	}
	out, err := r.Run(ctx, "log", "--format=%H%x00%cn%x00%ce%x00%(trailers:key="+FeatureTrailer+",valueonly,separator=%x20)%x00%s%x1e",
		tip, "--not", "--exclude="+strings.TrimPrefix(prefix, "refs/heads/")+"*", "--branches", "--tags", "--remotes", "--")
	if err != nil {
		return nil, err
	}
	var list []ForeignCommit
	for _, rec := range strings.Split(out, "\x1e") {
		f := strings.Split(strings.TrimLeft(rec, "\n"), "\x00")
		if len(f) != 5 {
			continue
		}
		c := ForeignCommit{Commit: f[0], Committer: Identity{Name: f[1], Email: f[2]}, Subject: f[4]}
		if MadeByZerg(c.Committer, strings.TrimSpace(f[3]), feature) {
			continue
		}
		list = append(list, c)
		if len(list) == limit {
			break
		}
	}
	return list, nil
}
