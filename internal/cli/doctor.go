package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/cliprobe"
	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/doctor"
	"github.com/zergrush/zerg/internal/driver"
	"github.com/zergrush/zerg/internal/proc"
	"github.com/zergrush/zerg/internal/run"
	"github.com/zergrush/zerg/internal/textx"
)

func init() { register(newDoctorCmd) }

// The report and its checks are internal/doctor's; the names here are
// the command's own.
type (
	doctorReport   = doctor.Report
	claudeCheck    = doctor.ClaudeCheck
	usernsCheck    = doctor.UserNSCheck
	sandboxCheck   = doctor.SandboxCheck
	cgroupCheck    = doctor.CgroupCheck
	containerCheck = doctor.ContainerCheck
)

// doctorDeps are the probes, replaceable in tests.
type doctorDeps struct {
	locate    func(configPath string) (claude.Location, error)
	version   func(ctx context.Context, path string) (string, error)
	lookPath  func(string) (string, error)
	toolVer   func(ctx context.Context, path string, args ...string) (string, error)
	userns    func() usernsCheck
	sandbox   func(ctx context.Context, a *app) sandboxCheck
	container func(ctx context.Context, a *app) containerCheck
	cgroups   func() cgroupCheck
	isRoot    func() bool
	configBin func(a *app) string
	getenv    func(string) string // nil: os.Getenv
	// probe runs the launch probe (nil: none, in tests of the rest).
	probe func(ctx context.Context, cfg config.Config, worker claude.Spec) (*cliprobe.Report, error)
}

var defaultDoctorDeps = doctorDeps{
	locate:   claude.Locate,
	version:  claude.Version,
	lookPath: exec.LookPath,
	toolVer:  doctor.ToolVersion,
	userns:   doctor.ProbeUserNS,
	sandbox: func(ctx context.Context, a *app) sandboxCheck {
		return doctor.ProbeSandbox(ctx, nearestConfig(a))
	},
	container: func(ctx context.Context, a *app) containerCheck {
		wd, _ := a.getwd()
		return doctor.ProbeContainer(ctx, nearestConfig(a), wd, a.stderr)
	},
	cgroups:   doctor.ProbeCgroups,
	isRoot:    func() bool { return os.Geteuid() == 0 },
	configBin: func(a *app) string { return doctor.ConfiguredClaude(nearestConfig(a)) },
	probe: func(ctx context.Context, cfg config.Config, worker claude.Spec) (*cliprobe.Report, error) {
		return run.ProbeCLI(ctx, cfg, nil, worker)
	},
}

