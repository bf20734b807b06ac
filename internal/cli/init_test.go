package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/security"
	"github.com/zergrush/zerg/internal/slash"
)

// slashRepo is a git repository with a config that skips the security rules
// fetch (no network in tests), ready for zerg init.
func slashRepo(t *testing.T) *testRepo {
	t.Helper()
	r := newTestRepo(t)
	r.write(".zerg/config.yaml", "security_rules:\n  enabled: false\n")
	return r
}

// runInitAt runs `zerg init` through the real command tree with dir as the
// working directory and returns its stdout.
func runInitAt(t *testing.T, dir string) string {
	t.Helper()
	var out, errb bytes.Buffer
	a := newApp(&out, &errb)
	a.getwd = func() (string, error) { return dir, nil }
	root := newRootCmd(a)
	root.SetArgs([]string{"init"})
	if _, err := root.ExecuteContextC(context.Background()); err != nil {
		t.Fatalf("zerg init: %v\n%s%s", err, out.String(), errb.String())
	}
	return out.String()
}

// slashFiles reads every file zerg init may write for the slash commands.
func slashFiles(t *testing.T, root string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	for _, dir := range []string{".claude", ".zerg/slash-commands.json"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			rel, _ := filepath.Rel(root, p)
			files[filepath.ToSlash(rel)] = b
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// TestInitSlashCommandsCallRealCommands is the promise of the slash commands:
// zerg init installs one /zerg: command (and its details) per user-facing
// command of the real tree, and every `zerg ...` line in every installed
// file, every allowed-tools rule and every /zerg:, /z: and details reference
// names a command that exists, with flags that command has.
func TestInitSlashCommandsCallRealCommands(t *testing.T) {
	r := slashRepo(t)
	runInitAt(t, r.dir)
	files := slashFiles(t, r.dir)
	tree := newRootCmd(newApp(io.Discard, io.Discard))

	// The list comes from the tree: every command a user can see (cobra's
	// help and completion aside) has its /zerg: file and its details, and
	// nothing else is there.
	var want []string
	for _, c := range tree.Commands() {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		want = append(want, c.Name())
	}
	var got, details []string
	installed := map[string]bool{}
	for p := range files {
		installed[p] = true
		if name, ok := strings.CutPrefix(p, slash.CommandsDir+"/"); ok {
			got = append(got, strings.TrimSuffix(name, ".md"))
		}
		if name, ok := strings.CutPrefix(p, slash.DetailsDir+"/"); ok {
			details = append(details, strings.TrimSuffix(name, ".md"))
		}
	}
	sort.Strings(want)
	sort.Strings(got)
	sort.Strings(details)
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(details, want) {
		t.Fatalf("installed /zerg: commands %v, details %v; the tree has %v", got, details, want)
	}
	// Every /zerg:NAME has its /z:NAME; /z:st stands for /zerg:status.
	var shortcuts []string
	for p := range files {
		if name, ok := strings.CutPrefix(p, slash.AliasDir+"/"); ok {
			shortcuts = append(shortcuts, strings.TrimSuffix(name, ".md"))
		}
	}
	sort.Strings(shortcuts)
	wantShort := append([]string{"st"}, want...)
	sort.Strings(wantShort)
	if !reflect.DeepEqual(shortcuts, wantShort) {
		t.Errorf("installed /z: shortcuts %v, want %v", shortcuts, wantShort)
	}
	for _, a := range slash.Aliases {
		has := installed[slash.AliasDir+"/"+a.Name+".md"]
		c, _, err := tree.Find([]string{a.Command})
		if inTree := err == nil && c != tree; inTree != has {
			t.Errorf("/z:%s installed: %v; zerg %s in the tree: %v", a.Name, has, a.Command, inTree)
		}
	}

	// Every reference in every file checks out against the tree.
	checked := 0
	for p, b := range files {
		if !strings.HasSuffix(p, ".md") {
			continue
		}
		for _, prob := range slash.CheckFile(tree, p, b, installed) {
			t.Errorf("%s", prob)
		}
		invs := slash.Invocations(string(b))
		checked += len(invs)
		// A command file runs its own command, with the user's words
		// (/zerg:plan adds --from with the idea the session wrote).
		if name, ok := strings.CutPrefix(p, slash.CommandsDir+"/"); ok {
			self := "zerg " + strings.TrimSuffix(name, ".md") + " $ARGUMENTS"
			found := false
			for _, inv := range invs {
				found = found || inv.Text == self || strings.HasPrefix(inv.Text, self+" ")
			}
			if !found {
				t.Errorf("%s does not run `%s`", p, self)
			}
		}
		if bytes.Contains(b, []byte("!`")) {
			t.Errorf("%s holds \"!`\", which Claude Code runs as a shell command", p)
		}
	}
	if checked < 3*len(want) {
		t.Fatalf("only %d zerg invocations checked in %d files", checked, len(files))
	}
	if rush := string(files[slash.CommandsDir+"/rush.md"]); !strings.Contains(rush, "allowed-tools: Bash(zerg rush:*), Bash(zerg status:*), Bash(zerg tasks:*), Edit(.zerg/tasks/*/*/**), Agent, Read(.claude/zerg/rush.md)\n") {
		t.Errorf("rush.md does not pre-approve exactly the commands it runs:\n%s", rush)
	}
	plan := string(files[slash.CommandsDir+"/plan.md"])
	if !strings.Contains(plan, "allowed-tools: Bash(zerg plan:*), Edit(.zerg/specs/*/idea.md), Read(.zerg/specs/*/idea.md), Read(.claude/zerg/plan.md)\n") ||
		!strings.Contains(plan, "`zerg plan $ARGUMENTS --from .zerg/specs/FEATURE/idea.md`") {
		t.Errorf("plan.md does not write the idea and plan from it:\n%s", plan)
	}

	// Control for the allowed-tools check: each installed command file with
	// one of its rules removed is caught (what the instructions ask for is
	// no longer allowed), and so is one with a rule its instructions never
	// use.
	removed := 0
	for p, b := range files {
		if !strings.HasPrefix(p, ".claude/commands/") {
			continue
		}
		text := string(b)
		i := strings.Index(text, "\nallowed-tools: ")
		line, _, _ := strings.Cut(text[i+1:], "\n")
		rules := strings.Split(strings.TrimPrefix(line, "allowed-tools: "), ", ")
		for k := range rules {
			less := slices.Delete(slices.Clone(rules), k, k+1)
			cut := strings.Replace(text, line, "allowed-tools: "+strings.Join(less, ", "), 1)
			if probs := slash.CheckFile(tree, p, []byte(cut), installed); len(probs) == 0 {
				t.Errorf("%s without %s: the check finds nothing", p, rules[k])
			}
			removed++
		}
		more := strings.Replace(text, line, line+", Bash(zerg cleanup:*)", 1)
		if !strings.Contains(p, "cleanup") && len(slash.CheckFile(tree, p, []byte(more), installed)) == 0 {
			t.Errorf("%s with Bash(zerg cleanup:*): the check finds nothing", p)
		}
	}
	if removed < 2*len(want) {
		t.Fatalf("only %d rules removed in the control", removed)
	}

	// Controls: the same checker catches a made-up flag, a misspelt
	// subcommand, a command that does not exist, a wrong allowed-tools rule
	// and a slash command that is not installed.
	broken := "---\nallowed-tools: Bash(zerg rsuh:*)\n---\n" +
		"Run `zerg rush FEATURE --turbo`, then `zerg graph valdiate FEATURE`,\n" +
		"`zerg nosuch` and /zerg:nosuch.\n"
	probs := slash.CheckFile(tree, "broken.md", []byte(broken), installed)
	var msgs []string
	for _, p := range probs {
		msgs = append(msgs, p.String())
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{"zerg rsuh", "has no flag --turbo", `has no subcommand "valdiate"`, `unknown command "nosuch"`, "/zerg:nosuch"} {
		if !strings.Contains(all, want) {
			t.Errorf("the checker missed %q; it found:\n%s", want, all)
		}
	}
	// And a template with a made-up flag is caught in every file it renders.
	core, err := slash.TemplateText("command.md.tmpl")
	if err != nil {
		t.Fatal(err)
	}
	opt := slashOptions()
	opt.Templates = map[string]string{"command.md.tmpl": core + "\nWhen unsure, run `zerg {{.Name}} --made-up-flag`.\n"}
	bad, err := slash.Render(tree, opt)
	if err != nil {
		t.Fatal(err)
	}
	caught := 0
	for _, f := range bad {
		for _, p := range slash.CheckFile(tree, f.Path, f.Content, installed) {
			if strings.Contains(p.Err, "has no flag --made-up-flag") {
				caught++
			}
		}
	}
	if cores := len(want) + len(slash.AliasesOf(tree)); caught != cores {
		t.Fatalf("a made-up flag in the template was caught in %d files, want %d", caught, cores)
	}
}

type fileState struct {
	content string
	mtime   time.Time
}

func snapshot(t *testing.T, root string) map[string]fileState {
	t.Helper()
	out := map[string]fileState{}
	for p, b := range slashFiles(t, root) {
		fi, err := os.Stat(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		out[p] = fileState{string(b), fi.ModTime()}
	}
	return out
}

// TestInitSlashIdempotent: a second zerg init writes nothing.
func TestInitSlashIdempotent(t *testing.T) {
	r := slashRepo(t)
	first := runInitAt(t, r.dir)
	if !strings.Contains(first, "created  .claude/commands/zerg/ (") || !strings.Contains(first, "created  .zerg/slash-commands.json") {
		t.Fatalf("first init:\n%s", first)
	}
	before := snapshot(t, r.dir)
	// Old enough mtimes that a rewrite within the same clock tick shows.
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	for p := range before {
		if err := os.Chtimes(filepath.Join(r.dir, p), old, old); err != nil {
			t.Fatal(err)
		}
	}
	before = snapshot(t, r.dir)
	second := runInitAt(t, r.dir)
	if !strings.Contains(second, "nothing changed") || strings.Contains(second, "created") || strings.Contains(second, "updated") {
		t.Fatalf("second init:\n%s", second)
	}
	if !strings.Contains(second, "exists   .claude/commands/zerg/ (") {
		t.Fatalf("second init does not report the slash commands:\n%s", second)
	}
	if after := snapshot(t, r.dir); !reflect.DeepEqual(after, before) {
		for p := range after {
			if after[p] != before[p] {
				t.Errorf("%s changed", p)
			}
		}
		t.Fatal("the second init wrote files")
	}
}

// TestInitSlashUpdatesOnlyUntouchedFiles: when zerg's templates change, a
// file zerg wrote and the user left alone is updated; a file the user edited
// is kept and reported, again at every run.
func TestInitSlashUpdatesOnlyUntouchedFiles(t *testing.T) {
	r := slashRepo(t)
	// An older zerg, whose command template said something else.
	core, err := slash.TemplateText("command.md.tmpl")
	if err != nil {
		t.Fatal(err)
	}
	saved := slashOptions
	t.Cleanup(func() { slashOptions = saved })
	slashOptions = func() slash.Options {
		o := saved()
		o.Templates = map[string]string{"command.md.tmpl": strings.Replace(core, "in a few lines", "in one line", 1)}
		return o
	}
	runInitAt(t, r.dir)
	rush := filepath.Join(r.dir, slash.CommandsDir, "rush.md")
	edited := "---\ndescription: our own rush\n---\nRun `zerg rush $ARGUMENTS --workers 2`.\n"
	if err := os.WriteFile(rush, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	// This zerg.
	slashOptions = saved
	out := runInitAt(t, r.dir)
	if !strings.Contains(out, "kept     .claude/commands/zerg/rush.md (you edited it;") {
		t.Fatalf("the edited file is not reported:\n%s", out)
	}
	if !strings.Contains(out, "updated  .claude/commands/zerg/status.md (zerg's new version; you had not edited it)") {
		t.Fatalf("the untouched file is not reported as updated:\n%s", out)
	}
	if b, _ := os.ReadFile(rush); string(b) != edited {
		t.Fatalf("the edited file was changed:\n%s", b)
	}
	status, _ := os.ReadFile(filepath.Join(r.dir, slash.CommandsDir, "status.md"))
	if !strings.Contains(string(status), "in a few lines") {
		t.Fatalf("status.md was not updated:\n%s", status)
	}
	// Next run: nothing to write, the edit is still reported.
	out = runInitAt(t, r.dir)
	if !strings.Contains(out, "nothing changed") || !strings.Contains(out, "kept     .claude/commands/zerg/rush.md") {
		t.Fatalf("third init:\n%s", out)
	}
}

// Everything zerg init writes can be committed through the pre-commit hook
// it installs: the secret scan finds nothing in it. The control is the
// manifest's earlier form (bare hex digests), which the scan flags.
func TestInitWritesNothingTheSecretScanFlags(t *testing.T) {
	r := slashRepo(t)
	runInitAt(t, r.dir)
	sc, err := security.NewScanner()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, dir := range []string{".zerg", ".claude"} {
		err := filepath.WalkDir(filepath.Join(r.dir, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			n++
			for _, f := range sc.ScanFile(p, data) {
				t.Errorf("%s: the secret scan flags what zerg init wrote: %s line %d", p, f.RuleID, f.Line)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if n < 10 {
		t.Fatalf("only %d files scanned; init wrote less than expected", n)
	}
	digest := sha256.Sum256([]byte("control"))
	bare := fmt.Sprintf("{\n  \"files\": {\n    \".claude/commands/zerg/mockapi.md\": \"%x\"\n  }\n}\n", digest)
	if len(sc.ScanFile("slash-commands.json", []byte(bare))) == 0 {
		t.Fatal("control: a bare hex digest after mockapi.md is not flagged, so this test checks nothing")
	}
}

// modesMissing returns the isolation modes a text that compares where
// workers run (it names --mode, subprocess mode or a git worktree) leaves
// out.
func modesMissing(text string) []string {
	if !strings.Contains(text, "--mode") && !strings.Contains(text, "git worktree") && !strings.Contains(text, config.ModeSubprocess) {
		return nil
	}
	var missing []string
	for _, m := range config.Modes {
		if !strings.Contains(text, m) {
			missing = append(missing, m)
		}
	}
	return missing
}

// TestInitSlashDetailsNameEveryMode: a details file that says where workers
// run names every mode zerg has (config.Modes), so none still describes a
// git worktree as the only isolation. The control is the rush help as it
// was before container mode was named in it.
func TestInitSlashDetailsNameEveryMode(t *testing.T) {
	r := slashRepo(t)
	runInitAt(t, r.dir)
	n := 0
	for p, b := range slashFiles(t, r.dir) {
		if !strings.HasPrefix(p, slash.DetailsDir+"/") {
			continue
		}
		if missing := modesMissing(string(b)); len(missing) > 0 {
			t.Errorf("%s says where workers run but does not name %v", p, missing)
		}
		if modesMissing(string(b)) == nil && strings.Contains(string(b), "--mode") {
			n++
		}
	}
	if n < 2 { // rush and check take --mode
		t.Fatalf("only %d details files name --mode", n)
	}
	old := "N real Claude Code workers at once, each in its own\ngit worktree outside your working tree\n" +
		"| `--mode string` | isolation: sandbox or subprocess (default from config) |"
	if missing := modesMissing(old); !slices.Equal(missing, []string{config.ModeContainer, config.ModeTasks}) {
		t.Fatalf("control: the old rush help is missing %v, want [container tasks]", missing)
	}
}

// TestInitSlashUpdatesTheFilesOfAnOlderZerg: files the zerg before /z:NAME,
// the session-side /zerg:plan and container mode wrote
// (testdata/slash-before-modes, as that zerg wrote them, with its manifest)
// are updated by this zerg init when untouched; the one the user edited is
// kept; the new shortcuts are created; a second init changes nothing.
func TestInitSlashUpdatesTheFilesOfAnOlderZerg(t *testing.T) {
	r := slashRepo(t)
	old := map[string]string{
		slash.CommandsDir + "/plan.md":   "plan.md",
		slash.AliasDir + "/plan.md":      "z-plan.md",
		slash.DetailsDir + "/rush.md":    "rush-details.md",
		slash.CommandsDir + "/status.md": "status.md",
	}
	read := func(p string) string {
		b, err := os.ReadFile(filepath.Join(r.dir, p))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	hashes := map[string]string{}
	for dst, src := range old {
		b, err := os.ReadFile(filepath.Join("testdata", "slash-before-modes", src))
		if err != nil {
			t.Fatal(err)
		}
		r.write(dst, string(b))
		s := sha256.Sum256(b)
		hashes[dst] = fmt.Sprintf("sha256:%x", s)
	}
	m, _ := json.Marshal(map[string]any{"note": "written by an older zerg", "files": hashes})
	r.write(slash.ManifestPath, string(m))
	if b := read(slash.CommandsDir + "/plan.md"); !strings.Contains(b, "allowed-tools: Bash(zerg plan:*)\n") {
		t.Fatalf("the fixture is not the old plan.md:\n%s", b)
	}
	edited := strings.Replace(read(slash.CommandsDir+"/status.md"), "in a few lines", "in one line", 1)
	r.write(slash.CommandsDir+"/status.md", edited)

	out := runInitAt(t, r.dir)
	for _, want := range []string{
		"updated  .claude/commands/zerg/plan.md (zerg's new version; you had not edited it)",
		"updated  .claude/commands/z/plan.md (zerg's new version; you had not edited it)",
		"updated  .claude/zerg/rush.md (zerg's new version; you had not edited it)",
		"kept     .claude/commands/zerg/status.md (you edited it; zerg's new version is not written over your edits)",
		"updated  .zerg/slash-commands.json",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("init does not say %q:\n%s", want, out)
		}
	}
	if !regexp.MustCompile(`created  \.claude/commands/z/ \(\d+ shortcuts: .*\bstatus\b`).MatchString(out) {
		t.Errorf("the new /z: shortcuts are not created:\n%s", out)
	}
	if got := read(slash.CommandsDir + "/status.md"); got != edited {
		t.Errorf("the edited status.md was changed:\n%s", got)
	}
	for p, want := range map[string]string{
		slash.CommandsDir + "/plan.md": "Edit(.zerg/specs/*/idea.md)",
		slash.AliasDir + "/plan.md":    "`zerg plan $ARGUMENTS --from .zerg/specs/FEATURE/idea.md`",
		slash.DetailsDir + "/rush.md":  "in a container",
	} {
		if got := read(p); !strings.Contains(got, want) {
			t.Errorf("%s lacks %q after the update:\n%s", p, want, got)
		}
	}
	if again := runInitAt(t, r.dir); strings.Contains(again, "updated") || strings.Contains(again, "created") {
		t.Errorf("a second init changed files:\n%s", again)
	}
}
