package policy

import (
	"fmt"
	"slices"
	"strings"
)

// Options of the commands the policy knows, parsed the way GNU getopt_long
// does (clusters of short options, a value glued to its option or in the
// next word, unique prefixes of long options, options after operands until
// "--"), so that an option's value is judged for what it is: a file read, a
// file written, a directory the other paths are relative to, text, or a
// refusal. A command without a spec has every word checked as a path, with
// every suffix of a short-option cluster as a possible glued value.

type optKind int

const (
	optFlag  optKind = iota // no value
	optPath                 // a file or directory read
	optWrite                // a file or directory written
	optText                 // not a path (a pattern, a format, a number)
	optDir                  // a directory the command's relative paths are taken from (-C)
	optDeny                 // refused: the why says why
)

type longOpt struct {
	kind optKind
	arg  int // 0 none, 1 required (=VALUE or the next word), 2 optional (=VALUE only)
	why  string
}

type shortVal struct {
	kind     optKind
	optional bool // the value is only the rest of the cluster, maybe empty (sed -i)
}

// optSpec describes one command's options.
type optSpec struct {
	flags  string             // short options without a value
	values map[byte]shortVal  // short options with a value
	deny   map[byte]string    // short options refused, and why
	long   map[string]longOpt // long options by full name
	strict bool               // an unknown option is refused (the command is parsed for a reason)
}

// parsedOpt is one option as the command sees it.
type parsedOpt struct {
	name  string // "-x" or "--full-name"
	kind  optKind
	value string
	has   bool // a value was given
	glob  bool // the value came from a pattern's expansion
}

// invocation is a command's arguments after pattern expansion and option
// parsing.
type invocation struct {
	name     string
	opts     []parsedOpt
	operands []string
	opGlob   []bool // the operand came from a pattern's expansion
	// loose are words holding an option the spec does not know: they are
	// also checked the way a command without a spec is.
	loose []string
}

func (inv *invocation) has(names ...string) bool {
	for _, o := range inv.opts {
		if slices.Contains(names, o.name) {
			return true
		}
	}
	return false
}

func (inv *invocation) values(names ...string) []string {
	var out []string
	for _, o := range inv.opts {
		if o.has && slices.Contains(names, o.name) {
			out = append(out, o.value)
		}
	}
	return out
}

// lookupLong resolves a long option name as getopt_long does: an exact name,
// else a unique prefix. A prefix of a refused option is refused even when
// ambiguous; an ambiguous or unknown one is refused in a strict spec.
func (s *optSpec) lookupLong(cmd, nm string) (string, longOpt, bool, error) {
	if lo, ok := s.long[nm]; ok {
		return nm, lo, true, nil
	}
	var cands []string
	for full, lo := range s.long {
		if strings.HasPrefix(full, nm) {
			if lo.kind == optDeny {
				return "", longOpt{}, false, fmt.Errorf("%s --%s (--%s) is not allowed (%s)", cmd, nm, full, lo.why)
			}
			cands = append(cands, full)
		}
	}
	switch {
	case len(cands) == 1:
		return cands[0], s.long[cands[0]], true, nil
	case len(cands) > 1:
		return "", longOpt{}, false, fmt.Errorf("%s --%s is ambiguous; write the option in full", cmd, nm)
	case s.strict:
		return "", longOpt{}, false, fmt.Errorf("%s --%s is not an option this check knows", cmd, nm)
	}
	return "", longOpt{}, false, nil
}

