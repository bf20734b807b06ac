package preflight

import (
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/zergrush/zerg/internal/toolchain"
)

// A missing test runner is the environment's whatever the model writes:
// the interpreter a command runs has no pytest, pyenv's selected Python
// lacks the program its shim stands for, cargo has no such subcommand, a
// package's program is not in node_modules/.bin, or the toolchain's own
// program is not on PATH. These rules read what the tools print in that
// case (exact phrases, not the classifier's guess) and name the runner in
// the user's terms: which interpreter the PATH finds (a pyenv shim, a
// virtual environment) and what it lacks.

// Resolved is a program as the commands' PATH finds it (run in their
// isolation): the path command -v prints and, for an interpreter, the
// executable it really is (sys.executable).
type Resolved struct {
	Path string
	Real string
	// Venv: the interpreter is a virtual environment's (sys.prefix is not
	// sys.base_prefix).
	Venv bool
}

var (
	// "/root/.pyenv/versions/3.11.7/bin/python3: No module named pytest"
	pyRunnerMissing = regexp.MustCompile(`^(\S*python[\d.]*): No module named ([\w.]+)\s*$`)
	// "pyenv: pytest: command not found", then the versions that have it.
	pyenvNoCommand = regexp.MustCompile("^pyenv: ([\\w.+-]+): command not found")
	pyenvHasIt     = regexp.MustCompile("^The `([\\w.+-]+)' command exists in these Python versions:")
	// "pyenv: version `3.12.0' is not installed (set by /repo/.python-version)"
	pyenvNoVersion = regexp.MustCompile("^pyenv: version `([^']+)' is not installed(?: \\(set by ([^)]+)\\))?")
	// "error: no such command: `nextest`"
	cargoNoCommand = regexp.MustCompile("^error: no such command: `([\\w-]+)`")
	// "bash: line 1: node_modules/.bin/tsc: No such file or directory"
	nodeBinMissing = regexp.MustCompile(`(?:^|: )((?:\./)?(?:\S+/)?node_modules/\.bin/([\w.-]+)): (?:No such file or directory|not found)\s*$`)
)

// runnerProblems are the missing runners an output shows.
func runnerProblems(output string, f Facts) []Problem {
	var probs []Problem
	lines := strings.Split(output, "\n")
	interp, module := toolchain.PythonModule(f.Command)
	for i, line := range lines {
		line = strings.TrimRight(line, "\r")
		if m := pyRunnerMissing.FindStringSubmatch(line); m != nil && m[2] == module && !f.ownPythonModule(module) {
			probs = append(probs, Problem{Kind: MissingModule, Name: module, Detail: strings.TrimSpace(line),
				Why: f.interpreterLacks(interp, m[1], module)})
		}
		if m := pyenvNoCommand.FindStringSubmatch(line); m != nil {
			var has []string
			for _, l := range lines[i+1:] {
				if pyenvHasIt.MatchString(l) {
					continue
				}
				v := strings.TrimSpace(l)
				if v == "" || strings.HasPrefix(v, "Note:") {
					if len(has) > 0 || strings.HasPrefix(v, "Note:") {
						break
					}
					continue
				}
				has = append(has, v)
			}
			why := fmt.Sprintf("%s on PATH is a pyenv shim, and the Python pyenv selects has no %s", m[1], m[1])
			if len(has) > 0 {
				why += fmt.Sprintf(" (the versions that have it: %s)", strings.Join(has, ", "))
			}
			why += "; install it for the selected Python, or select one that has it (pyenv global, .python-version, PYENV_VERSION)"
			probs = append(probs, Problem{Kind: MissingTool, Name: m[1], Detail: strings.TrimSpace(line), Why: why})
		}
		if m := pyenvNoVersion.FindStringSubmatch(line); m != nil {
			why := fmt.Sprintf("python on PATH is a pyenv shim, and the version it selects, %s, is not installed", m[1])
			if m[2] != "" {
				why += " (set by " + m[2] + ")"
			}
			probs = append(probs, Problem{Kind: MissingTool, Name: "python " + m[1], Detail: strings.TrimSpace(line),
				Why: why + "; pyenv install " + m[1] + " on this machine, or select an installed version"})
		}
		if m := cargoNoCommand.FindStringSubmatch(line); m != nil {
			probs = append(probs, Problem{Kind: MissingTool, Name: "cargo-" + m[1], Detail: strings.TrimSpace(line),
				Why: fmt.Sprintf("cargo has no %s subcommand here: install it on this machine (cargo install cargo-%s) where the workers' PATH finds it", m[1], m[1])})
		}
		if m := nodeBinMissing.FindStringSubmatch(line); m != nil {
			probs = append(probs, Problem{Kind: MissingTool, Name: m[2], Detail: strings.TrimSpace(line), Why: nodeBinWhy(m[2], f)})
		}
	}
	return probs
}