func newDoctorCmd(a *app) *cobra.Command {
	var asJSON bool
	var claudePath string
	cmd := &cobra.Command{
		Use:   "doctor [--json]",
		Short: "Check what zerg needs: the claude CLI, git, bubblewrap, user namespaces, the sandbox, containers",
		Long: `Reports the Claude Code binary zerg would launch (path, where it was found,
version, where it stands in the supported range and whether it is the version
pinned in tools/claude/package.json), the launch probe (one turn of it per
model of the config through a gateway with the config's policy, against a
local stub: the model ids the aliases resolve to, and whether the gateway
would refuse the CLI's own request),
git, bubblewrap, user namespaces, whether a sandbox starts on this machine
(and why not), whether sandboxed attempts get a cgroup of their own (memory
and processes as totals), whether a container of the project's image starts
(container mode: the engine, the image, and why not) and whether zerg runs
as root.
Exit 0 when everything required (git, a claude of the supported range or
newer whose launch probe passes, and the configured mode's container engine
and image in container mode) is there, 1 otherwise.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDoctor(cmd.Context(), a, defaultDoctorDeps, claudePath, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	cmd.Flags().StringVar(&claudePath, "claude", "", "check this claude binary instead of the configured one")
	return cmd
}

func runDoctor(ctx context.Context, a *app, d doctorDeps, claudePath string, asJSON bool) error {
	if claudePath == "" {
		claudePath = d.configBin(a)
	}
	rep := doctorReport{Root: d.isRoot(), Processes: proc.Available().String(), Claude: claudeCheck{MinVersion: claude.MinVersion, TestedVersion: claude.TestedVersion}}

	loc, err := d.locate(claudePath)
	switch {
	case err != nil:
		rep.Claude.Error = err.Error()
	default:
		rep.Claude.Found, rep.Claude.Path, rep.Claude.Source = true, loc.Path, string(loc.Source)
		if v, err := d.version(ctx, loc.Path); err != nil {
			rep.Claude.Error = err.Error()
		} else {
			rep.Claude.Version, rep.Claude.Support = v, string(claude.SupportOf(v))
		}
	}
	if loc.RepoRoot != "" {
		if pin, err := claude.PinnedVersion(loc.RepoRoot); err == nil {
			rep.Claude.Pinned = pin
			if rep.Claude.Version != "" {
				match := rep.Claude.Version == pin
				rep.Claude.PinnedMatch = &match
			}
		}
	}
	rep.Git = doctor.CheckTool(ctx, d.lookPath, d.toolVer, "git", "--version")
	rep.Bwrap = doctor.CheckTool(ctx, d.lookPath, d.toolVer, "bwrap", "--version")
	rep.UserNS = d.userns()
	rep.Sandbox = d.sandbox(ctx, a)
	if d.cgroups != nil {
		rep.Cgroups = d.cgroups()
	}
	cfgNow := config.Default()
	// A config zerg config check refuses is refused here too: every other
	// command would stop on it.
	if cfg, err := config.LoadNearest(a.getwd); err != nil {
		rep.Config = textx.OneLine(err.Error())
	} else if cfg != nil {
		cfgNow = *cfg
	}
	rep.Mode = cfgNow.Mode
	getenv := d.getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	api, apiErr := apiFromGetenv(cfgNow, false, getenv)
	if apiErr == nil {
		rep.Credential = credentialNote(cfgNow, api, getenv)
	}
	if d.probe != nil && rep.Claude.Version != "" && rep.Claude.Support != string(claude.OlderMin) {
		worker := claude.Spec{Binary: loc.Path, API: api}
		if zerg, err := claude.ZergBinary(); err == nil {
			worker.Hook.ZergBinary = zerg
		}
		rep.Probe = doctor.LaunchProbe(d.probe(ctx, cfgNow, worker))
	}
	if d.container != nil {
		rep.Container = d.container(ctx, a)
	}
	rep.Modes, _ = doctor.RunnableModes(rep)
	if rep.Modes == nil {
		rep.Modes = []string{}
	}
	rep.OK = rep.Config == "" && rep.Claude.Found && rep.Claude.Version != "" && rep.Claude.Support != string(claude.OlderMin) && rep.Git.Found &&
		rep.RequiredProbePassed() && (rep.Probe == nil || rep.Probe.OK)

	if asJSON {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		printDoctor(a, rep)
	}
	if !rep.OK {
		return silent(ExitFailed)
	}
	return nil
}

func printDoctor(a *app, rep doctorReport) {
	line := func(status, name, text string) { fmt.Fprintf(a.stdout, "%-7s %-16s %s\n", status, name, text) }
	c := rep.Claude
	switch {
	case !c.Found:
		line("MISSING", "claude", c.Error+" (required)")
	case c.Version == "":
		line("FAIL", "claude", c.Path+" ("+c.Source+"): "+c.Error)
	default:
		text := fmt.Sprintf("%s %s (%s)", c.Path, c.Version, c.Source)
		status := "ok"
		switch claude.Support(c.Support) {
		case claude.OlderMin:
			status = "FAIL"
			text += fmt.Sprintf(": older than supported (%s to %s): upgrade it (claude update)", c.MinVersion, c.TestedVersion)
		case claude.NewerTested:
			status = "WARN"
			text += fmt.Sprintf(": newer than tested (%s)", c.TestedVersion)
			if p := rep.Probe; p != nil && p.OK {
				text += ": the launch probe passed"
			}
		case claude.Unreadable:
			status = "WARN"
			text += ": not a version zerg can place in its supported range"
		default:
			text += fmt.Sprintf(", supported (%s to %s)", c.MinVersion, c.TestedVersion)
		}
		if c.PinnedMatch != nil && *c.PinnedMatch {
			text += ", the pinned version"
		} else if c.PinnedMatch != nil {
			text += fmt.Sprintf("; the pinned version is %s (make claude)", c.Pinned)
		}
		line(status, "claude", text)
	}
	if p := rep.Probe; p != nil {
		switch {
		case p.Refused != "":
			line("FAIL", "launch probe", "zerg's gateway would refuse the CLI's own request with this config: "+p.Refused+"; "+p.Fix)
		case p.Error != "":
			line("FAIL", "launch probe", p.Error)
		default:
			var aliases []string
			for _, m := range p.Models {
				aliases = append(aliases, m.Model+" → "+m.Resolved)
			}
			line("ok", "launch probe", fmt.Sprintf("one turn per model through the gateway with this config: %s; max_tokens %d",
				strings.Join(aliases, ", "), p.MaxTokens))
			if len(p.Unreviewed) > 0 {
				line("note", "launch probe", "forwarded and audited, not reviewed by zerg: "+strings.Join(p.Unreviewed, ", ")+" (gateway.strict refuses them)")
			}
		}
	}
	if rep.Credential == "no credential" {
		line("--", "credential", fmt.Sprintf("none: set ANTHROPIC_API_KEY, or %s from claude setup-token (an API key wins when both are set; --rehearse needs neither)", claude.EnvOAuthToken))
	} else if strings.Contains(rep.Credential, " wins ") {
		line("ok", "credential", rep.Credential)
	} else {
		line("ok", "credential", rep.Credential+" (an API key wins over a subscription token when both are set)")
	}
	if rep.Config != "" {
		line("FAIL", "config", rep.Config+" (zerg config check lists every problem)")
	}
	if rep.Git.Found {
		line("ok", "git", rep.Git.Version)
	} else {
		line("MISSING", "git", "git not found on PATH (required)")
	}
	if rep.Bwrap.Found {
		line("ok", "bwrap", rep.Bwrap.Version)
	} else {
		line("--", "bwrap", "not found (optional: needed for the sandbox isolation mode)")
	}
	if rep.UserNS.Available {
		line("ok", "user namespaces", rep.UserNS.Detail)
	} else {
		line("--", "user namespaces", "unavailable: "+rep.UserNS.Detail+" (optional: needed by bwrap)")
	}
	if sb := rep.Sandbox; sb.Available {
		line("ok", "sandbox", "a sandbox starts as "+sb.User)
	} else {
		line("--", "sandbox", "unavailable: "+sb.Error+" (optional: needed for the sandbox isolation mode)")
	}
	if cg := rep.Cgroups; cg.Available {
		line("ok", "cgroups", cg.Kind+": memory and processes are totals per sandboxed attempt, gate and check lane (a slot runs one at a time)")
	} else {
		line("--", "cgroups", "none ("+cg.Detail+"): memory and processes are limited per process only (docs/sandbox.md)")
	}
	switch ct := rep.Container; {
	case ct.Available:
		line("ok", "container", fmt.Sprintf("%s%s starts %s (%s)", ct.Runtime, map[bool]string{true: " (rootless)"}[ct.Rootless], ct.Image, ct.Source))
	case !rep.RequiredProbePassed():
		line("FAIL", "container", ct.Error+" (required: the config's mode is container; docs/container.md)")
	default:
		line("--", "container", "unavailable: "+ct.Error+" (optional: needed for the container isolation mode)")
	}
	line("ok", "processes", rep.Processes)
	if run, not := doctor.RunnableModes(rep); len(run) == 0 {
		line("FAIL", "modes", "none can run here: "+doctor.NoClaudeAndGit)
	} else {
		text := "these run here: " + strings.Join(run, ", ")
		for _, f := range driver.Factories() {
			if why, ok := not[f.Mode]; ok && f.Probe != driver.ProbeNone {
				m := f.Mode
				if why == "" {
					why = "not checked"
				}
				text += "; not " + m + " (" + textx.OneLine(why) + ")"
			}
		}
		status := "ok"
		if !slices.Contains(run, rep.Mode) {
			status = "note"
			text += "; the config's mode " + rep.Mode + " is not among them: fix what it needs above, or set mode: " + run[0] + " in .zerg/config.yaml"
		}
		line(status, "modes", text)
	}
	if rep.Root {
		line("note", "root", "running as root: workers never get bypassPermissions")
	} else {
		line("ok", "root", "not root")
	}
}

// nearestConfig is the nearest .zerg/config.yaml above the working
// directory, or nil when there is none or it does not load (the report
// says so: config.LoadNearest in runDoctor).
func nearestConfig(a *app) *config.Config { cfg, _ := config.LoadNearest(a.getwd); return cfg }
