package diagnose

import (
	"regexp"
	"slices"
	"strings"

	"github.com/zergrush/zerg/internal/textx"
)

// Whether a module that cannot be found is the project's own (a wrong
// path or a typo: import_missing) or someone else's (not declared or not
// installed: dependency_missing) is the one thing the messages themselves
// do not say. These features guess it from the name and from what else the
// output shows: a relative name, a name the project's own files or
// packages carry, a misspelt standard-library name.

// missingModule finds the names of modules an output says it cannot find.
var missingModule = []struct {
	lang string
	re   *regexp.Regexp
	own  bool // the name is the project's own by what the message says
}{
	// Go
	{lang: "go", re: regexp.MustCompile(`no required module provides package ([^\s;]+)`)},
	{lang: "go", re: regexp.MustCompile(`package (\S+) is not in (?:std|GOROOT)`)},
	{lang: "go", re: regexp.MustCompile(`missing go\.sum entry for module providing package (\S+)`)},
	{lang: "go", re: regexp.MustCompile(`cannot find package "([^"]+)"`)},
	// Python
	{lang: "python", re: regexp.MustCompile(`No module named '([^']+)'`)},
	{lang: "python", re: regexp.MustCompile(`No module named ([\w.]+)`)},
	{lang: "python", re: regexp.MustCompile(`cannot import name '[^']+' from (?:partially initialized module )?'([^']+)'`)},
	{lang: "python", re: regexp.MustCompile(`library stub for module named "([^"]+)"`)},
	{lang: "python", re: regexp.MustCompile(`Library stubs not installed for "([^"]+)"`)},
	{lang: "python", re: regexp.MustCompile(`The '([A-Za-z0-9_.-]+)[^']*' distribution was not found`)},
	// JavaScript
	{lang: "javascript", re: regexp.MustCompile(`Cannot find (?:module|package) '([^']+)'`)},
	{lang: "javascript", re: regexp.MustCompile(`Cannot find module "([^"]+)"`)},
	{lang: "javascript", re: regexp.MustCompile(`Failed to resolve import "([^"]+)"`)},
	{lang: "javascript", re: regexp.MustCompile(`No such built-in module: (\S+)`)},
	{lang: "javascript", re: regexp.MustCompile(`Could not resolve "([^"]+)"`)},
	// Rust
	{lang: "rust", re: regexp.MustCompile("unresolved imports? `([^`]+)`")},
	{lang: "rust", re: regexp.MustCompile("can't find crate for `([^`]+)`")},
	{lang: "rust", re: regexp.MustCompile("use of undeclared crate or module `([^`]+)`")},
	{lang: "rust", re: regexp.MustCompile("use of unresolved module or unlinked crate `([^`]+)`")},
	{lang: "rust", re: regexp.MustCompile("cannot find module or crate `([^`]+)`")},
	{lang: "rust", re: regexp.MustCompile("no matching package named `([^`]+)`")},
	{lang: "rust", re: regexp.MustCompile("file not found for module `([^`]+)`"), own: true},
}

// ownPath finds the paths of the project's files and packages an output
// names: Go's package headers and test summaries, Python's traceback
// frames and test paths, Rust's locations.
var ownPath = regexp.MustCompile(`(?m)^# (\S+)|^(?:FAIL|ok)\s+(\S+)|File "([^"]+)"|^([\w./-]+\.py):\d+|--> ([^:\s]+):\d+|\(imported by ([^)\s]+)\)`)

// moduleFeatures are the features of the modules an output cannot find.
// runners are the modules the command runs as programs (python -m pytest):
// one of them missing is a test runner or tool the interpreter lacks, the
// environment's (mod.runner), not an import of the code.
func moduleFeatures(out string, own, runners []string, set map[string]bool) {
	type missing struct {
		lang, name string
		own        bool
	}
	var names []missing
	for _, mm := range missingModule {
		for _, m := range mm.re.FindAllStringSubmatch(out, 10) {
			names = append(names, missing{mm.lang, strings.Trim(m[1], "'\""), mm.own})
		}
	}
	if len(names) == 0 {
		return
	}
	set["mod.missing"] = true
	paths := own
	for _, m := range ownPath.FindAllStringSubmatch(out, 50) {
		for _, p := range m[1:] {
			if p != "" && !strings.Contains(p, "/usr/lib/") && !strings.Contains(p, "site-packages") && !strings.Contains(p, "<frozen") {
				paths = append(paths, p)
			}
		}
	}
	for _, mn := range names {
		n := mn.name
		if mn.lang == "python" && !strings.Contains(n, ".") && slices.Contains(runners, n) && !mn.own && !isOwn(n, paths) {
			set["mod.runner"] = true
			continue
		}
		switch {
		case strings.HasPrefix(n, ".") || strings.HasPrefix(n, "/") || strings.HasPrefix(n, "crate::") ||
			strings.HasPrefix(n, "self::") || strings.HasPrefix(n, "super::") || strings.HasPrefix(n, "@/") || strings.HasPrefix(n, "~/"):
			set["mod.relative"] = true
		case mn.own || isOwn(n, paths):
			set["mod.own"] = true
		case nearStd(mn.lang, n):
			set["mod.near_std"] = true
		default:
			set["mod.other"] = true
		}
	}
}

