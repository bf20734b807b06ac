package bash

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/zergrush/zerg/internal/policy/resolve"
)

// What some commands do with their arguments beyond reading them: write,
// make or move links, take paths relative to a -C directory, read a script.

// specChecks run after a command's options are parsed and before its option
// values and operands are checked; they may change what an operand is
// (kinds: optPath by default, optWrite for a command that changes files).
var specChecks = map[string]func(ck *bashChecker, inv *invocation, kinds []optKind) error{
	"grep": checkGrep, "egrep": checkGrep, "fgrep": checkGrep,
	"ls":    noFollowTree("-L", "--dereference"),
	"chmod": noFollowTree("-L"),
	"cp":    checkCp,
	"mv":    checkMv,
	"ln":    checkLn,
	"diff":  checkDiff,
	"uniq": func(_ *bashChecker, _ *invocation, kinds []optKind) error {
		if len(kinds) > 1 {
			kinds[1] = optWrite // uniq INPUT OUTPUT
		}
		return nil
	},
	"date": textOperands, "tr": textOperands,
	"sed": checkSed,
	"awk": checkAwk, "gawk": checkAwk, "mawk": checkAwk, "nawk": checkAwk,
	"tar": checkTar,
}

// cmdChecks replace the generic checks for commands without a spec (set
// in init: they check nested commands, which use cmdChecks).
var cmdChecks map[string]func(ck *bashChecker, args []bashWord) error

func init() {
	cmdChecks = map[string]func(ck *bashChecker, args []bashWord) error{
		"find":  checkFind,
		"git":   checkGit,
		"go":    checkGo,
		"gofmt": checkGofmt,
		"jq":    checkJq,
		"xxd":   checkXxd,
	}
}

// checkXxd: xxd's options are single words (-c 8, -s 10, -ps); its first
// operand is read, its second written (xxd -r in out).
var xxdValues = set("-c -g -l -o -s -n -cols -len -seek -groupsize -name -offset")

func checkXxd(ck *bashChecker, args []bashWord) error {
	var ops []string
	for i := 0; i < len(args); i++ {
		a := args[i].lit
		switch {
		case xxdValues[a]:
			i++
		case strings.HasPrefix(a, "-") && a != "-":
		default:
			ops = append(ops, a)
		}
	}
	for k, op := range ops {
		if err := ck.plainWord(op, k == 1); err != nil {
			return err
		}
	}
	return nil
}

func textOperands(_ *bashChecker, _ *invocation, kinds []optKind) error {
	for i := range kinds {
		kinds[i] = optText
	}
	return nil
}

// specArgs checks a command with an option spec (cmdSpecs).
func (ck *bashChecker) specArgs(name string, args []bashWord, mutating bool) error {
	lits := make([]string, len(args))
	globs := make([]bool, len(args))
	for i, a := range args {
		lits[i], globs[i] = a.lit, a.glob >= 0
	}
	if name == "tar" {
		lits, globs = tarOldStyle(lits, globs)
	}
	if name == "sed" && bsdUserland {
		if err := ck.bsdSed(lits, globs); err != nil {
			return fmt.Errorf("%v (as the BSD sed of macOS reads it)", err)
		}
	}
	inv, err := cmdSpecs[name].parse(name, lits, globs)
	if err != nil {
		return err
	}
	kinds := make([]optKind, len(inv.operands))
	for i := range kinds {
		kinds[i] = optPath
		if mutating {
			kinds[i] = optWrite
		}
	}
	if h := specChecks[name]; h != nil {
		if err := h(ck, inv, kinds); err != nil {
			return err
		}
	}
	if len(inv.loose) > 0 {
		// An option the spec does not know may have taken the next word
		// as its value: no operand is taken for text then.
		for i, k := range kinds {
			if k == optText {
				kinds[i] = optPath
			}
		}
	}
	ck2, err := ck.withDirs(name, inv)
	if err != nil {
		return err
	}
	for _, o := range inv.opts {
		// file -m takes a:b lists; plainWord checks each part (none of
		// an empty value).
		if o.kind == optPath || o.kind == optWrite {
			if err := ck2.plainWord(o.value, o.kind == optWrite); err != nil {
				return err
			}
		}
	}
	for _, w := range inv.loose {
		if err := ck2.rawWord(w, mutating, true); err != nil {
			return err
		}
	}
	for i, op := range inv.operands {
		if k := kinds[i]; k == optPath || k == optWrite {
			if err := ck2.plainWord(op, k == optWrite); err != nil {
				return err
			}
		}
	}
	return nil
}