// nodeBinWhy says why a package's program is not there: the workspace is a
// clone, and node_modules is not in git.
func nodeBinWhy(name string, f Facts) string {
	if f.exists("node_modules/.bin/" + name) {
		return ""
	}
	if !f.exists("node_modules") {
		return fmt.Sprintf("%s is a program of the package's dependencies (node_modules/.bin), and the workspace, a clone of the repository, has no node_modules: install them in the command first (npm ci --offline && …, from the npm cache workers get)", name)
	}
	return fmt.Sprintf("%s is not in node_modules/.bin: add the package that brings it to package.json's devDependencies and its lockfile", name)
}

// interpreterLacks names, in the user's terms, the interpreter that has no
// module: the program the command runs (python3), what the PATH finds for
// it (a pyenv shim, a virtual environment) and what it really is.
func (f Facts) interpreterLacks(program, printed, module string) string {
	var r Resolved
	if f.Resolve != nil {
		r = f.Resolve(program)
	}
	real := r.Real
	if real == "" {
		real = printed
	}
	fix := fmt.Sprintf("install %s for it (%s -m pip install %s, on this machine)", module, real, module)
	version := ""
	if i := strings.Index(real, "/versions/"); i >= 0 {
		version, _, _ = strings.Cut(real[i+len("/versions/"):], "/")
	}
	switch {
	case strings.Contains(r.Path, "/shims/"):
		s := fmt.Sprintf("%s on PATH is a pyenv shim (%s) whose interpreter, %s", program, r.Path, real)
		if version != "" {
			s += fmt.Sprintf(" (pyenv's %s)", version)
		}
		return s + fmt.Sprintf(", has no %s; %s, or have pyenv select a Python that has it (pyenv global, .python-version, PYENV_VERSION)", module, fix)
	case version != "":
		return fmt.Sprintf("%s is pyenv's Python %s (%s), which has no %s; %s", program, version, real, module, fix)
	case r.Venv || strings.Contains(real, "/venv/") || strings.Contains(real, "/.venv/"):
		return fmt.Sprintf("%s is the virtual environment's %s, which has no %s; %s", program, real, module, fix)
	case r.Path != "" && !strings.Contains(program, "/"):
		return fmt.Sprintf("%s on PATH (%s) has no %s; %s", program, r.Path, module, fix)
	}
	return fmt.Sprintf("%s (%s) has no %s; %s", path.Base(program), real, module, fix)
}

// MissingRunner reports a missing test runner in a command's output by the
// rules alone (no probe of the machine): the interpreter without the module
// python -m runs, a pyenv shim without its program, a cargo subcommand, or
// a toolchain's program the shell did not find. A run uses it to stop at
// the first such failure: every worker would meet it, whatever the model
// writes. A package's program missing from node_modules/.bin is not one
// here: a worker's change to package.json can be its cause.
func MissingRunner(command, output string) (Problem, bool) {
	f := Facts{Command: command}
	for _, p := range runnerProblems(output, f) {
		if !nodeBinMissing.MatchString(p.Detail) {
			return p, true
		}
	}
	for _, line := range strings.Split(output, "\n") {
		if m := notFound.FindStringSubmatch(strings.TrimRight(line, "\r")); m != nil && toolchain.IsRunner(m[1]) {
			return Problem{Kind: MissingTool, Name: m[1], Detail: strings.TrimSpace(line)}, true
		}
	}
	return Problem{}, false
}
