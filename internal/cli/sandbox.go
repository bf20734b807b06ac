package cli

import (
	"fmt"
	"os"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/zergrush/zerg/internal/sandbox"
)

func init() { register(newSandboxInitCmd) }

// newSandboxInitCmd is the process zerg runs as PID 1 inside a sandbox
// (internal/sandbox builds its command line). Hidden: people never run it.
// It prints nothing of its own unless it fails, because its output is the
// sandboxed command's.
func newSandboxInitCmd(a *app) *cobra.Command {
	var c sandbox.InitConfig
	cmd := &cobra.Command{
		Use:    sandbox.InitCommand + " [flags] -- COMMAND [ARG...]",
		Short:  "Run a command inside a zerg sandbox (internal)",
		Hidden: true,
		Args:   cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() != 0 {
				return usageErrorf("%s: the command must follow --", sandbox.InitCommand)
			}
			if c.SeccompExec {
				// Returns only when something failed.
				err := sandbox.SeccompExec(c, args)
				fmt.Fprintln(a.stderr, sandbox.StartFailureLine(err))
				os.Exit(sandbox.ExecFailCode(err))
			}
			// os.Exit, not an ExitError: the exit code is the command's,
			// which Run would map (a SIGTERM it forwarded would become
			// ExitInterrupted).
			os.Exit(sandbox.RunInit(c, args))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&c.Proxy, sandbox.FlagProxy, "", "unix socket to forward "+sandbox.ProxyAddr+" to")
	f.StringVar(&c.Lifeline, sandbox.FlagLifeline, "", "FIFO whose writer's end ends the sandbox")
	f.BoolVar(&c.ReportOOM, sandbox.FlagReportOOM, false, "exit "+strconv.Itoa(sandbox.ExitOutOfMemory)+" when the command failed after an OOM kill in the init's memory cgroup")
	f.BoolVar(&c.SeccompExec, sandbox.FlagSeccompExec, false, "set the limits and the seccomp filter, then exec the command")
	f.BoolVar(&c.ExecStep, sandbox.FlagExecStep, false, "start the command through the seccomp step even where ptrace works")
	f.Int64Var(&c.Limits.MemoryBytes, sandbox.FlagMemory, 0, "RLIMIT_DATA of the command")
	f.IntVar(&c.Limits.Processes, sandbox.FlagProcesses, 0, "RLIMIT_NPROC of the command")
	f.IntVar(&c.Limits.CPUSeconds, sandbox.FlagCPU, 0, "RLIMIT_CPU of the command")
	f.Int64Var(&c.Limits.FileSizeBytes, sandbox.FlagFileSize, 0, "RLIMIT_FSIZE of the command")
	f.IntVar(&c.Limits.OpenFiles, sandbox.FlagOpenFiles, 0, "RLIMIT_NOFILE of the command")
	return cmd
}

func init() { register(newSandboxPrepCmd) }

// newSandboxPrepCmd starts bwrap for a sandbox whose shared directories its
// user cannot reach (internal/sandbox/shared.go). Hidden: people never run it.
func newSandboxPrepCmd(a *app) *cobra.Command {
	var c sandbox.PrepConfig
	cmd := &cobra.Command{
		Use:    sandbox.PrepCommand + " [flags] -- BWRAP [ARG...]",
		Short:  "Start a sandbox whose shared directories its user cannot reach (internal)",
		Hidden: true,
		Args:   cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() != 0 {
				return usageErrorf("%s: the command must follow --", sandbox.PrepCommand)
			}
			err := sandbox.RunPrep(c, args) // returns only on failure
			fmt.Fprintf(a.stderr, "zerg %s: %v\n", sandbox.PrepCommand, err)
			os.Exit(sandbox.ExecFailCode(err))
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&c.UID, sandbox.FlagUID, 0, "user to run the command as")
	f.IntVar(&c.GID, sandbox.FlagGID, 0, "group to run the command as")
	f.StringArrayVar(&c.Cover, sandbox.FlagCover, nil, "directory to cover with an empty tmpfs")
	f.StringArrayVar(&c.Share, sandbox.FlagShare, nil, "directory to bind back read-only")
	f.StringArrayVar(&c.Cgroups, sandbox.FlagCgroup, nil, "cgroup.procs file to join before anything starts")
	return cmd
}
