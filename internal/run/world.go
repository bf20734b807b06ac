package run

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/zergrush/zerg/internal/attempt"
	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/driver"
	"github.com/zergrush/zerg/internal/eventlog"
	"github.com/zergrush/zerg/internal/fsx"
	"github.com/zergrush/zerg/internal/gateway"
	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/outcome"
	"github.com/zergrush/zerg/internal/runstate"
	"github.com/zergrush/zerg/internal/security"
)

// The real implementations of the coordinator's ports: git through gitx,
// attempts through the attempt package and the claude CLI, kills through
// the claude package's process records.

// realDeps builds the dependencies of a real run. The returned func closes
// what they opened (the audit log).
func realDeps(ctx context.Context, c *Coordinator, opts Options, log *eventlog.Log, worker claude.Spec) (Deps, func(), error) {
	repo := opts.repo()
	sec, err := openSecurity(opts, c.progress)
	if err != nil {
		return Deps{}, nil, err
	}
	// budget.run_usd, enforced by every attempt's gateway (drivers with
	// one): what the run spent before (a resume's earlier attempts) and
	// what its attempts spend as the API reports it. A gate takes a slot
	// of the workers' like an attempt.
	meter := gateway.NewMeter(opts.Config.Budget.RunUSD, c.state.CostUSD)
	worker = attempt.WorkerTemplate(opts.Config, worker)
	// A prepared worker holds a slot (a worker user) of its own while the
	// running attempts hold theirs.
	slots := c.workers
	if c.caps != nil && c.caps.PreparesWorkers {
		slots *= 2
	}
	drv, _, err := newDriver(ctx, opts, c.paths, c.graph, worker, slots, meter)
	if err != nil {
		_ = sec.audit.Close() // Audit.Close only marks it closed: each record is written when made
		return Deps{}, nil, err
	}
	a := &realAttempter{repo: repo, feature: c.feature, graph: c.graph, cfg: opts.Config, worker: worker,
		sec: sec, specDir: c.paths.SpecDir, drv: drv, filesystems: []string{c.paths.RunDir, c.paths.Workspaces}}
	return Deps{
		Log:        log,
		Attempter:  a,
		Integrator: &gitIntegrator{repo: repo, ws: c.paths.Merge, drv: drv, pass: opts.Config.Env.Pass},
		Refs:       gitRefs{repo: repo},
		Salvager:   gitSalvager{repo: repo, drv: drv},
		Clock:      realClock{},
		Snapshot: func(raw []byte) error {
			return fsx.WritePrivate(c.paths.GraphSnapshot, raw)
		},
	}, func() { _ = sec.audit.Close() }, nil // only marks it closed: each record is written when made
}

// gitRefs reads and moves branches with git.
type gitRefs struct{ repo *gitx.Repo }

func (g gitRefs) UserHead(ctx context.Context) (string, string, error) {
	commit, err := g.repo.RevParse(ctx, "HEAD")
	if err != nil {
		return "", "", err
	}
	branch, err := g.repo.CurrentBranch(ctx)
	return commit, branch, err
}

func (g gitRefs) Branch(ctx context.Context, name string) (string, error) {
	ok, err := g.repo.BranchExists(ctx, name)
	if err != nil || !ok {
		return "", err
	}
	return g.repo.RevParse(ctx, "refs/heads/"+name)
}

func (g gitRefs) IsAncestor(ctx context.Context, a, b string) (bool, error) {
	return g.repo.IsAncestor(ctx, a, b)
}

func (g gitRefs) SetBranch(ctx context.Context, name, commit, old string) error {
	if old == "" {
		// Create: the all-zero old value makes git refuse if the branch
		// appeared in the meantime, rather than overwrite it.
		old = strings.Repeat("0", len(commit))
	}
	return g.repo.SetBranch(ctx, name, commit, old)
}

// gitSalvager reaps a lost attempt's processes and saves its work.
type gitSalvager struct {
	repo *gitx.Repo
	drv  driver.Driver
}

func (g gitSalvager) ReapRun(ctx context.Context) int {
	if r, ok := g.drv.(driver.Reaper); ok {
		return r.ReapLeftovers(ctx)
	}
	return 0
}