// isOwn reports whether a module name belongs with a path the project
// has: a Go package of the same repository, an internal package, a Python
// package whose directory the output shows.
func isOwn(name string, paths []string) bool {
	if strings.Contains(name, "/internal") || strings.HasPrefix(name, "crate::") {
		return true
	}
	repo := goRepo(name)
	top, _, _ := strings.Cut(name, ".")
	for _, p := range paths {
		if repo != "" && goRepo(p) == repo {
			return true
		}
		if slices.Contains(strings.Split(p, "/"), top) && top != "" {
			return true
		}
	}
	return false
}

// goRepo is the repository part (host/owner/name) of a Go package path,
// "" for other names.
func goRepo(p string) string {
	parts := strings.Split(p, "/")
	if len(parts) < 3 || !strings.Contains(parts[0], ".") {
		return ""
	}
	return strings.Join(parts[:3], "/")
}

// nearStd reports whether a name is, or misspells, a standard library's:
// a Go path outside any module (no dot in its first element), a Python
// module an edit or two from one of Python's, one of Node's with its
// node: prefix or one edit from one.
func nearStd(lang, name string) bool {
	switch lang {
	case "go":
		first, _, _ := strings.Cut(name, "/")
		return !strings.Contains(first, ".")
	case "python":
		top, _, _ := strings.Cut(name, ".")
		return near(top, pythonStdlib)
	case "javascript":
		if strings.HasPrefix(name, "node:") {
			return true
		}
		return near(name, nodeBuiltins)
	}
	return false
}

// near reports whether a name is one edit from one of the names, two for
// names longer than six letters, sharing the first letter.
func near(name string, names []string) bool {
	for _, s := range names {
		limit := 1
		if len(s) > 6 {
			limit = 2
		}
		if name != "" && s != "" && name[0] == s[0] && textx.EditDistance(name, s) <= limit {
			return true
		}
	}
	return false
}

// nodeBuiltins are Node's built-in modules.
var nodeBuiltins = strings.Fields(`assert async_hooks buffer child_process cluster console constants crypto dgram
diagnostics_channel dns domain events fs http http2 https inspector module net os path perf_hooks process punycode
querystring readline repl stream string_decoder sys test timers tls trace_events tty url util v8 vm wasi
worker_threads zlib`)

// pythonStdlib are the public modules of Python 3.11's standard library
// (sys.stdlib_module_names).
var pythonStdlib = strings.Fields(`
abc aifc antigravity argparse array ast asynchat asyncio asyncore atexit audioop base64 bdb binascii
bisect builtins bz2 cProfile calendar cgi cgitb chunk cmath cmd code codecs codeop collections
colorsys compileall concurrent configparser contextlib contextvars copy copyreg crypt csv ctypes
curses dataclasses datetime dbm decimal difflib dis distutils doctest email encodings ensurepip enum
errno faulthandler fcntl filecmp fileinput fnmatch fractions ftplib functools gc genericpath getopt
getpass gettext glob graphlib grp gzip hashlib heapq hmac html http idlelib imaplib imghdr imp
importlib inspect io ipaddress itertools json keyword lib2to3 linecache locale logging lzma mailbox
mailcap marshal math mimetypes mmap modulefinder msilib msvcrt multiprocessing netrc nis nntplib nt
ntpath nturl2path numbers opcode operator optparse os ossaudiodev pathlib pdb pickle pickletools
pipes pkgutil platform plistlib poplib posix posixpath pprint profile pstats pty pwd py_compile
pyclbr pydoc pydoc_data pyexpat queue quopri random re readline reprlib resource rlcompleter runpy
sched secrets select selectors shelve shlex shutil signal site smtpd smtplib sndhdr socket
socketserver spwd sqlite3 sre_compile sre_constants sre_parse ssl stat statistics string stringprep
struct subprocess sunau symtable sys sysconfig syslog tabnanny tarfile telnetlib tempfile termios
textwrap this threading time timeit tkinter token tokenize tomllib trace traceback tracemalloc tty
turtle turtledemo types typing unicodedata unittest urllib uu uuid venv warnings wave weakref
webbrowser winreg winsound wsgiref xdrlib xml xmlrpc zipapp zipfile zipimport zlib zoneinfo
`)
