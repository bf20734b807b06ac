package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/spf13/cobra"

	"github.com/zergrush/zerg/internal/config"
)

func init() { register(newConfigCmd) }

func newConfigCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Check or show the project configuration (.zerg/config.yaml)",
		Args:  cobra.ArbitraryArgs,
		// Without this, cobra would print help and exit 0 for a mistyped subcommand.
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErrorf("unknown command %q for %q (see '%s --help')", args[0], cmd.CommandPath(), cmd.CommandPath())
			}
			return cmd.Help()
		},
	}
	cmd.AddCommand(newConfigCheckCmd(a), newConfigShowCmd(a))
	return cmd
}

func newConfigCheckCmd(a *app) *cobra.Command {
	var file string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "check [--file F]",
		Short: "Validate the config; exit 2 with every problem, one per line",
		Long: `Validates .zerg/config.yaml (or --file) and prints every problem as one line:
file:line: option: what is wrong and what to do. Exit 0 when valid, 2 when not.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			path, display, err := configPath(cmd.Context(), a, file)
			if err != nil {
				return err
			}
			_, err = loadConfigFile(path, display)
			var ce *config.Error
			if err != nil && !errors.As(err, &ce) {
				return err
			}
			if asJSON {
				if werr := printJSON(a.stdout, config.CheckReport(display, ce)); werr != nil {
					return werr
				}
				if ce != nil {
					return silent(ExitUsage)
				}
				return nil
			}
			if ce != nil {
				printConfigProblems(a, ce)
				return silent(ExitUsage)
			}
			fmt.Fprintf(a.stdout, "%s: ok\n", display)
			return nil
		},
	}
	cmd.Flags().StringVar(&file, "file", "", "config file to check (default: .zerg/config.yaml at the repository root)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the verdict and problems as JSON")
	return cmd
}

func newConfigShowCmd(a *app) *cobra.Command {
	var file string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show [--json]",
		Short: "Print the effective config: the file overlaid on the defaults",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			path, display, err := configPath(cmd.Context(), a, file)
			if err != nil {
				return err
			}
			cfg, err := loadConfigFile(path, display)
			var ce *config.Error
			switch {
			case errors.As(err, &ce):
				printConfigProblems(a, ce)
				return silent(ExitUsage)
			case errors.Is(err, fs.ErrNotExist) && file == "":
				// No file yet: the effective config is the defaults.
				cfg = config.Default()
				fmt.Fprintf(a.stderr, "zerg: %s does not exist; showing the defaults (zerg init writes the file)\n", display)
			case err != nil:
				return err
			}
			if asJSON {
				return printJSON(a.stdout, cfg.Map())
			}
			out, err := cfg.YAML()
			if err != nil {
				return failedf("render config: %v", err)
			}
			_, err = a.stdout.Write(out)
			return err
		},
	}
	cmd.Flags().StringVar(&file, "file", "", "config file to show (default: .zerg/config.yaml at the repository root)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the config as JSON")
	return cmd
}

// configPath resolves the config file: --file relative to the working
// directory, else .zerg/config.yaml at the repository root (config.Locate).
func configPath(ctx context.Context, a *app, file string) (path, display string, err error) {
	cwd, err := a.getwd()
	if err != nil {
		return "", "", failedf("find the current directory: %v", err)
	}
	return config.Locate(cwd, file, func() (string, error) { return zergRepoRoot(ctx, cwd) })
}

// loadConfigFile reads and parses a config file, naming it display in every
// message. Every error is the user's input: exit 2, a missing file's
// wrapping fs.ErrNotExist and a parse's holding the *config.Error.
func loadConfigFile(path, display string) (config.Config, error) {
	cfg, err := config.LoadAs(path, display)
	return cfg, badInput(err)
}

// configRefused prints an invalid config's problems, one per line, and
// returns the line that stops the command (config.Error.Refused, then
// saying what else to do); any config error is bad input.
func configRefused(a *app, err error, then string) error {
	var ce *config.Error
	if errors.As(err, &ce) {
		printConfigProblems(a, ce)
		return badInput(ce.Refused(config.FileName, then))
	}
	return badInput(err)
}

// printConfigProblems writes each config problem as one line on stderr.
func printConfigProblems(a *app, ce *config.Error) {
	for _, p := range ce.Problems {
		fmt.Fprintln(a.stderr, p.String())
	}
}
