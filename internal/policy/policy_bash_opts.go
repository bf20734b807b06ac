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
	flags  string            // short options without a value
	values map[byte]shortVal // short options with a value
	deny   map[byte]string   // short options refused, and why
	long   longOpts
	strict bool // an unknown option is refused (the command is parsed for a reason)
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

// kindNames are the kinds of option values in the specs below; "text="
// is text given only glued or after "=" (an optional value).
var kindNames = map[string]optKind{"flag": optFlag, "text": optText, "path": optPath, "write": optWrite, "dir": optDir}

// longOpts are long options by full name.
type longOpts map[string]longOpt

// longs makes long options from groups "KIND name …": a flag takes no
// value, text= an optional one (=VALUE only), the others a required one
// (=VALUE or the next word).
func longs(groups ...string) longOpts {
	m := longOpts{}
	for _, g := range groups {
		f := strings.Fields(g)
		kind, optional := strings.CutSuffix(f[0], "=")
		lo := longOpt{kind: kindNames[kind], arg: 1}
		switch {
		case optional:
			lo.arg = 2
		case lo.kind == optFlag:
			lo.arg = 0
		}
		for _, n := range f[1:] {
			m[n] = lo
		}
	}
	return m
}

// deny adds the long options names, refused for why.
func (m longOpts) deny(why, names string) longOpts {
	for _, n := range strings.Fields(names) {
		m[n] = longOpt{kind: optDeny, arg: 2, why: why}
	}
	return m
}