// withDirs returns the checker for a command's own paths: the directories
// its -C options name are added to the possible cwds (each must be inside
// the workspace, as for cd).
func (ck *bashChecker) withDirs(name string, inv *invocation) (*bashChecker, error) {
	var dirs []string
	for _, o := range inv.opts {
		if o.kind == optDir {
			if !o.has || o.value == "" {
				return nil, fmt.Errorf("%s %s needs a directory", name, o.name)
			}
			dirs = append(dirs, o.value)
		}
	}
	return ck.inDirs(name+" -C ", dirs)
}

// inDirs returns the checker for a command that runs in dirs (-C DIR, uv
// run --directory DIR), named what+DIR in a refusal: they are added to the
// possible cwds. They accumulate (each relative to the one before): each is
// resolved from every directory known so far.
func (ck *bashChecker) inDirs(what string, dirs []string) (*bashChecker, error) {
	if len(dirs) == 0 {
		return ck, nil
	}
	c := *ck
	c.cwds = slices.Clone(ck.cwds)
	for _, d := range dirs {
		next, err := c.dirsOf(what+d, d)
		if err != nil {
			return nil, err
		}
		if err := c.add(next); err != nil {
			return nil, err
		}
	}
	return &c, nil
}

func checkGrep(_ *bashChecker, inv *invocation, kinds []optKind) error {
	if !inv.has("-e", "--regexp", "-f", "--file") && len(kinds) > 0 {
		kinds[0] = optText // the pattern
	}
	return nil
}

// noFollowTree refuses -R with one of follow (-L): the walk would follow
// symbolic links out of the workspace.
func noFollowTree(follow ...string) func(*bashChecker, *invocation, []optKind) error {
	return func(_ *bashChecker, inv *invocation, _ []optKind) error {
		if inv.has(follow...) && inv.has("-R", "--recursive") {
			return fmt.Errorf("%s -R with -L is not allowed (%s)", inv.name, whyFollow)
		}
		return nil
	}
}

// sources returns the operands cp, mv and ln take from (all of them with
// -t, else all but the last).
func sources(inv *invocation) []string {
	if inv.has("-t", "--target-directory") || len(inv.operands) < 2 {
		return inv.operands
	}
	return inv.operands[:len(inv.operands)-1]
}

func checkCp(ck *bashChecker, inv *invocation, _ []optKind) error {
	if inv.has("-s", "--symbolic-link") {
		return fmt.Errorf("cp -s is not allowed (%s)", whyLinks)
	}
	if inv.has("--parents") {
		return errors.New("cp --parents is not allowed (it recreates the sources' paths, .. included, under the target)")
	}
	recursive := inv.has("-r", "-R", "--recursive", "-a", "--archive")
	if recursive && inv.has("-L", "--dereference") {
		return fmt.Errorf("cp -r with -L is not allowed (%s)", whyFollow)
	}
	keepsLinks := recursive || inv.has("-P", "-d", "--no-dereference", "-l", "--link")
	for _, src := range sources(inv) {
		if err := ck.noLinks("cp", src, keepsLinks, recursive); err != nil {
			return err
		}
	}
	return ck.intoDir("cp", inv, recursive)
}