// parse parses args (globs says which came from a pattern's expansion).
func (s *optSpec) parse(cmd string, args []string, globs []bool) (*invocation, error) {
	inv := &invocation{name: cmd}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			inv.operands = append(inv.operands, args[i+1:]...)
			inv.opGlob = append(inv.opGlob, globs[i+1:]...)
			return inv, nil
		case a == "-" || !strings.HasPrefix(a, "-"):
			inv.operands = append(inv.operands, a)
			inv.opGlob = append(inv.opGlob, globs[i])
			continue
		case strings.HasPrefix(a, "--"):
			nm, val, eq := strings.Cut(a[2:], "=")
			full, lo, known, err := s.lookupLong(cmd, nm)
			if err != nil {
				return nil, err
			}
			if !known {
				inv.loose = append(inv.loose, a)
				continue
			}
			if lo.kind == optDeny {
				return nil, fmt.Errorf("%s --%s is not allowed (%s)", cmd, full, lo.why)
			}
			o := parsedOpt{name: "--" + full, kind: lo.kind, value: val, has: eq}
			if lo.arg == 1 && !eq {
				if i+1 >= len(args) {
					return nil, fmt.Errorf("%s --%s needs a value", cmd, full)
				}
				i++
				o.value, o.has, o.glob = args[i], true, globs[i]
			}
			if lo.arg == 0 && eq {
				return nil, fmt.Errorf("%s --%s takes no value", cmd, full)
			}
			inv.opts = append(inv.opts, o)
		default:
		cluster:
			for j := 1; j < len(a); j++ {
				c := a[j]
				if why, ok := s.deny[c]; ok {
					return nil, fmt.Errorf("%s -%c is not allowed (%s)", cmd, c, why)
				}
				if v, ok := s.values[c]; ok {
					o := parsedOpt{name: "-" + string(c), kind: v.kind, glob: globs[i]}
					switch {
					case j+1 < len(a):
						o.value, o.has = a[j+1:], true
					case v.optional:
					case i+1 < len(args):
						i++
						o.value, o.has, o.glob = args[i], true, globs[i]
					default:
						return nil, fmt.Errorf("%s -%c needs a value", cmd, c)
					}
					inv.opts = append(inv.opts, o)
					break cluster
				}
				if strings.IndexByte(s.flags, c) >= 0 {
					inv.opts = append(inv.opts, parsedOpt{name: "-" + string(c)})
					continue
				}
				if s.strict {
					return nil, fmt.Errorf("%s -%c is not an option this check knows", cmd, c)
				}
				// An option the spec does not know may take the rest
				// as its value: the whole word is checked loosely, and
				// the letters after it are still looked at.
				if !slices.Contains(inv.loose, a) {
					inv.loose = append(inv.loose, a)
				}
			}
		}
	}
	return inv, nil
}

// Shorthands for the specs below.
func flagsLong(names ...string) map[string]longOpt {
	m := map[string]longOpt{}
	for _, n := range names {
		m[n] = longOpt{}
	}
	return m
}

func withLong(m map[string]longOpt, kind optKind, arg int, names ...string) map[string]longOpt {
	for _, n := range names {
		m[n] = longOpt{kind: kind, arg: arg}
	}
	return m
}

func denyLong(m map[string]longOpt, why string, names ...string) map[string]longOpt {
	for _, n := range names {
		m[n] = longOpt{kind: optDeny, arg: 2, why: why}
	}
	return m
}

func vals(kind optKind, letters string) map[byte]shortVal {
	m := map[byte]shortVal{}
	for i := 0; i < len(letters); i++ {
		m[letters[i]] = shortVal{kind: kind}
	}
	return m
}