// shorts makes short options with a value from groups "KIND letters".
func shorts(groups ...string) map[byte]shortVal {
	m := map[byte]shortVal{}
	for _, g := range groups {
		kind, letters, _ := strings.Cut(g, " ")
		kind, optional := strings.CutSuffix(kind, "=")
		for i := 0; i < len(letters); i++ {
			m[letters[i]] = shortVal{kind: kindNames[kind], optional: optional}
		}
	}
	return m
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
		values: shorts("path f", "text ABCDdem"),
		deny:   map[byte]string{'R': whyFollow},
		long: longs(`flag basic-regexp binary byte-offset count extended-regexp files-with-matches
			files-without-match fixed-strings help ignore-case initial-tab invert-match line-buffered line-number
			line-regexp no-filename no-ignore-case no-messages null null-data only-matching perl-regexp quiet
			recursive silent text version with-filename word-regexp`, `text after-context before-context
			binary-files context devices directories exclude exclude-dir include label max-count regexp`,
			"text= color colour", "path exclude-from file").
			deny(whyFollow, "dereference-recursive"),
	}
	for _, n := range words("egrep fgrep grep") {
		cmdSpecs[n] = grep
	}
	cmdSpecs["sort"] = &optSpec{
		flags:  "bdfgiMhnRrVcCmsuz",
		values: shorts("text Skt", "write To"),
		long: longs(`flag debug dictionary-order general-numeric-sort help human-numeric-sort ignore-case
			ignore-leading-blanks ignore-nonprinting merge month-sort numeric-sort random-sort reverse stable unique
			version version-sort zero-terminated`, "text batch-size buffer-size field-separator key parallel sort",
			"text= check", "path random-source", "write output temporary-directory").
			deny(whyNames, "files0-from").
			deny(whyRuns, "compress-program"),
	}
	cmdSpecs["wc"] = &optSpec{
		flags: "cmlLw",
		long: longs("flag bytes chars help lines max-line-length version words", "text total").
			deny(whyNames, "files0-from"),
	}
	cmdSpecs["du"] = &optSpec{
		flags:  "0abcDhHklmPsSx",
		values: shorts("path X", "text Bdt"),
		deny:   map[byte]string{'L': whyFollow},
		long: longs(`flag all apparent-size bytes count-links dereference-args help human-readable inodes
			no-dereference null one-file-system separate-dirs si summarize total version`,
			"text block-size exclude max-depth threshold time-style", "text= time", "path exclude-from").
			deny(whyFollow, "dereference").
			deny(whyNames, "files0-from"),
	}
	cmdSpecs["ls"] = &optSpec{
		flags:  "aAbBcCdDfFgGhHiklLmnNopqQrRsStuUvxXZ1",
		values: shorts("text ITw"),
		long: longs(`flag all almost-all author classify context dereference dereference-command-line
			dereference-command-line-symlink-to-dir directory dired escape file-type group-directories-first help
			hide-control-chars human-readable ignore-backups inode kibibytes literal no-group numeric-uid-gid
			quote-name recursive reverse show-control-chars si size version zero`,
			"text block-size format hide ignore indicator-style quoting-style sort tabsize time time-style width",
			"text= color hyperlink"),
	}
	cmdSpecs["cut"] = &optSpec{
		flags:  "nsz",
		values: shorts("text bcdf"),
		long: longs("flag complement help only-delimited version zero-terminated",
			"text bytes characters delimiter fields output-delimiter"),
	}
	cmdSpecs["tr"] = &optSpec{
		flags: "cCdst",
		long:  longs("flag complement delete help squeeze-repeats truncate-set1 version"),
	}
	cmdSpecs["file"] = &optSpec{
		flags:  "bcdEhiIklLNnprsSvzZ0",
		values: shorts("path m", "text FPe"),
		deny:   map[byte]string{'C': "it writes a magic file", 'f': whyNames},
		long: longs(`flag apple brief checking-printout debug dereference extension help keep-going list mime
			mime-encoding mime-type no-buffer no-dereference no-pad preserve-date print0 raw special-files
			uncompress uncompress-noreport version`, "text exclude exclude-quiet parameter separator",
			"path magic-file").
			deny(whyNames, "compile files-from"),
	}
	sums := &optSpec{
		flags: "btwz",
		deny:  map[byte]string{'c': "it opens the files a checksum list names"},
		long: longs("flag binary help ignore-missing quiet status strict tag text version warn zero").
			deny("it opens the files a checksum list names", "check"),
	}
	for _, n := range words("b2sum md5sum sha1sum sha224sum sha256sum sha384sum sha512sum") {
		cmdSpecs[n] = sums
	}
	cmdSpecs["date"] = &optSpec{
		flags:  "Ru",
		values: shorts("path fr", "text d", "text= I"),
		deny:   map[byte]string{'s': "it sets the clock"},
		long: longs("flag debug help resolution rfc-email universal utc version", "text date rfc-3339",
			"text= iso-8601", "path file reference").
			deny("it sets the clock", "set"),
	}
	cmdSpecs["diff"] = &optSpec{
		flags:  "abBcdeEfilnNpPqrstTuwyZ0123456789",
		values: shorts("path X", "text CDFILSUWx"),
		long: longs(`flag brief ed expand-tabs help ignore-all-space ignore-blank-lines ignore-case
			ignore-file-name-case ignore-space-change ignore-tab-expansion ignore-trailing-space initial-tab
			left-column minimal new-file no-dereference no-ignore-file-name-case normal paginate rcs recursive
			report-identical-files show-c-function side-by-side speed-large-files strip-trailing-cr
			suppress-blank-empty suppress-common-lines text unidirectional-new-file version`, `text
			GTYPE-group-format LTYPE-line-format changed-group-format exclude horizontal-lines ifdef
			ignore-matching-lines label line-format new-group-format new-line-format old-group-format
			old-line-format palette show-function-line starting-file tabsize unchanged-group-format
			unchanged-line-format width`, "text= color context unified", "path exclude-from from-file to-file"),
	}
	cmdSpecs["cp"] = &optSpec{
		strict: true,
		flags:  "abdfHilLnPprRsTuvxZ",
		values: shorts("text S", "write t"),
		long: longs(`flag archive attributes-only copy-contents debug dereference force help interactive
			keep-directory-symlink link no-clobber no-dereference no-target-directory one-file-system parents
			recursive remove-destination strip-trailing-slashes symbolic-link verbose version`,
			"text no-preserve sparse suffix", "text= backup context preserve reflink update",
			"write target-directory"),
	}
	cmdSpecs["mv"] = &optSpec{
		strict: true,
		flags:  "bfinTuvZ",
		values: shorts("text S", "write t"),
		long: longs(`flag exchange force help interactive no-clobber no-copy no-target-directory
			strip-trailing-slashes verbose version`, "text suffix", "text= backup context update",
			"write target-directory"),
	}
	cmdSpecs["ln"] = &optSpec{
		strict: true,
		flags:  "binrsTvLP",
		values: shorts("text S", "write t"),
		deny:   map[byte]string{'f': "it re-points an existing link", 'd': "it hard-links directories", 'F': "it hard-links directories"},
		long: longs(`flag help interactive logical no-dereference no-target-directory physical relative symbolic
			verbose version`, "text suffix", "text= backup", "write target-directory").
			deny("it hard-links directories", "directory").
			deny("it re-points an existing link", "force"),
	}
	cmdSpecs["chmod"] = &optSpec{
		// Modes such as -w or -rwx look like options: the letters of
		// modes are flags here, and -R with -L is refused below.
		flags: "cfvRHLPrwxXstugoa01234567",
		long: longs(`flag changes dereference help no-dereference no-preserve-root preserve-root quiet recursive
			silent verbose version`, "path reference"),
	}
	cmdSpecs["uniq"] = &optSpec{
		flags:  "cdDiuz",
		values: shorts("text fsw"),
		long: longs("flag count help ignore-case repeated unique version zero-terminated",
			"text check-chars skip-chars skip-fields", "text= all-repeated group"),
	}
	cmdSpecs["stat"] = &optSpec{
		flags:  "Lft",
		values: shorts("text c"),
		long:   longs("flag dereference file-system help terse version", "text format printf", "text= cached"),
	}
	cmdSpecs["make"] = &optSpec{
		flags:  "bBdeikLnqrRsStvw",
		values: shorts("dir C", "path IWfo", "text= Ojl"),
		deny:   map[byte]string{'E': whyRuns, 'p': whyEnvDump},
		long: longs(`flag always-make check-symlink-times dry-run environment-overrides help ignore-errors
			just-print keep-going no-builtin-rules no-builtin-variables no-keep-going no-print-directory no-silent
			print-directory question quiet recon silent stop touch trace version warn-undefined-variables`,
			"text debug jobs load-average max-load output-sync shuffle", "text= jobserver-style",
			"path assume-new assume-old file include-dir makefile new-file old-file what-if", "dir directory").
			deny(whyEnvDump, "print-data-base").
			deny(whyRuns, "eval"),
	}
	cmdSpecs["sed"] = &optSpec{
		strict: true,
		flags:  "nrEsuzb",
		values: shorts("text el", "text= i"),
		deny:   map[byte]string{'f': "its script is in a file this check does not read"},
		long: longs(`flag binary debug follow-symlinks help null-data posix quiet regexp-extended sandbox separate
			silent unbuffered version zero-terminated`, "text expression line-length", "text= in-place").
			deny("its script is in a file this check does not read", "file"),
	}
	awk := &optSpec{
		strict: true,
		values: shorts("text Fv"),
		deny: map[byte]string{'f': "its program is in a file this check does not read", 'E': whyRuns, 'e': "the program must be its first operand",
			'i': "it loads a source file", 'l': "it loads a shared library", 'd': "it writes a file", 'p': "it writes a file",
			'o': "it writes a file", 'D': "it starts a debugger", 'W': "mawk's -W options are not checked"},
		long: longs("flag help version", "text assign field-separator").
			deny("it loads code", "include load source").
			deny("it writes a file", "debug dump-variables pretty-print profile").
			deny("its program is in a file this check does not read", "exec file"),
	}
	for _, n := range words("awk gawk mawk nawk") {
		cmdSpecs[n] = awk
	}
	cmdSpecs["tree"] = &optSpec{
		strict: true,
		flags:  "adfxqNQpugshDFvtcUrinCAXJS",
		values: shorts("text HILPT", "write o"),
		deny:   map[byte]string{'R': "it writes a listing into every directory", 'l': whyFollow},
		long: longs(`flag device dirsfirst du fflinks filesfirst gitignore help ignore-case info inodes matchdirs
			metafirst nolinks noreport prune si version`, "text charset filelimit sort timefmt", "text= hyperlink",
			"path hintro houtro infofile").
			deny(whyNames, "fromfile"),
	}
	cmdSpecs["tar"] = &optSpec{
		strict: true,
		flags:  "ctvzjJaOpkmx",
		values: shorts("dir C", "path Xf"),
		deny: map[byte]string{'h': whyFollow, 'T': whyNames, 'I': whyRuns, 'F': whyRuns, 'P': "it keeps absolute member names",
			'L': "it runs a script between volumes", 'M': "it runs a script between volumes", 'r': "it changes an archive in place",
			'u': "it changes an archive in place", 'A': "it changes an archive in place", 'd': "it compares with files it opens itself"},
		long: longs(`flag anchored auto-compress bzip2 create extract force-local get gunzip gzip help ignore-case
			keep-old-files list lzip lzma no-anchored no-ignore-case no-recursion no-same-owner no-same-permissions
			no-wildcards numeric-owner preserve-permissions recursion same-permissions show-transformed-names
			skip-old-files to-stdout totals touch verbose version wildcards xz zstd`, `text blocking-factor exclude
			format group mode mtime owner record-size sort strip-components transform xform`,
			"text= exclude-vcs exclude-vcs-ignores", "path exclude-from file", "dir directory").
			deny("it runs a program, follows links, reads names from a file or changes where members land", `
			absolute-names append catenate checkpoint-action compare compress-program concatenate delete dereference
			diff files-from index-file info-script keep-directory-symlink new-volume-script overwrite overwrite-dir
			recursive-unlink rmt-command rsh-command to-command unlink-first update use-compress-program volno-file`),
	}
}