func checkMv(ck *bashChecker, inv *invocation, _ []optKind) error {
	for _, src := range sources(inv) {
		if err := ck.noLinks("mv", src, true, true); err != nil {
			return err
		}
	}
	return ck.intoDir("mv", inv, false)
}

// intoDir checks the paths cp and mv make up when they put their sources
// into a directory (-t DIR, several sources, or an existing directory as the
// last operand): DIR/<source's name> is written, through a symlink already
// there if there is one (cp follows it). A tree cp -r merges into must hold
// no symbolic link either.
func (ck *bashChecker) intoDir(cmd string, inv *invocation, tree bool) error {
	ops := inv.operands
	var dir string
	switch t := inv.values("-t", "--target-directory"); {
	case len(t) > 0:
		dir = t[len(t)-1]
	case len(ops) > 2:
		dir = ops[len(ops)-1]
	case len(ops) == 2 && !inv.has("-T", "--no-target-directory"):
		for _, cwd := range ck.cwds {
			if all, _, err := resolve.From(cwd, ops[1]); err == nil {
				for _, r := range all {
					if st, err := os.Stat(r); err == nil && st.IsDir() {
						dir = ops[1]
					}
				}
			}
		}
	}
	if dir == "" {
		return nil
	}
	for _, src := range sources(inv) {
		d := dir + "/" + filepath.Base(src)
		if err := ck.checkPath(d, true); err != nil {
			return err
		}
		if !tree {
			continue
		}
		for _, cwd := range ck.cwds {
			all, _, err := resolve.From(cwd, d)
			if err != nil {
				return fmt.Errorf("%s %s: %v", cmd, d, err)
			}
			for _, r := range all {
				if st, err := os.Lstat(r); err == nil && st.IsDir() {
					if err := ck.walkNoLinks(r); err != nil {
						return fmt.Errorf("%s into %s: %v", cmd, d, err)
					}
				}
			}
		}
	}
	return nil
}

// maxWalk bounds the entries looked at under one source of cp -r, mv or diff -r.
const maxWalk = 20000

// noLinks refuses a source that is a symbolic link (when the command keeps
// it a link: mv, cp -P/-r/-a) or a directory holding one (when it copies or
// moves the tree): a relative link points elsewhere from its new place, and
// a later command in the same line would read through it unchecked. A name
// starting with "-" in the tree is refused too: a pattern in a later command
// would hand it over as an option. A source that does not exist yet (made
// earlier in the line) cannot be looked at, which matters only when the line
// makes links.
func (ck *bashChecker) noLinks(cmd, src string, keepsLinks, tree bool) error {
	for _, cwd := range ck.cwds {
		t := src
		if !filepath.IsAbs(t) {
			t = cwd + string(filepath.Separator) + t
		}
		// Resolve the directories on the way, not the source itself.
		dir, err := resolve.Path(filepath.Dir(t))
		if err != nil {
			return fmt.Errorf("%s %s: %v", cmd, src, err)
		}
		p := filepath.Join(dir, filepath.Base(t))
		if b := filepath.Base(t); b == "." || b == ".." {
			p = filepath.Clean(filepath.Join(dir, b))
		}
		fi, err := os.Lstat(p)
		if err != nil {
			if ck.makesLinks {
				return fmt.Errorf("%s %s: it does not exist yet and this command line makes symbolic links", cmd, src)
			}
			continue
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			if keepsLinks {
				return fmt.Errorf("%s %s: a symbolic link; moved or copied as a link it would point elsewhere", cmd, src)
			}
			continue
		}
		if tree && fi.IsDir() {
			if err := ck.walkNoLinks(p); err != nil {
				return fmt.Errorf("%s %s: %v", cmd, src, err)
			}
		}
	}
	return nil
}

