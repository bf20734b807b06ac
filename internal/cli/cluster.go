package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/zergrush/zerg/internal/cluster"
	"github.com/zergrush/zerg/internal/driver"
	"github.com/zergrush/zerg/internal/run"
)

func init() { register(newClusterCmd) }

func newClusterCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Manage the cluster that runs attempts on other machines (cluster mode)",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newClusterCredsCmd(a))
	return cmd
}

func newClusterCredsCmd(a *app) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "creds NAME",
		Short: "Issue (or rotate) an agent's credentials for the embedded server",
		Long: `Make the credentials zerg agent --creds reads: the address agents dial
(cluster.url), the agent's user and password, and the server's CA. Issuing
them again for the same NAME rotates the password: the old file stops working.
The file is written with mode 0600 (default NAME.creds.json); the password is
never printed. The server keeps only a hash of it. Needs cluster.embed: true
and no rush running (the embedded server is the coordinator's while it runs).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if err := cluster.ValidAgentName(name); err != nil {
				return usageErrorf("%v", err)
			}
			cwd, err := a.getwd()
			if err != nil {
				return err
			}
			root, err := zergRepoRoot(cmd.Context(), cwd)
			if err != nil {
				return err
			}
			cfg, err := loadProjectConfig(root)
			if err != nil {
				return err
			}
			if cfg.Cluster.URL == "" || !cfg.Cluster.Embed {
				return usageErrorf(".zerg/config.yaml: cluster.url and cluster.embed: true are needed to issue credentials (an external server's users are its own)")
			}
			if out == "" {
				out = name + ".creds.json"
			}
			creds, err := driver.IssueAgentCreds(cmd.Context(), run.ClusterDir(root), cfg.Cluster, name)
			if err != nil {
				return err
			}
			if err := creds.WriteCreds(out); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "wrote the credentials of agent %s to %s (mode 0600); on its machine: zerg agent --join %s --creds FILE\n", name, out, cfg.Cluster.URL)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "the file to write (default NAME.creds.json)")
	return cmd
}