func (g gitSalvager) Reap(o runstate.OpenAttempt) int {
	if len(o.PIDs) == 0 && o.Marker == "" && o.Workspace == "" {
		return 0
	}
	return len(claude.KillRecorded(o.Marker, o.PIDs, 2*time.Second, o.Workspace))
}

// Preserve commits whatever an abandoned attempt left in its workspace to
// its own branch, then removes the workspace; dirty work is never deleted.
func (g gitSalvager) Preserve(ctx context.Context, task string, o runstate.OpenAttempt) (string, error) {
	if _, err := os.Stat(o.Workspace); err != nil {
		return "", nil // never created, or already gone
	}
	if !o.WorkspaceKind.ZergCommitsIn(o.Workspace) {
		// A private clone (its git is the worker's, and zerg runs no git
		// in it) or another machine's result: it stays where it is for a
		// person.
		return "", fmt.Errorf("a sandboxed workspace is kept as it is in %s", o.Workspace)
	}
	// A workspace handed to the worker user is trusted only by exact path.
	if err := g.repo.TrustWorkspace(o.Workspace); err != nil {
		return "", err
	}
	defer g.repo.UntrustWorkspace(o.Workspace)
	w := g.repo.In(o.Workspace)
	if _, err := w.ChangedFiles(ctx, "HEAD"); err != nil {
		return "", err
	}
	commit, err := w.Commit(ctx, fmt.Sprintf("%s: attempt %d abandoned", task, o.Number),
		map[string]string{"Task-Id": task, "Zerg-Status": outcome.ReasonAbandoned, "Zerg-Attempt": fmt.Sprint(o.Number)})
	if err != nil {
		return "", err
	}
	if err := g.repo.RemoveWorktree(ctx, o.Workspace); err != nil {
		return commit, err
	}
	return commit, nil
}

// security is what every attempt shares: the secret scanner, the audit log
// and the verified rules cache ("" when rules are off or not fetched).
type securityKit struct {
	scanner  *security.Scanner
	audit    *security.Audit
	rulesDir string
}

// openSecurity builds the secret scanner, opens the audit log, records the
// environment decisions and checks the security rules cache against its
// pinned checksum.
func openSecurity(opts Options, pr *progress) (*securityKit, error) {
	sc, err := security.NewScanner()
	if err != nil {
		return nil, fmt.Errorf("secret scanner: %w", err)
	}
	k := &securityKit{scanner: sc}
	if k.audit, err = security.OpenAudit(security.AuditPath(opts.Root)); err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	if err := recordEnv(k.audit, opts); err != nil {
		_ = k.audit.Close() // only marks it closed
		return nil, fmt.Errorf("write the audit log: %w", err)
	}
	rules := opts.Config.SecurityRules
	if !rules.Enabled {
		return k, nil
	}
	dir := security.RulesCacheDir(opts.Root, rules.Commit)
	if _, err := security.VerifyRules(dir, rules.Checksum(rules.Commit)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			pr.note("warning: the security rules are not fetched; workers get none (run zerg rules update)")
			return k, nil
		}
		_ = k.audit.Close() // only marks it closed
		return nil, &Error{Kind: BadInput, Feature: opts.Feature, Path: dir, Err: fmt.Errorf("the security rules in %s fail verification: %v", dir, err)}
	}
	k.rulesDir = dir
	return k, nil
}

// recordEnv writes to the audit log which of zerg's environment variables
// workers will not get (names only), and every dangerous name the config
// passes anyway.
func recordEnv(audit *security.Audit, opts Options) error {
	pass := opts.Config.Env.Pass
	var dropped []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if claude.InheritedEnv(name) || slices.Contains(pass, name) ||
			name == claude.EnvAPIKey || name == claude.EnvAuthToken || name == claude.EnvOAuthToken || name == claude.EnvBaseURL {
			continue
		}
		dropped = append(dropped, name)
	}
	slices.Sort(dropped)
	if len(dropped) > 0 {
		if err := audit.Record(security.AuditEnvDropped, map[string]any{"feature": opts.Feature, "names": dropped}); err != nil {
			return err
		}
	}
	for _, name := range opts.Config.Env.AllowDangerous {
		if _, set := os.LookupEnv(name); set {
			if err := audit.Record(security.AuditDangerousEnvAllowed, map[string]any{"feature": opts.Feature, "name": name, "why": security.DangerousEnv(name)}); err != nil {
				return err
			}
		}
	}
	return nil
}