// walkNoLinks refuses a tree holding a symbolic link, a name starting with
// "-", or what may never be written (.git, .zerg, Claude settings): copied
// or moved elsewhere they would land there.
func (ck *bashChecker) walkNoLinks(root string) error {
	n := 0
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if n++; n > maxWalk {
			return fmt.Errorf("more than %d files to look at for symbolic links", maxWalk)
		}
		rel, _ := filepath.Rel(root, p)
		if d.Type()&fs.ModeSymlink != 0 {
			return fmt.Errorf("it holds a symbolic link (%s), which would point elsewhere from its new place or be followed", rel)
		}
		if p != root && strings.HasPrefix(d.Name(), "-") {
			return fmt.Errorf("it holds %s, a name that would be read as an option", rel)
		}
		if why := ck.sc.NeverWritten(filepath.ToSlash(rel)); p != root && why != "" {
			return fmt.Errorf("it holds %s, %s", rel, why)
		}
		return nil
	})
}

// topNoLinks refuses a directory with a symbolic link directly in it.
func topNoLinks(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Type()&fs.ModeSymlink != 0 {
			return fmt.Errorf("it holds a symbolic link (%s), which would be followed", e.Name())
		}
	}
	return nil
}

// checkLn allows links that stay in the workspace from where they are made:
// a symbolic link's target is relative (to the link's directory, which must
// exist) and resolves inside the workspace; a hard link's source is not a
// symbolic link. -f (re-pointing an existing link) is refused by the spec.
func checkLn(ck *bashChecker, inv *invocation, kinds []optKind) error {
	ops := inv.operands
	if len(ops) == 0 {
		return errors.New("ln needs a target")
	}
	// Where each target's link lands: DIR/<its name> into a directory (-t
	// DIR, several targets, or an existing directory last), its name in the
	// shell's directory when it is the only operand, else the last operand.
	targets, last, dir := ops[:len(ops)-1], ops[len(ops)-1], ""
	switch tdirs := inv.values("-t", "--target-directory"); {
	case len(tdirs) > 0:
		targets, dir = ops, tdirs[len(tdirs)-1]
	case len(ops) == 1:
		targets = ops
	case len(ops) > 2:
		dir = last
	case !inv.has("-T", "--no-target-directory"):
		for _, cwd := range ck.cwds {
			t := last
			if !filepath.IsAbs(t) {
				t = cwd + "/" + t
			}
			if st, err := os.Stat(t); err == nil && st.IsDir() {
				dir = last
			}
		}
	}
	symbolic := inv.has("-s", "--symbolic")
	relative := inv.has("-r", "--relative")
	for i := range kinds {
		kinds[i] = optText // judged below
	}
	for _, target := range targets {
		link := last
		switch {
		case dir != "":
			link = dir + "/" + filepath.Base(target)
		case len(ops) == 1:
			link = filepath.Base(target)
		}
		if err := ck.checkPath(link, true); err != nil {
			return err
		}
		switch {
		case !symbolic:
			if err := ck.checkPath(target, false); err != nil {
				return err
			}
			if inv.has("-L", "--logical") {
				continue
			}
			if err := ck.noLinks("ln", target, true, false); err != nil {
				return err
			}
		case relative:
			// ln -r makes the target relative itself: it is named from
			// the shell's directory.
			if err := ck.linkTarget(target, ck.cwds); err != nil {
				return err
			}
		case filepath.IsAbs(target):
			return fmt.Errorf("ln -s with an absolute target (%s); use a path relative to the link", target)
		default:
			var dirs []string
			for _, cwd := range ck.cwds {
				l := link
				if !filepath.IsAbs(l) {
					l = cwd + "/" + l
				}
				d, err := resolve.Path(filepath.Dir(l))
				if err != nil {
					return fmt.Errorf("ln %s: %v", link, err)
				}
				if st, err := os.Stat(d); err != nil || !st.IsDir() {
					return fmt.Errorf("ln %s: the link's directory does not exist yet; make it first", link)
				}
				dirs = append(dirs, d)
			}
			if err := ck.linkTarget(target, dirs); err != nil {
				return err
			}
		}
	}
	return nil
}

