package bash

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Commands that run another command: wrappers (time, env, nice, sudo,
// busybox, xargs …), shells given a string (sh -c, eval, watch) and the
// runners of package tools (uv run, npx, mise exec …). The check looks
// through them at the command they run, so `time curl`, `command curl`,
// `busybox wget`, `uv run ssh` or `mise exec -- gh` are judged as curl,
// wget, ssh and gh are.

// unwrapped is what a wrapper or runner runs.
type unwrapped struct {
	// words is the command it runs (empty: none, or only a lookup).
	words []bashWord
	// assigns are variables it sets for that command (env NAME=value).
	assigns []bashWord
	// script is a shell command line it runs (sh -c, eval, watch, env -S).
	script *bashWord
	// dirs are directories it runs the command in (env -C, uv run --directory).
	dirs []string
	// reads and writes are files it opens itself (time -o, xargs -a).
	reads, writes []string
	// pkg: words[0] names a package to fetch and run (npx, uvx), not a
	// program on PATH.
	pkg bool
	// lookup: it only looks the command up (command -v).
	lookup bool
}

// strictWrappers are the wrappers subprocess mode looks through and
// allows: they change how a command runs, not what it reaches.
var strictWrappers = set("time command builtin exec nohup nice ionice timeout stdbuf setsid env eval")

// shells run a command line given with -c.
var shells = set("sh bash dash zsh ksh ash mksh fish")

// wrapSpec is how a wrapper or runner reads its own options: vals take a
// value (as the next word or glued, "-n5", "--adjustment=5"), every other
// word starting with "-" is a flag; the value of one of writes or reads is a
// file it opens itself, of dirs a directory it runs the command in, of
// script a command line it runs; procs act on other processes and are
// refused; glued take their value only in the same word, or none (xargs
// -i, --replace). skip operands come before the command (timeout's
// duration, chroot's root, flock's lock file, chrt's priority); number:
// -10 is an option (nice).
type wrapSpec struct {
	vals, glued, writes, reads, dirs, script, procs []string
	skip                                            int
	number                                          bool
}

// scan reads the options of args into u; it returns the index of the
// first operand and the options seen.
func (s wrapSpec) scan(name string, args []bashWord, u *unwrapped) (int, []string, error) {
	var seen []string
	note := func(o, v string) error {
		seen = append(seen, o)
		switch {
		case slices.Contains(s.procs, o):
			return fmt.Errorf("%s %s is not allowed (%s)", name, o, whyProcs)
		case slices.Contains(s.writes, o):
			u.writes = append(u.writes, v)
		case slices.Contains(s.reads, o):
			u.reads = append(u.reads, v)
		case slices.Contains(s.dirs, o):
			u.dirs = append(u.dirs, v)
		case slices.Contains(s.script, o):
			u.script = &bashWord{raw: v, lit: v, glob: -1}
		}
		return nil
	}
	for i := 0; i < len(args); i++ {
		a := args[i].lit
		switch {
		case args[i].dynamic:
			return i, seen, nil
		case a == "--":
			return i + 1, seen, nil
		case !strings.HasPrefix(a, "-") || a == "-":
			return i, seen, nil
		case s.number && len(a) > 1 && a[1] >= '0' && a[1] <= '9':
			continue // nice -10
		}
		if !strings.HasPrefix(a, "--") {
			// Short options as getopt reads them: flags until one that
			// takes a value, which is the rest ("-0n5") or the next word.
			for j := 1; j < len(a); j++ {
				o, v := a[:1]+a[j:j+1], a[j+1:]
				if !slices.Contains(s.vals, o) {
					if err := note(o, ""); err != nil {
						return 0, seen, err
					}
					continue
				}
				if v == "" && !slices.Contains(s.glued, o) {
					if i+1 >= len(args) {
						return 0, seen, fmt.Errorf("%s needs a value", a)
					}
					i++
					v = args[i].lit
				}
				if err := note(o, v); err != nil {
					return 0, seen, err
				}
				break
			}
			continue
		}
		o, v, eq := strings.Cut(a, "=")
		switch {
		case slices.Contains(s.vals, o) && !eq && !slices.Contains(s.glued, o):
			if i+1 >= len(args) {
				return 0, seen, fmt.Errorf("%s needs a value", a)
			}
			i++
			v = args[i].lit
		case slices.Contains(s.vals, o):
		default:
			o, v = a, ""
		}
		if err := note(o, v); err != nil {
			return 0, seen, err
		}
	}
	return len(args), seen, nil
}

// wrapSpecs are the wrappers unwrap reads with a spec.
var wrapSpecs = map[string]wrapSpec{
	"time":    {vals: strings.Fields("-o --output -f --format"), writes: strings.Fields("-o --output")},
	"command": {}, "builtin": {}, "nohup": {}, "unbuffer": {}, "pkexec": {}, "fakeroot": {}, "caffeinate": {}, "setsid": {},
	"chroot":  {skip: 1},
	"exec":    {vals: strings.Fields("-a")},
	"nice":    {vals: strings.Fields("-n --adjustment"), number: true},
	"ionice":  {vals: strings.Fields("-c -n --class --classdata -p -P -u --pid --pgid --uid"), procs: strings.Fields("-p -P -u --pid --pgid --uid")},
	"timeout": {vals: strings.Fields("-s --signal -k --kill-after"), skip: 1},
	"stdbuf":  {vals: strings.Fields("-i -o -e --input --output --error")},
	"env":     {vals: strings.Fields("-u --unset -C --chdir -S --split-string"), dirs: strings.Fields("-C --chdir"), script: strings.Fields("-S --split-string")},
	"sudo":    {vals: sudoVals}, "doas": {vals: sudoVals},
	"xargs": {vals: strings.Fields("-a --arg-file -d --delimiter -E -e --eof -I -i --replace -L -l --max-lines -n --max-args -P --max-procs -s --max-chars --process-slot-var"),
		glued: strings.Fields("-e --eof -i --replace -l --max-lines"), reads: strings.Fields("-a --arg-file")},
	"watch":  {vals: strings.Fields("-n --interval -q --equexit")},
	"flock":  {vals: strings.Fields("-w --timeout -E --conflict-exit-code -c --command"), script: strings.Fields("-c --command"), skip: 1},
	"strace": traceSpec, "ltrace": traceSpec, "valgrind": traceSpec, "perf": traceSpec, "gdb": traceSpec,
	"chrt": {procs: strings.Fields("-p --pid"), skip: 1}, "taskset": {procs: strings.Fields("-p --pid"), skip: 1},
}

var (
	sudoVals  = strings.Fields("-u -g -C -D -h -p -r -t -U -T --user --group --chdir --host --prompt --role --type --other-user --close-from --command-timeout")
	traceSpec = wrapSpec{vals: strings.Fields("-o -e -p -s -u -E -P -a -b -I -X -O -S"), procs: strings.Fields("-p --pid --attach")}
)

// unwrap returns what the command name args runs when name is a wrapper
// or a shell given -c; ok is false otherwise.
func unwrap(name string, args []bashWord) (u unwrapped, ok bool, err error) {
	rest := func(i int) []bashWord { return args[min(i, len(args)):] }
	switch name {
	case "su", "runuser":
		for i := 0; i < len(args); i++ {
			if (args[i].lit == "-c" || args[i].lit == "--command") && i+1 < len(args) {
				w := args[i+1]
				u.script = &w
				return u, true, nil
			}
			if args[i].lit == "--" {
				u.words = rest(i + 1)
				return u, true, nil
			}
		}
		return u, true, nil
	case "busybox", "toybox":
		u.words = args
		return u, true, nil
	case "eval":
		u.script = joinWords(args)
		return u, true, nil
	}
	spec, ok := wrapSpecs[name]
	if !ok {
		return shellScript(name, args)
	}
	i, seen, err := spec.scan(name, args, &u)
	switch name {
	case "command":
		if slices.ContainsFunc(seen, func(o string) bool { return strings.ContainsAny(strings.TrimPrefix(o, "-"), "vV") }) {
			u.lookup = true
			return u, true, err
		}
	case "timeout":
		if err == nil && i >= len(args) {
			err = errors.New("timeout needs a duration and a command")
		}
	case "env":
		for i < len(args) && !args[i].dynamic && isAssignment(args[i].lit) {
			u.assigns = append(u.assigns, args[i])
			i++
		}
	case "xargs":
		if u.words = rest(i); len(u.words) == 0 {
			u.words = []bashWord{{raw: "echo", lit: "echo", glob: -1}}
		}
		return u, true, err
	case "watch":
		if !slices.Contains(seen, "-x") && !slices.Contains(seen, "--exec") {
			u.script = joinWords(rest(i))
			return u, true, err
		}
	case "flock":
		if u.script != nil {
			return u, true, err
		}
	case "perf", "gdb":
		// perf record CMD, gdb --args CMD
		for j := i; j < len(args); j++ {
			if args[j].lit == "--args" || args[j].lit == "record" || args[j].lit == "stat" {
				i = j + 1
			}
		}
	}
	u.words = rest(i + spec.skip)
	return u, true, err
}

// shellScript returns the command line a shell runs with -c; ok is false
// when name is no shell or runs a script file or stdin.
func shellScript(name string, args []bashWord) (u unwrapped, ok bool, err error) {
	if !shells[name] {
		return u, false, nil
	}
	for i := 0; i < len(args); i++ {
		a := args[i].lit
		if args[i].dynamic || !strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "+") {
			return u, false, nil // a script file, or stdin
		}
		if a == "-o" || a == "+o" || a == "-O" || a == "+O" {
			i++
			continue
		}
		if !strings.HasPrefix(a, "--") && strings.Contains(a, "c") {
			if i+1 >= len(args) {
				return u, true, fmt.Errorf("%s -c without a command", name)
			}
			w := args[i+1]
			u.script = &w
			return u, true, nil
		}
	}
	return u, false, nil
}

