package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/projectinit"
	"github.com/zergrush/zerg/internal/security"
	"github.com/zergrush/zerg/internal/textx"
)

// initRulesTimeout bounds the rules fetch during init: init must not hang on
// a network that drops packets; `zerg rules update` can be run later.
var initRulesTimeout = 60 * time.Second

// rulesStep is the init step that fetches the security rules at the pinned
// commit into .zerg/cache/rules/<commit>/ and records their checksum in the
// cache's manifest.json (checked against security_rules.sha256, or the
// checksum built into zerg for the default commit). It must run after the
// config step, whose file it reads.
//
// An intact cache is reported as existing and not fetched again. When the
// fetch itself fails (no network, source unreachable) init still succeeds
// with a warning to run `zerg rules update` later; nothing is written, since
// FetchRules installs the cache with one rename. A checksum mismatch or a
// refused tree (symlinks, not a rules repository) fails init: those are
// security findings, not connectivity problems.
func rulesStep() initStep {
	return initStep{name: "security rules", check: checked(projectinit.CheckRulesCache), apply: fetchRulesCache}
}

func fetchRulesCache(env *initEnv, r *initReport) error {
	// The config the earlier step wrote or found (defaults when there is none).
	cfg, err := config.LoadRepo(env.root)
	if err != nil {
		return err
	}
	sr := cfg.SecurityRules
	if !sr.Enabled {
		r.lines = append(r.lines, fmt.Sprintf("%-8s %s (security_rules.enabled is false)", "skipped", security.RulesCacheRel+"/"))
		return nil
	}
	rel := security.RulesCacheRel + "/" + sr.Commit + "/"
	dest := security.RulesCacheDir(env.root, sr.Commit)
	want := sr.Checksum(sr.Commit)
	if m, err := security.VerifyRules(dest, want); err == nil && m.Commit == sr.Commit {
		r.add(&r.Existing, "exists", rel, fmt.Sprintf("verified, %d files, sha256 %.16s…", len(m.Files), m.Checksum))
		return nil
	}
	source := sr.URL
	if !filepath.IsAbs(source) {
		source = security.ResolveSource(env.root, source)
	}
	ctx, cancel := context.WithTimeout(env.ctx, initRulesTimeout)
	defer cancel()
	m, err := security.FetchRules(ctx, source, sr.Commit, dest, want)
	var fe *security.FetchError
	if errors.As(err, &fe) && env.ctx.Err() == nil {
		fmt.Fprintf(env.a.stderr, "zerg: warning: the security rules were not fetched (%s); zerg init went on without them, run `zerg rules update` when %s is reachable\n",
			textx.OneLine(fe.Err.Error()), sr.URL)
		r.lines = append(r.lines, fmt.Sprintf("%-8s %s (fetch failed; run zerg rules update later)", "skipped", rel))
		return nil
	}
	if err != nil {
		return err
	}
	recordAudit(env.a, env.root, security.AuditRulesFetched, map[string]any{
		"source": m.Source, "commit": m.Commit, "sha256": m.Checksum, "files": len(m.Files), "pinned": want != "", "by": "init",
	})
	detail := fmt.Sprintf("%d files at %.12s, sha256 %.16s…", len(m.Files), m.Commit, m.Checksum)
	if want == "" {
		detail += "; pin it with security_rules.sha256"
	}
	r.add(&r.Created, "created", rel, detail)
	return nil
}
