// Package preflight tells, from one run of a verification command or a gate
// on the base (before the feature is written), whether it failed because the
// environment lacks something (a module not in the cache, a tool not on
// PATH, a network fetch the sandbox refuses) or merely because the feature
// is not written yet, which is expected. zerg check and the start of every
// rush use it before any model is called (docs/check.md).
package preflight

import (
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/zergrush/zerg/internal/diagnose"
	"github.com/zergrush/zerg/internal/pathx"
	"github.com/zergrush/zerg/internal/toolchain"
)

// Kinds of environment problems.
const (
	MissingModule = "missing-module"
	MissingTool   = "missing-tool"
	Network       = "network"
	DiskFull      = "disk_full" // the diagnostics engine's name for it
)

// Problem is one thing the environment lacks.
type Problem struct {
	Kind   string `json:"kind"`
	Name   string `json:"name"`   // the module, the tool, or the host
	Detail string `json:"detail"` // the output line it was read from
	// Why says, in the user's terms, what lacks it and what to do, when a
	// rule knows ("python3 on PATH is a pyenv shim whose interpreter … has
	// no pytest; …"); "" for the kind's own advice.
	Why string `json:"why,omitempty"`
}

// Verdicts of one command.
const (
	Pass        = "pass"        // it already passes
	Expected    = "expected"    // it fails, for want of the feature
	Environment = "environment" // it fails, for want of something in the environment
)

// Facts are what the classification needs to know of the repository and
// the sandbox; tests fake them.
type Facts struct {
	// GoModule is the module path in go.mod ("" without one): its own
	// packages are the feature's, never missing modules.
	GoModule string
	// Planned are the paths the task graph creates or modifies: a module or
	// a program of that name is the feature's.
	Planned []string
	// OnPath says whether a program is on the commands' PATH (run in the
	// same isolation); nil: every program is.
	OnPath func(name string) bool
	// Exists says whether a repository path exists on the base.
	Exists func(rel string) bool
	// Command is the command line: one that sources a file the feature
	// writes may call functions of that file, which no PATH has.
	Command string
	// Own are the project's own module names (diagnose.ProjectNames).
	Own []string
	// Resolve finds a program as the commands' PATH does, in their
	// isolation; nil: not known.
	Resolve func(program string) Resolved
}

var (
	goLookupDisabled = regexp.MustCompile(`([A-Za-z0-9][\w.~/-]*@v[\w.+-]+): (?:module lookup disabled|reading .*: (?:dial tcp|.*no such host))`)
	goNoProvider     = regexp.MustCompile(`cannot find module providing package (\S+?):? `)
	goNoRequired     = regexp.MustCompile(`no required module provides package (\S+?)[;:]`)
	goMissingSum     = regexp.MustCompile(`missing go\.sum entry for module providing package (\S+?)(?: \(|;|:|$)`)
	goMissingSumMod  = regexp.MustCompile(`missing go\.sum entry for go\.mod file;.*?(\S+@\S+)`)
	goDownloading    = regexp.MustCompile(`^go: downloading (\S+) (v\S+)`)
	nodeNoModule     = regexp.MustCompile(`Cannot find (?:module|package) '([^']+)'`)
	pyNoModule       = regexp.MustCompile(`ModuleNotFoundError: No module named '([^']+)'`)
	notFound         = regexp.MustCompile(`(?:^|: )([A-Za-z0-9_][\w.+-]*): (?:command )?not found\s*$`)
	diskFullRE       = regexp.MustCompile(`(?i)no space left on device|\bENOSPC\b|disk quota exceeded`)
	networkRE        = regexp.MustCompile(`(?i)(dial tcp[^:]*: lookup (\S+)|could not resolve host:? (\S+)|temporary failure in name resolution|getaddrinfo (?:ENOTFOUND|EAI_AGAIN) (\S+)|network is unreachable|failed to establish a new connection|proxyconnect tcp)`)
)

// Classify reads one command's exit code and output.
func Classify(exit int, output string, f Facts) (string, []Problem) {
	verdict, probs, _ := Diagnose(exit, output, f)
	return verdict, probs
}

// engineConfidence is how sure the diagnostics engine must be of an
// environment pattern for a failure the rules below do not explain to be
// the environment's.
const engineConfidence = 0.6

// Diagnose is Classify with the diagnostics engine's top hypothesis of a
// failing command (nil when it passes). The rules below know what the
// engine cannot (the graph's plan, what is on the sandbox's PATH) and
// decide first; a failure they do not explain is the environment's when
// the engine is sure it is (a package not in an offline cache, a full
// disk, a missing variable, a terminal the command needs), else it is the
// expected failure of a feature not yet written.
func Diagnose(exit int, output string, f Facts) (string, []Problem, *diagnose.Hypothesis) {
	if exit == 0 {
		return Pass, nil, nil
	}
	d := diagnose.Diagnose(diagnose.Input{Output: output, Command: f.Command, Exit: exit, Own: f.Own})
	h := d.Top()
	verdict, probs := classify(output, f)
	// A program the shell did not find is judged by the rules alone: only
	// they know whether the feature creates it.
	if verdict == Expected && h.Class == diagnose.Environment && h.Confidence >= engineConfidence && h.Pattern != diagnose.CommandNotFound {
		detail := ""
		if len(h.Evidence) > 0 {
			detail = h.Evidence[0]
		}
		verdict, probs = Environment, []Problem{{Kind: h.Pattern, Name: h.Pattern, Detail: detail}}
	}
	return verdict, probs, &h
}