// linkTarget checks a symbolic link's target from the directories it is
// relative to: inside the workspace, never protected, and not through a
// component that does not exist yet.
func (ck *bashChecker) linkTarget(target string, dirs []string) error {
	for _, d := range dirs {
		all, assumed, err := resolve.From(d, target)
		if err != nil {
			return fmt.Errorf("ln: the link target %s: %v", target, err)
		}
		if assumed {
			return fmt.Errorf("ln: the link target %s goes through a directory that does not exist yet", target)
		}
		for _, r := range all {
			if !within(r, ck.sc.Workspace) {
				return fmt.Errorf("ln: the link target %s is outside the workspace", target)
			}
			if rel, ok := ck.sc.Rel(r); ok && ck.sc.NeverWritten(rel) != "" {
				return fmt.Errorf("ln: the link target %s is %s", target, ck.sc.NeverWritten(rel))
			}
			if ck.sc.IsProtected(r) {
				return fmt.Errorf("ln: the link target %s is a protected file", target)
			}
		}
	}
	return nil
}

// checkDiff: given a directory, diff opens the entries in it (every common
// name, or DIR/<name of the other file>), following symbolic links, and with
// -r the whole tree: a directory holding a link is refused (unless
// --no-dereference).
func checkDiff(ck *bashChecker, inv *invocation, _ []optKind) error {
	if inv.has("--no-dereference") {
		return nil
	}
	recursive := inv.has("-r", "--recursive")
	trees := append(slices.Clone(inv.operands), inv.values("--from-file", "--to-file")...)
	for _, op := range trees {
		for _, cwd := range ck.cwds {
			all, _, err := resolve.From(cwd, op)
			if err != nil {
				return fmt.Errorf("diff %s: %v", op, err)
			}
			for _, r := range all {
				st, err := os.Stat(r)
				if err != nil {
					if ck.makesLinks {
						return fmt.Errorf("diff -r %s: it does not exist yet and this command line makes symbolic links", op)
					}
					continue
				}
				if !st.IsDir() {
					continue
				}
				if recursive {
					err = ck.walkNoLinks(r)
				} else {
					err = topNoLinks(r)
				}
				if err != nil {
					return fmt.Errorf("diff %s: %v", op, err)
				}
			}
		}
	}
	return nil
}

func checkSed(_ *bashChecker, inv *invocation, kinds []optKind) error {
	for _, v := range inv.values("-i", "--in-place") {
		if strings.Contains(v, "/") {
			return fmt.Errorf("sed -i with the backup suffix %q, which writes the backup in another directory", v)
		}
	}
	var scripts []string
	for _, o := range inv.opts {
		if o.name == "-e" || o.name == "--expression" {
			if o.glob {
				return errors.New("sed with a pattern as its script")
			}
			scripts = append(scripts, o.value)
		}
	}
	if len(scripts) == 0 {
		if len(inv.operands) == 0 {
			return errors.New("sed without a script")
		}
		if inv.opGlob[0] {
			return errors.New("sed with a pattern as its script")
		}
		scripts = []string{inv.operands[0]}
		kinds[0] = optText
	}
	if err := checkSedScript(strings.Join(scripts, "\n")); err != nil {
		return err
	}
	if inv.has("-i", "--in-place") {
		for i := range kinds {
			if kinds[i] == optPath {
				kinds[i] = optWrite
			}
		}
	}
	return nil
}

// bsdUserland says the system's sed and tar are BSD's (macOS), whose
// options differ from GNU's in ways a check must follow: sed's -i takes its
// backup suffix as the next word (sed -i "" 'w FILE' f writes FILE there,
// where GNU sed reads "" as the script), -l takes no value, options end at
// the first operand; tar reads the members of another archive from an
// operand @ARCHIVE. Such a command must pass both readings (a GNU sed
// installed first on PATH reads it the GNU way). A variable so tests run
// the BSD reading on Linux too.
var bsdUserland = runtime.GOOS != "linux"

