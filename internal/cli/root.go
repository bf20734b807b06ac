// Package cli holds zerg's commands: one file per command, all errors mapped
// to exit codes in exit.go.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/zergrush/zerg/internal/buildinfo"
	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/term"
	"github.com/zergrush/zerg/internal/textx"
)

// Version is set at build time by make build:
// -ldflags "-X github.com/zergrush/zerg/internal/cli.Version=$(git describe …)".
// Without it the version comes from the build info.
var Version = ""

// commandConstructors is filled by each command file's init, so commands can be
// added without editing this file.
var commandConstructors []func(*app) *cobra.Command

func register(newCmd func(*app) *cobra.Command) {
	commandConstructors = append(commandConstructors, newCmd)
}

// app is the state shared by commands: streams, working directory, colour.
type app struct {
	stdout io.Writer
	stderr io.Writer
	getwd  func() (string, error)
	color  bool // colour on stdout (a terminal and NO_COLOR unset)
}

// newApp prints through term.Writers: every byte a command prints is
// cleaned of what a terminal would act on (escape sequences, "\r", bidi
// controls), so text that a worker, a repository, a reviewer or a gate
// wrote cannot set the clipboard or the title, clear the screen or forge
// a line, whichever command prints it. zerg's own colours (the palette of
// internal/term) pass when colour is on.
func newApp(stdout, stderr io.Writer) *app {
	color := colorEnabled(stdout)
	return &app{
		stdout: term.NewWriter(stdout, color),
		stderr: term.NewWriter(stderr, color),
		getwd:  os.Getwd,
		color:  color,
	}
}

func newRootCmd(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "zerg",
		Short: "Run many Claude Code workers in parallel on one repository",
		Long: `Zerg turns a task graph into one verified branch: it runs N real Claude Code
workers at once, each in its own workspace, merges their work level by level
through quality gates, and survives crashes, rate limits and bad output.`,
		Version:       buildinfo.Version(Version),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.SetVersionTemplate("zerg {{.Version}}\n")
	// Flag errors are usage errors (exit 2) with a pointer to help.
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageErrorf("%v (see '%s --help')", err, c.CommandPath())
	})
	for _, newCmd := range commandConstructors {
		root.AddCommand(newCmd(a))
	}
	return root
}

// Main runs zerg with os.Args and returns the process exit code.
func Main() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
}

// Run executes one zerg command line and returns its exit code. It prints
// errors as a single "zerg: …" line on stderr.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	a := newApp(stdout, stderr)
	root := newRootCmd(a)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err != nil {
		code, msg := explain(classifyCobraError(cmd, err))
		if msg != "" {
			fmt.Fprintf(a.stderr, "zerg: %s\n", textx.OneLine(msg))
		}
		if ctx.Err() != nil && code != ExitUsage && code != ExitLocked {
			return ExitInterrupted
		}
		return code
	}
	if ctx.Err() != nil {
		return ExitInterrupted
	}
	return ExitOK
}

// classifyCobraError turns cobra's own argument errors (unknown command, wrong
// number of args) into usage errors. A typed error of zerg's own is never
// cobra's, even when its text (which may quote what the user typed) holds
// one of cobra's phrases.
func classifyCobraError(cmd *cobra.Command, err error) error {
	var ee *ExitError
	var re *run.Error
	if errors.As(err, &ee) || errors.As(err, &re) {
		return err
	}
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand", "accepts ", "requires at least", "requires at most", "invalid argument"} {
		if strings.Contains(msg, p) {
			path := "zerg"
			if cmd != nil {
				path = cmd.CommandPath()
			}
			return usageErrorf("%s (see '%s --help')", msg, path)
		}
	}
	return err
}
