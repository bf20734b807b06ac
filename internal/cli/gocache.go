package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/zergrush/zerg/internal/gocache"
)

func init() { register(newGoCacheCmd) }

// newGoCacheCmd is the GOCACHEPROG zerg gives sandboxed Go builds
// (internal/gocache). Hidden: the go command runs it, people do not. Its
// stdout is the protocol, so it writes nothing else there.
func newGoCacheCmd(a *app) *cobra.Command {
	var l gocache.Layers
	cmd := &cobra.Command{
		Use:    gocache.Command + " --write DIR [--read DIR]...",
		Short:  "Serve a layered Go build cache to the go command (internal)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := gocache.Serve(l, os.Stdin, os.Stdout); err != nil {
				fmt.Fprintf(a.stderr, "zerg %s: %v\n", gocache.Command, err)
				os.Exit(1)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&l.Write, gocache.FlagWrite, "", "writable cache directory")
	cmd.Flags().StringArrayVar(&l.Read, gocache.FlagRead, nil, "read-only cache directory, tried after the writable one")
	return cmd
}
