package bash

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

// kindNames are the kinds of option values in the tables below; "text="
// is text given only glued or after "=" (an optional value).
var kindNames = map[string]optKind{"flag": optFlag, "text": optText, "path": optPath, "write": optWrite, "dir": optDir}

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

// optTable makes the option spec of the commands names from a table of groups
// separated by ";", each "KIND: options". KIND is flag (no value); text,
// path, write or dir (a value glued or in the next word); text= (a value
// only glued or after "="); or "deny WHY" (refused, for WHY). A word -xyz
// is the short options x, y and z, every other word a long option (its
// leading "--" is optional). A group "strict" refuses unknown options.
func optTable(names, table string) {
	s := &optSpec{values: map[byte]shortVal{}, deny: map[byte]string{}, long: map[string]longOpt{}}
	for _, g := range strings.Split(table, ";") {
		kind, opts, _ := strings.Cut(g, ":")
		kind = strings.Join(strings.Fields(kind), " ")
		if kind == "strict" {
			s.strict = true
			continue
		}
		why, deny := strings.CutPrefix(kind, "deny ")
		kind, optional := strings.CutSuffix(kind, "=")
		k, ok := kindNames[kind]
		if !ok && !deny {
			panic(fmt.Sprintf("option table of %s: unknown kind %q", names, kind))
		}
		for _, w := range strings.Fields(opts) {
			if strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "--") {
				for _, c := range []byte(w[1:]) {
					switch {
					case deny:
						s.deny[c] = why
					case k == optFlag:
						s.flags += string(c)
					default:
						s.values[c] = shortVal{kind: k, optional: optional}
					}
				}
				continue
			}
			lo := longOpt{kind: k, arg: 1}
			switch {
			case deny:
				lo = longOpt{kind: optDeny, arg: 2, why: why}
			case optional:
				lo.arg = 2
			case k == optFlag:
				lo.arg = 0
			}
			s.long[strings.TrimPrefix(w, "--")] = lo
		}
	}
	for _, n := range strings.Fields(names) {
		cmdSpecs[n] = s
	}
}