// classify is the rules' verdict.
func classify(output string, f Facts) (string, []Problem) {
	var probs []Problem
	add := func(kind, name, line string) {
		for _, p := range probs {
			if p.Kind == kind && p.Name == name {
				return
			}
		}
		probs = append(probs, Problem{Kind: kind, Name: name, Detail: strings.TrimSpace(line)})
	}
	for _, p := range runnerProblems(output, f) {
		probs = append(probs, p)
	}
	for _, line := range strings.Split(output, "\n") {
		line = strings.TrimRight(line, "\r")
		// The go command downloads only what its module cache lacks, and
		// in a sandbox the download fails (read-only cache, no network).
		if m := goDownloading.FindStringSubmatch(line); m != nil {
			add(MissingModule, m[1]+"@"+m[2], line)
			continue
		}
		if m := goLookupDisabled.FindStringSubmatch(line); m != nil {
			add(MissingModule, m[1], line)
			continue
		}
		for _, re := range []*regexp.Regexp{goNoProvider, goNoRequired, goMissingSum} {
			if m := re.FindStringSubmatch(line); m != nil && !f.ownGoPackage(m[1]) {
				add(MissingModule, m[1], line)
			}
		}
		if m := goMissingSumMod.FindStringSubmatch(line); m != nil {
			add(MissingModule, m[1], line)
		}
		if m := nodeNoModule.FindStringSubmatch(line); m != nil && !strings.HasPrefix(m[1], ".") && !strings.HasPrefix(m[1], "/") && !f.planned(m[1]) {
			add(MissingModule, m[1], line)
		}
		if m := pyNoModule.FindStringSubmatch(line); m != nil && !f.ownPythonModule(m[1]) {
			add(MissingModule, m[1], line)
		}
		if m := notFound.FindStringSubmatch(line); m != nil && f.missingTool(m[1]) {
			add(MissingTool, m[1], line)
			if last := &probs[len(probs)-1]; last.Name == m[1] && last.Why == "" && slices.Contains(toolchain.NodeBins, m[1]) {
				last.Why = nodeBinWhy(m[1], f)
			}
		}
		if diskFullRE.MatchString(line) {
			// Unmistakable, and rare in the engine's corpus, so its
			// confidence alone would be low.
			add(DiskFull, "no space left", line)
		}
		if m := networkRE.FindStringSubmatch(line); m != nil {
			host := firstNonEmpty(m[2], m[3], m[4])
			if host == "" {
				host = "the network"
			}
			add(Network, strings.TrimRight(host, ":,."), line)
		}
	}
	if len(probs) > 0 {
		return Environment, probs
	}
	return Expected, nil
}

func (f Facts) ownGoPackage(pkg string) bool {
	return f.GoModule != "" && pathx.Within(f.GoModule, pkg)
}

// planned reports whether name is, or is the base name of, a path the
// graph plans.
func (f Facts) planned(name string) bool {
	return slices.ContainsFunc(f.Planned, func(p string) bool {
		base := path.Base(p)
		return p == name || base == name || strings.TrimSuffix(base, path.Ext(base)) == name ||
			pathx.Below(name, p)
	})
}

func (f Facts) exists(rel string) bool { return f.Exists != nil && f.Exists(rel) }

// ownPythonModule: a Python module of the repository or the graph's plan
// (its top-level package or module, at the root or under src/).
func (f Facts) ownPythonModule(name string) bool {
	top := strings.SplitN(name, ".", 2)[0]
	return f.planned(top) || f.exists(top) || f.exists(top+".py") || f.exists(path.Join("src", top)) || slices.Contains(f.Own, top)
}

// missingTool: a name the shell did not find is a missing tool only when it
// is not on PATH in the commands' isolation either, and not something the
// feature creates (a script, or a function in a file it writes).
func (f Facts) missingTool(name string) bool {
	if f.planned(name) || f.exists(name) || f.sourcesPlanned() {
		return false
	}
	return f.OnPath != nil && !f.OnPath(name)
}

var sourceRE = regexp.MustCompile(`(?:^|[;&|(]\s*|\s)(?:\.|source)\s+(\S+)`)

func (f Facts) sourcesPlanned() bool {
	for _, m := range sourceRE.FindAllStringSubmatch(f.Command, -1) {
		if p := path.Clean(strings.Trim(m[1], `"'`)); slices.Contains(f.Planned, p) || !f.exists(p) {
			return true
		}
	}
	return false
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