// bsdSed checks sed's command line as BSD sed's getopt("EI:ae:f:i:lnru")
// reads it: the scripts (-e, else the first operand) and the files, each
// written when -i or -I edits in place, with its backup (the file's name
// and the suffix) written too.
func (ck *bashChecker) bsdSed(args []string, globs []bool) error {
	var scripts, suffixes []string
	inPlace := false
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			i++
			break
		}
		if len(a) < 2 || a[0] != '-' {
			break
		}
		for j := 1; j < len(a); j++ {
			c := a[j]
			if strings.IndexByte("Ealnru", c) >= 0 {
				continue
			}
			if strings.IndexByte("eiI", c) < 0 {
				return fmt.Errorf("sed -%c is not an option this check knows", c)
			}
			v := a[j+1:]
			if v == "" {
				if i+1 >= len(args) {
					return fmt.Errorf("sed -%c without its value", c)
				}
				i++
				v = args[i]
			}
			if c == 'e' {
				if globs[i] {
					return errors.New("sed with a pattern as its script")
				}
				scripts = append(scripts, v)
			} else {
				inPlace = true
				suffixes = append(suffixes, v)
			}
			break
		}
	}
	files := args[i:]
	if len(scripts) == 0 {
		if len(files) == 0 {
			return errors.New("sed without a script")
		}
		if globs[i] {
			return errors.New("sed with a pattern as its script")
		}
		scripts, files = files[:1], files[1:]
	}
	if err := checkSedScript(strings.Join(scripts, "\n")); err != nil {
		return err
	}
	for _, f := range files {
		if f == "-" && !inPlace {
			continue
		}
		if err := ck.checkPath(f, inPlace); err != nil {
			return err
		}
		for _, s := range suffixes {
			if s != "" {
				if err := ck.checkPath(f+s, true); err != nil {
					return fmt.Errorf("the backup %s: %v", f+s, err)
				}
			}
		}
	}
	return nil
}

func checkAwk(_ *bashChecker, inv *invocation, kinds []optKind) error {
	if len(inv.operands) == 0 {
		return errors.New("awk without a program")
	}
	if inv.opGlob[0] {
		return errors.New("awk with a pattern as its program")
	}
	kinds[0] = optText
	return checkAwkProgram(inv.operands[0])
}

// tarOldStyle turns tar's old-style first argument ("czf x.tgz") into
// options: each letter that takes a value takes the next word.
func tarOldStyle(args []string, globs []bool) ([]string, []bool) {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return args, globs
	}
	var out []string
	var og []bool
	rest, rg := args[1:], globs[1:]
	for _, c := range args[0] {
		out, og = append(out, "-"+string(c)), append(og, globs[0])
		if strings.ContainsRune("bfFgHIKLNTVXC", c) && len(rest) > 0 {
			out, og = append(out, rest[0]), append(og, rg[0])
			rest, rg = rest[1:], rg[1:]
		}
	}
	return append(out, rest...), append(og, rg...)
}

func checkTar(_ *bashChecker, inv *invocation, kinds []optKind) error {
	if inv.has("-x", "--extract", "--get") {
		return errors.New("tar -x is not allowed (an archive can hold symbolic links and paths the check cannot see); list it with tar -t")
	}
	create := inv.has("-c", "--create")
	if !create && !inv.has("-t", "--list") {
		return errors.New("tar needs -c or -t")
	}
	for i, o := range inv.opts {
		if o.name == "-f" || o.name == "--file" {
			if strings.Contains(o.value, ":") && !inv.has("--force-local") {
				return fmt.Errorf("tar -f %s names a remote archive", o.value)
			}
			if create {
				inv.opts[i].kind = optWrite
			}
		}
	}
	if !create {
		_ = textOperands(nil, inv, kinds) // member names; it cannot fail
		return nil
	}
	for _, op := range inv.operands {
		if strings.HasPrefix(op, "@") {
			// GNU tar adds the file @x; BSD tar (macOS's) the members of
			// the archive x, wherever it is
			return fmt.Errorf("tar -c %s is not allowed (the BSD tar of macOS adds the members of another archive); name the files", op)
		}
	}
	return nil
}