func merge(ms ...map[byte]shortVal) map[byte]shortVal {
	out := map[byte]shortVal{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

const (
	whyNames   = "it reads the names of files to open from a file or stdin"
	whyFollow  = "it follows symbolic links out of the workspace"
	whyRuns    = "it runs a program"
	whyEnvDump = "it prints the environment"
	whyLinks   = "it makes symbolic links the policy cannot judge"
)

// cmdSpecs are the option specs of the commands the default rules allow and
// of a few a task may add (sed, awk, jq, tar, ln, make).
var cmdSpecs = map[string]*optSpec{}

func init() {
	grep := &optSpec{
		flags:  "abcEFGhHiIlLnoPqrsTUvVwxyzZ0123456789",
		values: merge(vals(optText, "ABCdDem"), vals(optPath, "f")),
		deny:   map[byte]string{'R': whyFollow},
		long: denyLong(withLong(withLong(withLong(flagsLong("basic-regexp", "byte-offset", "binary", "count", "extended-regexp",
			"files-with-matches", "files-without-match", "fixed-strings", "help", "ignore-case", "no-ignore-case", "initial-tab",
			"line-buffered", "line-number", "line-regexp", "no-filename", "no-messages", "null", "null-data", "only-matching",
			"perl-regexp", "quiet", "recursive", "invert-match", "silent", "text", "version", "with-filename", "word-regexp"),
			optText, 1, "after-context", "before-context", "context", "binary-files", "devices", "directories", "exclude",
			"exclude-dir", "include", "label", "max-count", "regexp"),
			optText, 2, "color", "colour"),
			optPath, 1, "file", "exclude-from"),
			whyFollow, "dereference-recursive"),
	}
	for _, n := range []string{"grep", "egrep", "fgrep"} {
		cmdSpecs[n] = grep
	}
	cmdSpecs["sort"] = &optSpec{
		flags:  "bdfgiMhnRrVcCmsuz",
		values: merge(vals(optText, "ktS"), vals(optWrite, "oT")),
		long: denyLong(denyLong(withLong(withLong(withLong(withLong(flagsLong("ignore-leading-blanks", "dictionary-order",
			"ignore-case", "general-numeric-sort", "ignore-nonprinting", "month-sort", "human-numeric-sort", "numeric-sort",
			"random-sort", "reverse", "version-sort", "debug", "merge", "stable", "unique", "zero-terminated", "help", "version"),
			optText, 1, "sort", "batch-size", "key", "buffer-size", "field-separator", "parallel"),
			optText, 2, "check"),
			optPath, 1, "random-source"),
			optWrite, 1, "output", "temporary-directory"),
			whyRuns, "compress-program"),
			whyNames, "files0-from"),
	}
	cmdSpecs["wc"] = &optSpec{
		flags: "cmlLw",
		long: denyLong(withLong(flagsLong("bytes", "chars", "lines", "max-line-length", "words", "help", "version"),
			optText, 1, "total"),
			whyNames, "files0-from"),
	}
	cmdSpecs["du"] = &optSpec{
		flags:  "0abcDhHklmPsSx",
		values: merge(vals(optText, "Bdt"), vals(optPath, "X")),
		deny:   map[byte]string{'L': whyFollow},
		long: denyLong(denyLong(withLong(withLong(withLong(flagsLong("null", "all", "apparent-size", "bytes", "total",
			"dereference-args", "human-readable", "inodes", "si", "count-links", "no-dereference", "separate-dirs", "summarize",
			"one-file-system", "help", "version"),
			optText, 1, "block-size", "max-depth", "threshold", "time-style", "exclude"),
			optText, 2, "time"),
			optPath, 1, "exclude-from"),
			whyNames, "files0-from"),
			whyFollow, "dereference"),
	}
	cmdSpecs["ls"] = &optSpec{
		flags:  "aAbBcCdDfFgGhHiklLmnNopqQrRsStuUvxXZ1",
		values: vals(optText, "ITw"),
		long: withLong(withLong(flagsLong("all", "almost-all", "author", "escape", "ignore-backups", "directory", "dired",
			"classify", "file-type", "group-directories-first", "no-group", "human-readable", "si", "dereference-command-line",
			"dereference-command-line-symlink-to-dir", "inode", "kibibytes", "dereference", "numeric-uid-gid", "literal",
			"hide-control-chars", "show-control-chars", "quote-name", "reverse", "recursive", "size", "context", "zero", "help",
			"version"),
			optText, 1, "block-size", "format", "hide", "ignore", "quoting-style", "sort", "time", "time-style", "tabsize", "width",
			"indicator-style"),
			optText, 2, "color", "hyperlink"),
	}
	cmdSpecs["cut"] = &optSpec{
		flags:  "nsz",
		values: vals(optText, "bcdf"),
		long: withLong(flagsLong("complement", "only-delimited", "zero-terminated", "help", "version"),
			optText, 1, "bytes", "characters", "delimiter", "fields", "output-delimiter"),
	}
	cmdSpecs["tr"] = &optSpec{flags: "cCdst", long: flagsLong("complement", "delete", "squeeze-repeats", "truncate-set1", "help", "version")}
	cmdSpecs["file"] = &optSpec{
		flags:  "bcdEhiIklLNnprsSvzZ0",
		values: merge(vals(optText, "eFP"), vals(optPath, "m")),
		deny:   map[byte]string{'f': whyNames, 'C': "it writes a magic file"},
		long: denyLong(withLong(withLong(flagsLong("brief", "checking-printout", "debug", "extension", "keep-going",
			"list", "dereference", "no-dereference", "no-buffer", "no-pad", "preserve-date", "raw", "special-files",
			"uncompress", "uncompress-noreport", "mime", "mime-type", "mime-encoding", "apple", "print0", "help", "version"),
			optText, 1, "exclude", "exclude-quiet", "separator", "parameter"),
			optPath, 1, "magic-file"),
			whyNames, "files-from", "compile"),
	}
	sums := &optSpec{
		flags: "btwz",
		deny:  map[byte]string{'c': "it opens the files a checksum list names"},
		long: denyLong(flagsLong("binary", "tag", "text", "zero", "ignore-missing", "quiet", "status", "strict", "warn",
			"help", "version"), "it opens the files a checksum list names", "check"),
	}
	for _, n := range []string{"md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum"} {
		cmdSpecs[n] = sums
	}
	cmdSpecs["date"] = &optSpec{
		flags:  "Ru",
		values: merge(vals(optText, "d"), vals(optPath, "fr"), map[byte]shortVal{'I': {kind: optText, optional: true}}),
		deny:   map[byte]string{'s': "it sets the clock"},
		long: denyLong(withLong(withLong(withLong(flagsLong("debug", "rfc-email", "resolution", "universal", "utc",
			"help", "version"), optText, 1, "date", "rfc-3339"), optText, 2, "iso-8601"), optPath, 1, "file", "reference"),
			"it sets the clock", "set"),
	}
	cmdSpecs["diff"] = &optSpec{
		flags:  "abBcdeEfilnNpPqrstTuwyZ0123456789",
		values: merge(vals(optText, "CDFILSUWx"), vals(optPath, "X")),
		long: withLong(withLong(withLong(withLong(flagsLong("normal", "brief", "report-identical-files", "ed", "rcs",
			"side-by-side", "left-column", "suppress-common-lines", "show-c-function", "expand-tabs", "initial-tab",
			"suppress-blank-empty", "new-file", "unidirectional-new-file", "ignore-file-name-case", "no-ignore-file-name-case",
			"recursive", "no-dereference", "ignore-case", "ignore-tab-expansion", "ignore-trailing-space",
			"ignore-space-change", "ignore-all-space", "ignore-blank-lines", "strip-trailing-cr", "text", "minimal",
			"speed-large-files", "paginate", "help", "version"),
			optText, 1, "label", "ignore-matching-lines", "exclude", "starting-file", "horizontal-lines", "show-function-line",
			"width", "tabsize", "ifdef", "line-format", "old-line-format", "new-line-format", "unchanged-line-format",
			"old-group-format", "new-group-format", "unchanged-group-format", "changed-group-format", "palette"),
			optText, 2, "context", "unified", "color"),
			optPath, 1, "exclude-from", "from-file", "to-file"),
			optText, 1, "GTYPE-group-format", "LTYPE-line-format"),
	}
	cmdSpecs["cp"] = &optSpec{
		strict: true,
		flags:  "abdfHilLnPprRsTuvxZ",
		values: merge(vals(optText, "S"), vals(optWrite, "t")),
		long: withLong(withLong(withLong(flagsLong("archive", "attributes-only", "copy-contents", "debug", "dereference",
			"force", "interactive", "link", "no-clobber", "no-dereference", "no-target-directory", "one-file-system", "parents",
			"recursive", "remove-destination", "strip-trailing-slashes", "symbolic-link", "verbose", "keep-directory-symlink",
			"help", "version"),
			optText, 1, "no-preserve", "sparse", "suffix"),
			optText, 2, "backup", "preserve", "reflink", "update", "context"),
			optWrite, 1, "target-directory"),
	}
	cmdSpecs["mv"] = &optSpec{
		strict: true,
		flags:  "bfinTuvZ",
		values: merge(vals(optText, "S"), vals(optWrite, "t")),
		long: withLong(withLong(withLong(flagsLong("force", "interactive", "no-clobber", "no-copy", "no-target-directory",
			"strip-trailing-slashes", "verbose", "exchange", "help", "version"),
			optText, 1, "suffix"),
			optText, 2, "backup", "update", "context"),
			optWrite, 1, "target-directory"),
	}
	cmdSpecs["ln"] = &optSpec{
		strict: true,
		flags:  "binrsTvLP",
		values: merge(vals(optText, "S"), vals(optWrite, "t")),
		deny:   map[byte]string{'f': "it re-points an existing link", 'd': "it hard-links directories", 'F': "it hard-links directories"},
		long: denyLong(denyLong(withLong(withLong(withLong(flagsLong("interactive", "no-dereference", "relative",
			"symbolic", "no-target-directory", "verbose", "logical", "physical", "help", "version"),
			optText, 1, "suffix"),
			optText, 2, "backup"),
			optWrite, 1, "target-directory"),
			"it re-points an existing link", "force"),
			"it hard-links directories", "directory"),
	}
	cmdSpecs["chmod"] = &optSpec{
		// Modes such as -w or -rwx look like options: the letters of
		// modes are flags here, and -R with -L is refused below.
		flags: "cfvRHLPrwxXstugoa01234567",
		long: withLong(flagsLong("changes", "silent", "quiet", "verbose", "no-preserve-root", "preserve-root", "recursive",
			"dereference", "no-dereference", "help", "version"), optPath, 1, "reference"),
	}
	cmdSpecs["uniq"] = &optSpec{
		flags:  "cdDiuz",
		values: vals(optText, "fsw"),
		long: withLong(withLong(flagsLong("count", "repeated", "ignore-case", "unique", "zero-terminated", "help", "version"),
			optText, 1, "skip-fields", "skip-chars", "check-chars"),
			optText, 2, "all-repeated", "group"),
	}
	cmdSpecs["stat"] = &optSpec{
		flags:  "Lft",
		values: vals(optText, "c"),
		long: withLong(withLong(flagsLong("dereference", "file-system", "terse", "help", "version"),
			optText, 1, "format", "printf"), optText, 2, "cached"),
	}
	cmdSpecs["make"] = &optSpec{
		flags: "bBdeikLnqrRsStvw",
		values: merge(vals(optPath, "fIoW"), vals(optDir, "C"), map[byte]shortVal{
			'j': {kind: optText, optional: true}, 'l': {kind: optText, optional: true}, 'O': {kind: optText, optional: true}}),
		deny: map[byte]string{'p': whyEnvDump, 'E': whyRuns},
		long: denyLong(denyLong(withLong(withLong(withLong(withLong(flagsLong("always-make", "environment-overrides",
			"ignore-errors", "keep-going", "check-symlink-times", "just-print", "dry-run", "recon", "question",
			"no-builtin-rules", "no-builtin-variables", "silent", "quiet", "no-silent", "no-keep-going", "stop", "touch",
			"trace", "version", "print-directory", "no-print-directory", "warn-undefined-variables", "help"),
			optText, 1, "jobs", "load-average", "max-load", "output-sync", "shuffle", "debug"),
			optPath, 1, "file", "makefile", "include-dir", "old-file", "assume-old", "what-if", "new-file", "assume-new"),
			optDir, 1, "directory"),
			optText, 2, "jobserver-style"),
			whyEnvDump, "print-data-base"),
			whyRuns, "eval"),
	}
	cmdSpecs["sed"] = &optSpec{
		strict: true,
		flags:  "nrEsuzb",
		values: merge(vals(optText, "el"), map[byte]shortVal{'i': {kind: optText, optional: true}}),
		deny:   map[byte]string{'f': "its script is in a file this check does not read"},
		long: denyLong(withLong(withLong(flagsLong("quiet", "silent", "debug", "posix", "regexp-extended", "separate",
			"sandbox", "unbuffered", "null-data", "zero-terminated", "follow-symlinks", "binary", "help", "version"),
			optText, 1, "expression", "line-length"),
			optText, 2, "in-place"),
			"its script is in a file this check does not read", "file"),
	}
	awk := &optSpec{
		strict: true,
		values: vals(optText, "Fv"),
		deny: map[byte]string{'f': "its program is in a file this check does not read", 'E': whyRuns, 'e': "the program must be its first operand",
			'i': "it loads a source file", 'l': "it loads a shared library", 'd': "it writes a file", 'p': "it writes a file",
			'o': "it writes a file", 'D': "it starts a debugger", 'W': "mawk's -W options are not checked"},
		long: denyLong(denyLong(denyLong(withLong(flagsLong("help", "version"), optText, 1, "field-separator", "assign"),
			"its program is in a file this check does not read", "file", "exec"),
			"it loads code", "include", "load", "source"),
			"it writes a file", "dump-variables", "profile", "pretty-print", "debug"),
	}
	for _, n := range []string{"awk", "gawk", "mawk", "nawk"} {
		cmdSpecs[n] = awk
	}
	cmdSpecs["tree"] = &optSpec{
		strict: true,
		flags:  "adfxqNQpugshDFvtcUrinCAXJS",
		values: merge(vals(optText, "LPIHT"), vals(optWrite, "o")),
		deny:   map[byte]string{'l': whyFollow, 'R': "it writes a listing into every directory"},
		long: denyLong(withLong(withLong(withLong(flagsLong("gitignore", "ignore-case", "matchdirs", "metafirst", "prune",
			"info", "noreport", "si", "du", "inodes", "device", "dirsfirst", "filesfirst", "nolinks", "fflinks", "help",
			"version"),
			optText, 1, "charset", "timefmt", "sort", "filelimit"),
			optText, 2, "hyperlink"),
			optPath, 1, "infofile", "hintro", "houtro"),
			whyNames, "fromfile"),
	}
	cmdSpecs["tar"] = &optSpec{
		strict: true,
		flags:  "ctvzjJaOpkmx",
		values: merge(vals(optPath, "fX"), vals(optDir, "C")),
		deny: map[byte]string{'h': whyFollow, 'T': whyNames, 'I': whyRuns, 'F': whyRuns, 'P': "it keeps absolute member names",
			'L': "it runs a script between volumes", 'M': "it runs a script between volumes", 'r': "it changes an archive in place",
			'u': "it changes an archive in place", 'A': "it changes an archive in place", 'd': "it compares with files it opens itself"},
		long: denyLong(withLong(withLong(withLong(withLong(flagsLong("create", "list", "extract", "get", "verbose", "gzip",
			"gunzip", "bzip2", "xz", "lzip", "lzma", "zstd", "auto-compress", "to-stdout", "preserve-permissions",
			"same-permissions", "keep-old-files", "skip-old-files", "touch", "numeric-owner", "no-same-owner",
			"no-same-permissions", "wildcards", "no-wildcards", "anchored", "no-anchored", "no-recursion", "recursion",
			"totals", "force-local", "help", "version", "show-transformed-names", "ignore-case", "no-ignore-case"),
			optText, 1, "exclude", "owner", "group", "mode", "mtime", "sort", "transform", "xform", "strip-components",
			"format", "blocking-factor", "record-size"),
			optPath, 1, "file", "exclude-from"),
			optDir, 1, "directory"),
			optText, 2, "exclude-vcs", "exclude-vcs-ignores"),
			"it runs a program, follows links, reads names from a file or changes where members land",
			"to-command", "use-compress-program", "compress-program", "info-script", "new-volume-script", "rsh-command",
			"checkpoint-action", "dereference", "files-from", "absolute-names", "rmt-command", "index-file",
			"append", "update", "catenate", "concatenate", "delete", "diff", "compare", "unlink-first", "recursive-unlink",
			"overwrite", "overwrite-dir", "keep-directory-symlink", "volno-file"),
	}
}
