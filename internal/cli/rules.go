package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/pathx"
	"github.com/zergrush/zerg/internal/security"
	"github.com/zergrush/zerg/internal/textx"
)

func init() { register(newRulesCmd) }

func newRulesCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rules",
		Short: "Fetch, verify and show the security rules given to workers",
		Long: `The security rules (github.com/TikiTribe/claude-secure-coding-rules) are fetched
at the commit pinned in .zerg/config.yaml (security_rules) into
.zerg/cache/rules/<commit>/ with a manifest and a SHA-256 checksum. Each worker
gets the core rules plus the rules of its files' languages. See docs/rules.md.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErrorf("unknown command %q for %q (see '%s --help')", args[0], cmd.CommandPath(), cmd.CommandPath())
			}
			return cmd.Help()
		},
	}
	cmd.AddCommand(newRulesUpdateCmd(a), newRulesVerifyCmd(a), newRulesShowCmd(a))
	return cmd
}

// rulesEnv is what the rules commands resolve first: the repository, its
// security_rules config (defaults when there is no config file yet).
type rulesEnv struct {
	cwd, root string
	rules     config.SecurityRules
	budget    int // context token budget
}

func loadRulesEnv(ctx context.Context, a *app) (*rulesEnv, error) {
	cwd, err := a.getwd()
	if err != nil {
		return nil, failedf("find the current directory: %v", err)
	}
	root, err := zergRepoRoot(ctx, cwd)
	if err != nil {
		return nil, err
	}
	cfg, err := config.LoadRepo(root)
	if err != nil {
		return nil, configRefused(a, err, "")
	}
	return &rulesEnv{cwd: cwd, root: root, rules: cfg.SecurityRules, budget: cfg.Context.TokenBudget}, nil
}

type rulesUpdateJSON struct {
	Source  string `json:"source"`
	Commit  string `json:"commit"`
	SHA256  string `json:"sha256"`
	Pinned  bool   `json:"pinned"` // the checksum was checked against a pin
	Files   int    `json:"files"`
	Dir     string `json:"dir"`
	Fetched bool   `json:"fetched"` // false: the cache was already intact
}

func newRulesUpdateCmd(a *app) *cobra.Command {
	var source, commit string
	var asJSON, force bool
	cmd := &cobra.Command{
		Use:   "update [--source URL] [--commit SHA]",
		Short: "Fetch the security rules at the pinned commit and record their checksum",
		Long: `Fetches the rules repository at exactly one commit (a full 40-hex id; branch
and tag names are refused because they move) into .zerg/cache/rules/<commit>/,
writes manifest.json with the SHA-256 checksum and checks it against
security_rules.sha256 when set. Defaults come from .zerg/config.yaml. An intact
cache is not fetched again unless --force.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := loadRulesEnv(cmd.Context(), a)
			if err != nil {
				return err
			}
			if !e.rules.Enabled && source == "" && commit == "" {
				fmt.Fprintln(a.stdout, "security rules are disabled (security_rules.enabled: false); nothing to fetch")
				return nil
			}
			if source == "" {
				source = e.rules.URL
			}
			if commit == "" {
				commit = e.rules.Commit
			}
			source = security.ResolveSource(e.cwd, source)
			if err := security.ValidateCommit(commit); err != nil {
				return usageErrorf("--commit: %v", err)
			}
			if err := security.ValidateSource(source); err != nil {
				return usageErrorf("--source: %v", err)
			}
			want := e.rules.Checksum(commit)
			dest := security.RulesCacheDir(e.root, commit)
			out := rulesUpdateJSON{Source: source, Commit: commit, Pinned: want != "", Dir: pathx.Short(e.cwd, dest)}
			m, verr := security.VerifyRules(dest, want)
			if verr != nil || force || m.Commit != commit {
				m, err = security.FetchRules(cmd.Context(), source, commit, dest, want)
				var fe *security.FetchError
				if errors.As(err, &fe) {
					return failedf("%v; check the network and the source URL, or pass --source with a reachable mirror", err)
				}
				if err != nil {
					return failedf("%v", err)
				}
				out.Fetched = true
				recordAudit(a, e.root, security.AuditRulesFetched, map[string]any{
					"source": m.Source, "commit": m.Commit, "sha256": m.Checksum, "files": len(m.Files), "pinned": want != "",
				})
			}
			out.SHA256, out.Files = m.Checksum, len(m.Files)
			if asJSON {
				return printJSON(a.stdout, out)
			}
			verb := "fetched"
			if !out.Fetched {
				verb = "up to date:"
			}
			fmt.Fprintf(a.stdout, "%s rules %s from %s: %d files, sha256 %s\n", verb, commit, source, out.Files, out.SHA256)
			fmt.Fprintf(a.stdout, "  in %s\n", out.Dir)
			switch {
			case commit != e.rules.Commit:
				fmt.Fprintf(a.stdout, "to use them, set in %s: security_rules.commit: %s and security_rules.sha256: %q\n", config.FileName, commit, out.SHA256)
			case !out.Pinned:
				fmt.Fprintf(a.stdout, "to pin this checksum, set in %s: security_rules.sha256: %q\n", config.FileName, out.SHA256)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&source, "source", "", "git URL or absolute path of the rules repository (default: security_rules.url)")
	cmd.Flags().StringVar(&commit, "commit", "", "full commit id to fetch (default: security_rules.commit)")
	cmd.Flags().BoolVar(&force, "force", false, "fetch again even if the cache is intact")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}