// checkFind reads find's command line: the start paths (checked as paths),
// then the expression. Tests taking a pattern (-name, -path, -regex …) or a
// number take text; -newer and -samefile take a file (a path). -exec,
// -execdir, -ok and -okdir run a command on what find finds: allowed only
// for commands that read (findExecReaders), checked as if {} were each
// start path (what find finds lies below them, and find follows no
// symbolic link: -L and -follow are refused). Anything else is checked as a
// path.
func checkFind(ck *bashChecker, args []bashWord) error {
	i := 0
	var starts []string
	for i < len(args) {
		a := args[i].lit
		if strings.HasPrefix(a, "-") && len(a) > 1 || a == "(" || a == "!" {
			break
		}
		starts = append(starts, a)
		if err := ck.plainWord(a, false); err != nil {
			return err
		}
		i++
	}
	if len(starts) == 0 {
		starts = []string{"."}
	}
	for ; i < len(args); i++ {
		a := args[i].lit
		switch {
		case findTextTests[a]:
			i++ // the pattern or number
		case findPathTests[a] || strings.HasPrefix(a, "-newer"):
			if i+1 < len(args) {
				i++
				if a == "-newermt" || strings.HasSuffix(a, "t") && strings.HasPrefix(a, "-newer") && len(a) == 8 {
					continue // -newerXt takes a date
				}
				if err := ck.checkPath(args[i].lit, false); err != nil {
					return err
				}
			}
		case a == "-exec" || a == "-execdir" || a == "-ok" || a == "-okdir":
			j := i + 1
			for j < len(args) && args[j].lit != ";" && args[j].lit != "+" {
				j++
			}
			if j >= len(args) {
				return fmt.Errorf("find %s without ; or +", a)
			}
			if err := ck.findExec(a, args[i+1:j], starts); err != nil {
				return err
			}
			i = j
		default:
			if err := ck.rawWord(a, false, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// findTextTests take one word that is not a path.
var findTextTests = set(`-name -iname -path -ipath -wholename -iwholename -regex -iregex -lname -ilname -type
	-xtype -perm -size -mtime -mmin -atime -amin -ctime -cmin -user -group -uid -gid -links -inum -maxdepth -mindepth
	-printf -fstype -used -regextype -context`)

// findPathTests take a file that find reads.
var findPathTests = set("-samefile -anewer -cnewer")

// findExecReaders may run from find -exec: they read the files find passes.
var findExecReaders = set("grep egrep fgrep cat head tail wc ls stat file md5sum sha256sum du nl basename dirname echo printf test [")

// findExec checks the command of find -exec: a reading command, with {}
// standing for every start path in turn.
func (ck *bashChecker) findExec(opt string, words []bashWord, starts []string) error {
	if len(words) == 0 {
		return fmt.Errorf("find %s without a command", opt)
	}
	name := words[0].lit
	if words[0].dynamic || !findExecReaders[name] {
		if err := ck.reachOnly(unwrapped{words: words}, 0); err != nil {
			return err
		}
		return fmt.Errorf("find %s %s is not allowed (only commands that read files may run from find)", opt, name)
	}
	for _, st := range starts {
		inner := make([]bashWord, len(words))
		for k, w := range words {
			inner[k] = w
			if strings.Contains(w.lit, "{}") {
				inner[k] = bashWord{raw: w.raw, lit: strings.ReplaceAll(w.lit, "{}", st), glob: -1}
			}
		}
		if err := ck.command(&bashCmd{words: inner}, 1); err != nil {
			return err
		}
	}
	return nil
}

// checkGo: go's flags are single words with one or two dashes (-o x, --o=x).
// -toolexec, -exec and -overlay are refused (they run a program or read a
// file mapping that swaps sources), -C is a directory, -o a file written.
func checkGo(ck *bashChecker, args []bashWord) error {
	inv := &invocation{name: "go"}
	for i, a := range args {
		if !strings.HasPrefix(a.lit, "-") || a.lit == "-" {
			continue
		}
		nm, val, eq := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a.lit, "-"), "-"), "=")
		if !eq && i+1 < len(args) {
			val = args[i+1].lit
		}
		switch nm {
		case "toolexec", "exec":
			return fmt.Errorf("go %s is not allowed (%s)", a.lit, whyRuns)
		case "overlay":
			return fmt.Errorf("go %s is not allowed (it replaces source files with files it names)", a.lit)
		case "C":
			inv.opts = append(inv.opts, parsedOpt{name: "-C", kind: optDir, value: val, has: true})
		case "o":
			if err := ck.checkPath(val, true); err != nil {
				return err
			}
		}
	}
	ck2, err := ck.withDirs("go", inv)
	if err != nil {
		return err
	}
	for _, a := range args {
		if err := ck2.rawWord(a.lit, false, false); err != nil {
			return err
		}
	}
	return nil
}

// checkGofmt: with -w, gofmt rewrites its operands.
func checkGofmt(ck *bashChecker, args []bashWord) error {
	write := slices.ContainsFunc(args, func(a bashWord) bool {
		return a.lit == "-w" || a.lit == "--w" || strings.HasPrefix(a.lit, "-w=")
	})
	for _, a := range args {
		if err := ck.rawWord(a.lit, write && !strings.HasPrefix(a.lit, "-"), false); err != nil {
			return err
		}
	}
	return nil
}

// jqValues are jq's options that take values (how many).
var jqValues = map[string]int{"--arg": 2, "--argjson": 2, "--slurpfile": 2, "--rawfile": 2, "--argfile": 2, "--indent": 1}

// checkJq parses jq's arguments (some options take two words) and checks
// its filter.
func checkJq(ck *bashChecker, args []bashWord) error {
	flags := "nrjascSCMReh0"
	longFlags := []string{"null-input", "raw-input", "slurp", "compact-output", "raw-output", "raw-output0",
		"join-output", "nul-output", "ascii-output", "sort-keys", "color-output", "monochrome-output", "tab", "unbuffered",
		"stream", "stream-errors", "seq", "exit-status", "help", "version", "build-configuration"}
	var filter *bashWord
	argsMode, opts := false, true
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch n := jqValues[a.lit]; {
		case opts && a.lit == "--":
			opts = false
		case opts && n > 0:
			if i+n >= len(args) {
				return fmt.Errorf("jq %s needs %d values", a.lit, n)
			}
			if strings.HasSuffix(a.lit, "file") { // --slurpfile NAME FILE
				if err := ck.checkPath(args[i+2].lit, false); err != nil {
					return err
				}
			}
			i += n
		case opts && (a.lit == "--args" || a.lit == "--jsonargs"):
			argsMode = true
		case opts && strings.HasPrefix(a.lit, "--"):
			if !slices.Contains(longFlags, a.lit[2:]) {
				return fmt.Errorf("jq %s is not allowed (its program or modules come from files, or it is not an option this check knows)", a.lit)
			}
		case opts && strings.HasPrefix(a.lit, "-") && a.lit != "-":
			for _, c := range a.lit[1:] {
				if !strings.ContainsRune(flags, c) {
					return fmt.Errorf("jq -%c is not allowed (its program or modules come from files, or it is not an option this check knows)", c)
				}
			}
		case filter == nil:
			if a.glob >= 0 {
				return errors.New("jq with a pattern as its program")
			}
			filter = &args[i]
		case argsMode:
			// a string argument, not a file
		default:
			if err := ck.plainWord(a.lit, false); err != nil {
				return err
			}
		}
	}
	if filter == nil {
		return nil
	}
	return checkJqFilter(filter.lit)
}