func init() {
	optTable("awk gawk mawk nawk", `strict; flag: --help version; text: -Fv --assign field-separator;
		deny it starts a debugger: -D; deny `+whyRuns+`: -E; deny mawk's -W options are not checked: -W;
		deny it writes a file: -dop --debug dump-variables pretty-print profile; deny the program must be its first operand:
		-e; deny its program is in a file this check does not read: -f --exec file; deny it loads a source file: -i;
		deny it loads a shared library: -l; deny it loads code: --include load source`)
	optTable("b2sum md5sum sha1sum sha224sum sha256sum sha384sum sha512sum", `flag: -btwz --binary help ignore-missing
		quiet status strict tag text version warn zero; deny it opens the files a checksum list names: -c --check`)
	// Modes such as -w or -rwx look like options: the letters of modes are
	// flags here, and -R with -L is refused below.
	optTable("chmod", `flag: -cfvRHLPrwxXstugoa01234567 --changes dereference help no-dereference no-preserve-root
		preserve-root quiet recursive silent verbose version; path: --reference`)
	optTable("cp", `strict; flag: -abdfHilLnPprRsTuvxZ --archive attributes-only copy-contents debug dereference force
		help interactive keep-directory-symlink link no-clobber no-dereference no-target-directory one-file-system parents
		recursive remove-destination strip-trailing-slashes symbolic-link verbose version; write: -t --target-directory;
		text: -S --no-preserve sparse suffix; text=: --backup context preserve reflink update`)
	optTable("cut", `flag: -nsz --complement help only-delimited version zero-terminated; text: -bcdf --bytes characters
		delimiter fields output-delimiter`)
	optTable("date", `flag: -Ru --debug help resolution rfc-email universal utc version; path: -fr --file reference;
		text: -d --date rfc-3339; text=: -I --iso-8601; deny it sets the clock: -s --set`)
	optTable("diff", `flag: -abBcdeEfilnNpPqrstTuwyZ0123456789 --brief ed expand-tabs help ignore-all-space
		ignore-blank-lines ignore-case ignore-file-name-case ignore-space-change ignore-tab-expansion ignore-trailing-space
		initial-tab left-column minimal new-file no-dereference no-ignore-file-name-case normal paginate rcs recursive
		report-identical-files show-c-function side-by-side speed-large-files strip-trailing-cr suppress-blank-empty
		suppress-common-lines text unidirectional-new-file version; path: -X --exclude-from from-file to-file; text:
		-CDFILSUWx --GTYPE-group-format LTYPE-line-format changed-group-format exclude horizontal-lines ifdef
		ignore-matching-lines label line-format new-group-format new-line-format old-group-format old-line-format palette
		show-function-line starting-file tabsize unchanged-group-format unchanged-line-format width; text=: --color context
		unified`)
	optTable("du", `flag: -0abcDhHklmPsSx --all apparent-size bytes count-links dereference-args help human-readable
		inodes no-dereference null one-file-system separate-dirs si summarize total version; path: -X --exclude-from; text:
		-Bdt --block-size exclude max-depth threshold time-style; text=: --time; deny `+whyFollow+`: -L --dereference;
		deny `+whyNames+`: --files0-from`)
	optTable("egrep fgrep grep", `flag: -abcEFGhHiIlLnoPqrsTUvVwxyzZ0123456789 --basic-regexp binary byte-offset count
		extended-regexp files-with-matches files-without-match fixed-strings help ignore-case initial-tab invert-match
		line-buffered line-number line-regexp no-filename no-ignore-case no-messages null null-data only-matching
		perl-regexp quiet recursive silent text version with-filename word-regexp; path: -f --exclude-from file; text:
		-ABCDdem --after-context before-context binary-files context devices directories exclude exclude-dir include label
		max-count regexp; text=: --color colour; deny `+whyFollow+`: -R --dereference-recursive`)
	optTable("file", `flag: -bcdEhiIklLNnprsSvzZ0 --apple brief checking-printout debug dereference extension help
		keep-going list mime mime-encoding mime-type no-buffer no-dereference no-pad preserve-date print0 raw special-files
		uncompress uncompress-noreport version; path: -m --magic-file; text: -FPe --exclude exclude-quiet parameter
		separator; deny it writes a magic file: -C; deny `+whyNames+`: -f --compile files-from`)
	optTable("ln", `strict; flag: -binrsTvLP --help interactive logical no-dereference no-target-directory physical
		relative symbolic verbose version; write: -t --target-directory; text: -S --suffix; text=: --backup;
		deny it hard-links directories: -Fd --directory; deny it re-points an existing link: -f --force`)
	optTable("ls", `flag: -aAbBcCdDfFgGhHiklLmnNopqQrRsStuUvxXZ1 --all almost-all author classify context dereference
		dereference-command-line dereference-command-line-symlink-to-dir directory dired escape file-type
		group-directories-first help hide-control-chars human-readable ignore-backups inode kibibytes literal no-group
		numeric-uid-gid quote-name recursive reverse show-control-chars si size version zero; text: -ITw --block-size format
		hide ignore indicator-style quoting-style sort tabsize time time-style width; text=: --color hyperlink`)
	optTable("make", `flag: -bBdeikLnqrRsStvw --always-make check-symlink-times dry-run environment-overrides help
		ignore-errors just-print keep-going no-builtin-rules no-builtin-variables no-keep-going no-print-directory no-silent
		print-directory question quiet recon silent stop touch trace version warn-undefined-variables; path: -IWfo
		--assume-new assume-old file include-dir makefile new-file old-file what-if; text: --debug jobs load-average
		max-load output-sync shuffle; text=: -Ojl --jobserver-style; dir: -C --directory; deny `+whyRuns+`: -E --eval;
		deny `+whyEnvDump+`: -p --print-data-base`)
	optTable("mv", `strict; flag: -bfinTuvZ --exchange force help interactive no-clobber no-copy no-target-directory
		strip-trailing-slashes verbose version; write: -t --target-directory; text: -S --suffix; text=: --backup context
		update`)
	optTable("sed", `strict; flag: -nrEsuzb --binary debug follow-symlinks help null-data posix quiet regexp-extended
		sandbox separate silent unbuffered version zero-terminated; text: -el --expression line-length; text=: -i
		--in-place; deny its script is in a file this check does not read: -f --file`)
	optTable("sort", `flag: -bdfgiMhnRrVcCmsuz --debug dictionary-order general-numeric-sort help human-numeric-sort
		ignore-case ignore-leading-blanks ignore-nonprinting merge month-sort numeric-sort random-sort reverse stable unique
		version version-sort zero-terminated; path: --random-source; write: -To --output temporary-directory; text: -Skt
		--batch-size buffer-size field-separator key parallel sort; text=: --check; deny `+whyRuns+`: --compress-program;
		deny `+whyNames+`: --files0-from`)
	optTable("stat", `flag: -Lft --dereference file-system help terse version; text: -c --format printf; text=: --cached`)
	optTable("tar", `strict; flag: -ctvzjJaOpkmx --anchored auto-compress bzip2 create extract force-local get gunzip
		gzip help ignore-case keep-old-files list lzip lzma no-anchored no-ignore-case no-recursion no-same-owner
		no-same-permissions no-wildcards numeric-owner preserve-permissions recursion same-permissions
		show-transformed-names skip-old-files to-stdout totals touch verbose version wildcards xz zstd; path: -Xf
		--exclude-from file; text: --blocking-factor exclude format group mode mtime owner record-size sort strip-components
		transform xform; text=: --exclude-vcs exclude-vcs-ignores; dir: -C --directory; deny it changes an archive in place:
		-Aru; deny `+whyRuns+`: -FI; deny it runs a script between volumes: -LM; deny it keeps absolute member names: -P;
		deny `+whyNames+`: -T; deny it compares with files it opens itself: -d; deny `+whyFollow+`: -h;
		deny it runs a program, follows links, reads names from a file or changes where members land: --absolute-names
		append catenate checkpoint-action compare compress-program concatenate delete dereference diff files-from index-file
		info-script keep-directory-symlink new-volume-script overwrite overwrite-dir recursive-unlink rmt-command
		rsh-command to-command unlink-first update use-compress-program volno-file`)
	optTable("tr", `flag: -cCdst --complement delete help squeeze-repeats truncate-set1 version`)
	optTable("tree", `strict; flag: -adfxqNQpugshDFvtcUrinCAXJS --device dirsfirst du fflinks filesfirst gitignore help
		ignore-case info inodes matchdirs metafirst nolinks noreport prune si version; path: --hintro houtro infofile;
		write: -o; text: -HILPT --charset filelimit sort timefmt; text=: --hyperlink;
		deny it writes a listing into every directory: -R; deny `+whyFollow+`: -l; deny `+whyNames+`: --fromfile`)
	optTable("uniq", `flag: -cdDiuz --count help ignore-case repeated unique version zero-terminated; text: -fsw
		--check-chars skip-chars skip-fields; text=: --all-repeated group`)
	optTable("wc", `flag: -cmlLw --bytes chars help lines max-line-length version words; text: --total;
		deny `+whyNames+`: --files0-from`)
}