// recordAudit appends a decision to the audit log. A failure is reported as a
// warning: the command's own work is done and must not be undone by it, but
// it must not pass silently either.
func recordAudit(a *app, root, kind string, fields any) {
	au, err := security.OpenAudit(security.AuditPath(root))
	if err == nil {
		err = au.Record(kind, fields)
	}
	if err != nil {
		fmt.Fprintf(a.stderr, "zerg: warning: %s not recorded in the audit log: %v\n", kind, textx.OneLine(err.Error()))
	}
}

type rulesVerifyJSON struct {
	Commit   string `json:"commit"`
	Dir      string `json:"dir"`
	OK       bool   `json:"ok"`
	SHA256   string `json:"sha256,omitempty"`
	Pinned   bool   `json:"pinned"`
	Files    int    `json:"files"`
	Problem  string `json:"problem,omitempty"`
	Source   string `json:"source,omitempty"`
	Fetched  string `json:"fetched_at,omitempty"`
	Expected string `json:"expected_sha256,omitempty"`
}

func newRulesVerifyCmd(a *app) *cobra.Command {
	var commit string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "verify [--commit SHA]",
		Short: "Recompute the checksum of the fetched rules; exit 1 when a file was edited, added or removed",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := loadRulesEnv(cmd.Context(), a)
			if err != nil {
				return err
			}
			if commit == "" {
				commit = e.rules.Commit
			}
			if err := security.ValidateCommit(commit); err != nil {
				return usageErrorf("--commit: %v", err)
			}
			dest := security.RulesCacheDir(e.root, commit)
			want := e.rules.Checksum(commit)
			out := rulesVerifyJSON{Commit: commit, Dir: pathx.Short(e.cwd, dest), Pinned: want != "", Expected: want}
			m, verr := security.VerifyCache(dest, commit, want)
			if verr == nil {
				out.OK, out.SHA256, out.Files, out.Source = true, m.Checksum, len(m.Files), m.Source
				out.Fetched = m.FetchedAt.Format(time.RFC3339)
			} else {
				out.Problem = verr.Error()
			}
			if asJSON {
				if err := printJSON(a.stdout, out); err != nil {
					return err
				}
			}
			if verr != nil {
				return failedf("%v", verr)
			}
			if !asJSON {
				against := "its manifest"
				if out.Pinned {
					against = "the pinned checksum"
				}
				fmt.Fprintf(a.stdout, "%s: ok, %d files, sha256 %s matches %s\n", out.Dir, out.Files, out.SHA256, against)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&commit, "commit", "", "commit whose cache to verify (default: security_rules.commit)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the verdict as JSON")
	return cmd
}

func newRulesShowCmd(a *app) *cobra.Command {
	var asJSON, render bool
	var budget int
	cmd := &cobra.Command{
		Use:   "show [PATHS...]",
		Short: "Show which rule files a task touching PATHS gets (core plus its languages)",
		Long: `Lists the rule files a worker whose task creates or modifies PATHS would get:
the core rules, plus the rules of each language (by file extension: .go, .py,
.ts, .rs, …). With --render, prints the prompt text itself, trimmed to the
token budget (context.token_budget, about 4 characters per token) with a note
naming what was left out.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, paths []string) error {
			e, err := loadRulesEnv(cmd.Context(), a)
			if err != nil {
				return err
			}
			if budget < 0 {
				return usageErrorf("--budget %d: must be 0 (no limit) or a number of tokens", budget)
			}
			if !cmd.Flags().Changed("budget") {
				budget = e.budget
			}
			dest := security.RulesCacheDir(e.root, e.rules.Commit)
			if _, err := security.VerifyCache(dest, e.rules.Commit, e.rules.Checksum(e.rules.Commit)); err != nil {
				return failedf("%v", err)
			}
			files, err := security.RulesFor(dest, paths)
			if err != nil {
				return failedf("%v", err)
			}
			if render {
				text, rep := security.RenderRules(files, budget*security.CharsPerToken)
				if asJSON {
					return printJSON(a.stdout, struct {
						Text   string                `json:"text"`
						Report security.RenderReport `json:"report"`
					}{text, rep})
				}
				fmt.Fprint(a.stdout, text)
				fmt.Fprintf(a.stderr, "%d of %d rules, %d characters (budget %d tokens ≈ %d characters)\n",
					rep.Kept, rep.Rules, rep.Used, budget, budget*security.CharsPerToken)
				return nil
			}
			if asJSON {
				return printJSON(a.stdout, struct {
					Commit string              `json:"commit"`
					Dir    string              `json:"dir"`
					Files  []security.RuleFile `json:"files"`
				}{e.rules.Commit, pathx.Short(e.cwd, dest), files})
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			for _, f := range files {
				why := "every task"
				if len(f.Because) > 0 {
					why = strings.Join(f.For, ", ") + ": " + strings.Join(f.Because, ", ")
				}
				fmt.Fprintf(tw, "%s\t%s\t%d bytes\t%s\n", f.Path, f.Kind, f.Size, why)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&render, "render", false, "print the rules as the worker's prompt text, trimmed to the budget")
	cmd.Flags().IntVar(&budget, "budget", 0, "token budget for --render (default: context.token_budget; 0: no limit)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}
