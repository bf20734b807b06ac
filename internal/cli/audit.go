package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/zergrush/zerg/internal/pathx"
	"github.com/zergrush/zerg/internal/security"
)

func init() { register(newAuditCmd) }

func newAuditCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Verify or list the hash-chained audit log of security decisions",
		Long: `The audit log (.zerg/audit.jsonl) records every security decision: dropped
environment variables, hook denials, ownership violations, secrets found,
rules fetched. Each line carries the hash of the line before it, and an anchor
file (.zerg/audit.jsonl.anchor) holds the last line's hash, so edits, removals,
insertions, reordering and truncation are all detected. See docs/audit.md.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErrorf("unknown command %q for %q (see '%s --help')", args[0], cmd.CommandPath(), cmd.CommandPath())
			}
			return cmd.Help()
		},
	}
	cmd.AddCommand(newAuditVerifyCmd(a), newAuditShowCmd(a))
	return cmd
}

// auditFile resolves the log: FILE relative to the working directory, else
// .zerg/audit.jsonl at the repository root. display is how messages name it.
func auditFile(cmd *cobra.Command, a *app, args []string) (path, display string, err error) {
	cwd, err := a.getwd()
	if err != nil {
		return "", "", failedf("find the current directory: %v", err)
	}
	if len(args) == 1 {
		if filepath.IsAbs(args[0]) {
			return args[0], args[0], nil
		}
		return filepath.Join(cwd, args[0]), args[0], nil
	}
	root, err := zergRepoRoot(cmd.Context(), cwd)
	if err != nil {
		return "", "", err
	}
	path = security.AuditPath(root)
	display = path
	if rel, ok := pathx.Rel(cwd, path); ok {
		display = rel
	}
	return path, display, nil
}

type auditVerifyJSON struct {
	Path         string `json:"path"`
	Intact       bool   `json:"intact"`
	Entries      int    `json:"entries"`
	HeadSeq      int64  `json:"head_seq,omitempty"`
	HeadHash     string `json:"head_hash,omitempty"`
	AnchorBehind bool   `json:"anchor_behind,omitempty"`
	Line         int    `json:"line,omitempty"`
	Reason       string `json:"reason,omitempty"`
}

func newAuditVerifyCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "verify [FILE]",
		Short: "Check the audit log's hash chain and anchor; exit 1 naming the first bad line",
		Long: `Checks every line of the audit log (default .zerg/audit.jsonl): its hash, the
chain to the line before, the sequence, and the anchor holding the last line's
hash. Exit 0 with the number of entries when intact; exit 1 with one line
naming the first bad line and why when not. A log that does not exist yet is
intact and empty.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, display, err := auditFile(cmd, a, args)
			if err != nil {
				return err
			}
			st, verr := security.VerifyAudit(path)
			var ae *security.AuditError
			if verr != nil && !errors.As(verr, &ae) {
				return failedf("verify %s: %v", display, verr)
			}
			if asJSON {
				out := auditVerifyJSON{Path: display, Intact: verr == nil, Entries: st.Entries, HeadSeq: st.HeadSeq, HeadHash: st.HeadHash, AnchorBehind: st.AnchorBehind}
				if ae != nil {
					out.Line, out.Reason = ae.Line, ae.Reason
				}
				if err := printJSON(a.stdout, out); err != nil {
					return err
				}
			}
			if ae != nil {
				if ae.Line == 0 {
					return failedf("%s: tampered: %s", display, ae.Reason)
				}
				return failedf("%s: tampered: line %d: %s", display, ae.Line, ae.Reason)
			}
			if asJSON {
				return nil
			}
			switch {
			case st.Entries == 0:
				fmt.Fprintf(a.stdout, "%s: intact, 0 entries (nothing recorded yet)\n", display)
			default:
				noun := "entries"
				if st.Entries == 1 {
					noun = "entry"
				}
				fmt.Fprintf(a.stdout, "%s: intact, %d %s, head %d %s\n", display, st.Entries, noun, st.HeadSeq, st.HeadHash)
			}
			if st.AnchorBehind {
				fmt.Fprintln(a.stdout, "note: the last entry is not anchored yet (zerg stopped between writing it and its anchor); the next record repairs it")
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the verdict as JSON")
	return cmd
}

type auditEntryJSON struct {
	Seq     int64           `json:"seq"`
	Time    time.Time       `json:"time"`
	Kind    string          `json:"kind"`
	Task    string          `json:"task,omitempty"`
	Attempt int             `json:"attempt,omitempty"`
	Fields  json.RawMessage `json:"fields,omitempty"`
	Hash    string          `json:"hash"`
}

func newAuditShowCmd(a *app) *cobra.Command {
	var asJSON bool
	var kind string
	cmd := &cobra.Command{
		Use:   "show [FILE] [--kind K]",
		Short: "List the audit log's entries, optionally of one kind",
		Long: `Lists the entries of the audit log (default .zerg/audit.jsonl), oldest first:
sequence, time, kind, task and the recorded fields. It reads the log as it is;
run zerg audit verify to check that nobody changed it.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, display, err := auditFile(cmd, a, args)
			if err != nil {
				return err
			}
			events, err := security.ReadAudit(path)
			if err != nil {
				return failedf("read %s: %v; run zerg audit verify", display, err)
			}
			out := []auditEntryJSON{}
			for _, e := range events {
				if kind != "" && e.Type != kind {
					continue
				}
				out = append(out, auditEntryJSON{Seq: e.Seq, Time: e.Time, Kind: e.Type, Task: e.Task, Attempt: e.Attempt, Fields: e.Data, Hash: e.Hash})
			}
			if asJSON {
				return printJSON(a.stdout, out)
			}
			if len(out) == 0 {
				fmt.Fprintf(a.stderr, "%s: no entries\n", display)
				return nil
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			for _, e := range out {
				task := "-"
				if e.Task != "" {
					task = e.Task
					if e.Attempt > 0 {
						task += fmt.Sprintf("#%d", e.Attempt)
					}
				}
				fields := string(e.Fields)
				if fields == "" {
					fields = "{}"
				}
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", e.Seq, e.Time.UTC().Format(time.RFC3339), e.Kind, task, fields)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&kind, "kind", "", "only entries of this kind (env_dropped, hook_denied, ownership_violation, secret_found, rules_fetched, …)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the entries as a JSON array")
	return cmd
}