// joinWords is the command line a shell builds from words (eval, watch):
// computed when any of them is.
func joinWords(ws []bashWord) *bashWord {
	var parts []string
	for _, x := range ws {
		parts = append(parts, x.lit)
	}
	line := strings.Join(parts, " ")
	return &bashWord{raw: line, lit: line, glob: -1, dynamic: slices.ContainsFunc(ws, func(x bashWord) bool { return x.dynamic })}
}

// runner returns what a package tool runs: `uv run CMD`, `poetry run CMD`,
// `mise exec -- CMD`, `bundle exec CMD`, `pnpm exec CMD` run a program
// from PATH (or the project's environment); `npx PKG`, `uvx PKG`,
// `bunx PKG`, `pnpm dlx PKG`, `yarn dlx PKG`, `pipx run PKG` fetch and run
// a package. ok is false when name args is not such a form.
func runner(name string, args []bashWord) (u unwrapped, ok bool, err error) {
	sub := ""
	after := args
	if len(args) > 0 && !args[0].dynamic {
		sub = args[0].lit
		after = args[1:]
	}
	var spec wrapSpec
	pkg := false
	switch {
	case name == "uv" && sub == "run":
		i, _, err := uvRunSpec.scan(name, after, &u)
		if err != nil {
			return u, true, err
		}
		// uv run -m MODULE runs python -m MODULE
		for j := 0; j < i; j++ {
			if after[j].lit == "-m" || after[j].lit == "--module" {
				py := bashWord{raw: "python", lit: "python", glob: -1}
				u.words = append([]bashWord{py}, after[j:]...)
				return u, true, nil
			}
		}
		u.words = after[i:]
		return u, true, nil
	case (name == "uv" && sub == "tool" && len(after) > 0 && after[0].lit == "run") || name == "uvx":
		if name == "uv" {
			after = after[1:]
		} else {
			after = args
		}
		spec, pkg = wrapSpec{vals: strings.Fields("--from --with --with-editable --with-requirements --python -p --index --index-url --extra-index-url --find-links -f --cache-dir --color")}, true
	case name == "npx" || (name == "npm" && (sub == "exec" || sub == "x")) || name == "bunx" || (name == "bun" && sub == "x") ||
		((name == "pnpm" || name == "yarn") && sub == "dlx") || (name == "pipx" && sub == "run"):
		if name == "npx" || name == "bunx" {
			after = args
		}
		spec, pkg = wrapSpec{vals: strings.Fields("-p --package -c --call --prefix --spec"), script: strings.Fields("-c --call")}, true
	case (name == "poetry" || name == "pipenv" || name == "pdm" || name == "hatch" || name == "rye") && sub == "run",
		(name == "bundle" || name == "asdf" || name == "pnpm" || name == "yarn") && sub == "exec":
	case name == "conda" && sub == "run":
		spec = wrapSpec{vals: strings.Fields("-n --name -p --prefix --cwd"), dirs: strings.Fields("--cwd")}
	case name == "mise" && (sub == "exec" || sub == "x"):
		for i := 0; i < len(after); i++ {
			a := after[i].lit
			switch {
			case a == "--":
				u.words = after[i+1:]
				return u, true, nil
			case a == "-c" || a == "--command":
				if i+1 < len(after) {
					w := after[i+1]
					u.script = &w
					return u, true, nil
				}
			case a == "-C" || a == "--cd":
				if i+1 < len(after) {
					u.dirs = append(u.dirs, after[i+1].lit)
					i++
				}
			case a == "-j" || a == "--jobs" || a == "-E" || a == "--env":
				i++
			}
		}
		return u, true, errors.New("mise exec needs -- before the command")
	default:
		return u, false, nil
	}
	i, _, err := spec.scan(name, after, &u)
	if u.script == nil {
		u.words, u.pkg = after[i:], pkg
	}
	return u, true, err
}

var uvRunSpec = wrapSpec{
	vals: strings.Fields(`--with --with-editable --with-requirements --python -p --directory --project --package --extra --group
		--only-group --no-group --index --default-index --index-url --extra-index-url --find-links -f --env-file
		--config-file --cache-dir --color -C --config-setting --refresh-package -P --upgrade-package --reinstall-package
		--exclude-newer --prerelease --resolution --link-mode --index-strategy --keyring-provider --python-preference
		--no-binary-package --no-build-package --allow-insecure-host --no-extra --no-editable-package`),
	dirs:  strings.Fields("--directory --project"),
	reads: strings.Fields("--env-file --with-requirements --config-file"),
}
