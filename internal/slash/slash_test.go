package slash

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// testTree is a small zerg-like tree: a runnable command with flags and a
// required flag, a parent with subcommands, a hidden command.
func testTree() *cobra.Command {
	root := &cobra.Command{Use: "zerg"}
	run := func(*cobra.Command, []string) error { return nil }
	rush := &cobra.Command{Use: "rush FEATURE", Short: "Run it", Args: cobra.ExactArgs(1), RunE: run}
	rush.Flags().IntP("workers", "w", 0, "workers at once")
	rush.Flags().Bool("resume", false, "continue")
	rush.Flags().String("graph", "", "graph `file`")
	status := &cobra.Command{Use: "status [FEATURE]", Short: "Show a run", Args: cobra.MaximumNArgs(1), RunE: run}
	status.Flags().BoolP("watch", "W", false, "redraw")
	stop := &cobra.Command{Use: "stop [FEATURE]", Short: "Stop a run", Args: cobra.MaximumNArgs(1), RunE: run}
	merge := &cobra.Command{Use: "merge [FEATURE] --into BRANCH", Short: "Merge it", Args: cobra.MaximumNArgs(1), RunE: run}
	merge.Flags().String("into", "", "the branch")
	_ = merge.MarkFlagRequired("into")
	graph := &cobra.Command{Use: "graph", Short: "Graphs", Args: cobra.ArbitraryArgs, RunE: run}
	validate := &cobra.Command{Use: "validate [FILE|FEATURE]", Short: "Check a graph", Args: cobra.MaximumNArgs(1), RunE: run}
	validate.Flags().Bool("strict", false, "warnings are errors")
	graph.AddCommand(validate)
	hook := &cobra.Command{Use: "hook", Hidden: true, RunE: run}
	root.AddCommand(rush, status, stop, merge, graph, hook)
	return root
}

func TestCheckInvocation(t *testing.T) {
	root := testTree()
	good := []string{
		"zerg rush $ARGUMENTS",
		"zerg rush FEATURE --resume",
		"zerg rush demo -w 4 --graph=g.json",
		"zerg rush FEATURE --workers 4 --resume",
		"zerg rush FEATURE [flags]",
		"zerg status",
		"zerg status -W | head -n 3", // the check stops at the pipe
		"zerg status FEATURE -W",
		"zerg merge FEATURE --into BRANCH",
		"zerg merge [FEATURE] --into BRANCH [flags]",
		"zerg graph $ARGUMENTS",
		"zerg graph validate [FILE|FEATURE] [flags]",
		"zerg graph validate --strict",
		"zerg rush --help",
	}
	for _, s := range good {
		if err := CheckInvocation(root, s); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
	bad := map[string]string{
		"zerg rush FEATURE --turbo":      "has no flag --turbo",
		"zerg rush FEATURE -x":           "has no flag -x",
		"zerg rush FEATURE --workers":    "needs a value",
		"zerg rush":                      "accepts 1 arg",
		"zerg rush a b":                  "accepts 1 arg",
		"zerg rsuh FEATURE":              "unknown command",
		"zerg status --json":             "has no flag --json",
		"zerg merge FEATURE":             "needs --into",
		"zerg graph valdiate x":          `has no subcommand "valdiate"`,
		"zerg graph validate --strcit":   "has no flag --strcit",
		"zerg hook":                      "not a user-facing command",
		"zerg --resume":                  "names no zerg command",
		"git status":                     `does not start with "zerg"`,
		"zerg graph validate --strict=1": "", // a value for a bool flag is fine
	}
	for s, want := range bad {
		err := CheckInvocation(root, s)
		switch {
		case want == "" && err != nil:
			t.Errorf("%q: %v", s, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%q: got %v, want an error containing %q", s, err, want)
		}
	}
}

func TestInvocations(t *testing.T) {
	text := "Run `zerg rush $ARGUMENTS` then `git log`.\n```\n$ zerg status\nls\n```\nNot code: zerg rush x. `zerg`\n"
	got := Invocations(text)
	if len(got) != 2 || got[0].Text != "zerg rush $ARGUMENTS" || got[0].Line != 1 || got[1].Text != "zerg status" || got[1].Line != 3 {
		t.Fatalf("got %+v", got)
	}
}

func installedSet(files []File) map[string]bool {
	m := map[string]bool{}
	for _, f := range files {
		m[f.Path] = true
	}
	return m
}

func TestRenderChecks(t *testing.T) {
	root := testTree()
	// No per-command notes: they name commands this small tree lacks.
	files, err := Render(root, Options{Exit: ExitCodes{0, 1, 2, 3, 4}, Templates: map[string]string{"notes.md.tmpl": ""}})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range files {
		paths = append(paths, f.Path)
	}
	// Every /zerg:NAME has its /z:NAME, and /z:st stands for /z:status.
	want := ".claude/commands/z/graph.md .claude/commands/z/merge.md .claude/commands/z/rush.md .claude/commands/z/st.md " +
		".claude/commands/z/status.md .claude/commands/z/stop.md " +
		".claude/commands/zerg/graph.md .claude/commands/zerg/merge.md .claude/commands/zerg/rush.md .claude/commands/zerg/status.md .claude/commands/zerg/stop.md " +
		".claude/zerg/graph.md .claude/zerg/merge.md .claude/zerg/rush.md .claude/zerg/status.md .claude/zerg/stop.md"
	if got := strings.Join(paths, " "); got != want {
		t.Fatalf("files:\n%s\nwant\n%s", got, want)
	}
	inst := installedSet(files)
	for _, f := range files {
		for _, p := range CheckFile(root, f.Path, f.Content, inst) {
			t.Errorf("%s", p)
		}
	}
	rush := string(files[8].Content)
	if files[8].Path != CommandsDir+"/rush.md" {
		t.Fatal(files[8].Path)
	}
	for _, s := range []string{"allowed-tools: Bash(zerg rush:*), Read(.claude/zerg/rush.md)\n", "argument-hint: \"FEATURE [flags]\"\n", "Run `zerg rush $ARGUMENTS`", ".claude/zerg/rush.md"} {
		if !strings.Contains(rush, s) {
			t.Errorf("rush.md lacks %q:\n%s", s, rush)
		}
	}
}

func TestInstall(t *testing.T) {
	root := t.TempDir()
	read := func(p string) string {
		b, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			return "<" + err.Error() + ">"
		}
		return string(b)
	}
	write := func(p, s string) {
		if err := os.WriteFile(filepath.Join(root, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	actions := func(rs []Result) string {
		var b strings.Builder
		for _, r := range rs {
			b.WriteString(string(r.Action) + " " + r.Path + "\n")
		}
		return b.String()
	}
	install := func(files ...File) string {
		t.Helper()
		if err := Check(root); err != nil {
			t.Fatal(err)
		}
		rs, err := Install(root, files)
		if err != nil {
			t.Fatal(err)
		}
		return actions(rs)
	}
	a, b, c := CommandsDir+"/a.md", CommandsDir+"/b.md", DetailsDir+"/c.md"
	f := func(p, s string) File { return File{Path: p, Content: []byte(s)} }

	if got := install(f(a, "a1"), f(b, "b1"), f(c, "c1")); got != "created "+a+"\ncreated "+b+"\ncreated "+c+"\ncreated "+ManifestPath+"\n" {
		t.Fatalf("first:\n%s", got)
	}
	manifest := read(ManifestPath)
	// Again: nothing written.
	if got := install(f(a, "a1"), f(b, "b1"), f(c, "c1")); got != "exists "+a+"\nexists "+b+"\nexists "+c+"\nexists "+ManifestPath+"\n" {
		t.Fatalf("second:\n%s", got)
	}
	if read(ManifestPath) != manifest {
		t.Fatal("manifest rewritten")
	}
	// The user edits a; zerg's templates change for a and b: b is updated,
	// a is kept, and kept again by the next run.
	write(a, "mine")
	want := "kept " + a + "\nupdated " + b + "\nexists " + c + "\nupdated " + ManifestPath + "\n"
	if got := install(f(a, "a2"), f(b, "b2"), f(c, "c1")); got != want {
		t.Fatalf("third:\n%s", got)
	}
	if read(a) != "mine" || read(b) != "b2" {
		t.Fatalf("a=%q b=%q", read(a), read(b))
	}
	if got := install(f(a, "a2"), f(b, "b2"), f(c, "c1")); got != "kept "+a+"\nexists "+b+"\nexists "+c+"\nexists "+ManifestPath+"\n" {
		t.Fatalf("fourth:\n%s", got)
	}
	// The user reverts a to zerg's last version: it is zerg's again.
	write(a, "a1")
	if got := install(f(a, "a2"), f(b, "b2"), f(c, "c1")); !strings.HasPrefix(got, "updated "+a+"\n") || read(a) != "a2" {
		t.Fatalf("revert:\n%s", got)
	}
	// The user deletes b: it stays deleted. c's command is gone: c is removed;
	// an edited file of a gone command is kept.
	if err := os.Remove(filepath.Join(root, b)); err != nil {
		t.Fatal(err)
	}
	write(a, "mine again")
	want = "skipped " + b + "\nkept " + a + "\nremoved " + c + "\nupdated " + ManifestPath + "\n"
	if got := install(f(b, "b2")); got != want {
		t.Fatalf("fifth:\n%s\nwant\n%s", got, want)
	}
	if read(a) != "mine again" || !strings.Contains(read(b), "no such file") || !strings.Contains(read(c), "no such file") {
		t.Fatalf("a=%q b=%q c=%q", read(a), read(b), read(c))
	}
	// A file zerg never wrote is the user's.
	write(CommandsDir+"/d.md", "theirs")
	if got := install(f(b, "b2"), f(CommandsDir+"/d.md", "d1")); !strings.Contains(got, "kept "+CommandsDir+"/d.md\n") || read(CommandsDir+"/d.md") != "theirs" {
		t.Fatalf("foreign:\n%s", got)
	}
	// A manifest that is not JSON stops init before anything is written.
	write(ManifestPath, "{")
	if err := Check(root); err == nil || !strings.Contains(err.Error(), ManifestPath) {
		t.Fatalf("check: %v", err)
	}
	// So does a file where a directory must be.
	other := t.TempDir()
	if err := os.MkdirAll(filepath.Join(other, ".claude/commands"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, CommandsDir), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Check(other); err == nil || !strings.Contains(err.Error(), CommandsDir+" exists but is not a directory") {
		t.Fatalf("check: %v", err)
	}
}

// A committed manifest comes from whoever wrote the repository: one that
// names a file outside zerg's slash command directories is refused before
// anything is read or removed. The control is the same manifest with a
// name zerg installs, which Install accepts.
func TestInstallRefusesAManifestNamingOtherFiles(t *testing.T) {
	parent := t.TempDir()
	root := filepath.Join(parent, "repo")
	victim := filepath.Join(parent, "victim.txt")
	if err := os.MkdirAll(filepath.Join(root, ".zerg"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(victim, []byte("predictable\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	write := func(entry string) {
		b, _ := json.Marshal(manifest{Files: map[string]string{entry: sum([]byte("predictable\n"))}})
		if err := os.WriteFile(filepath.Join(root, ManifestPath), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, bad := range []string{"../victim.txt", ".claude/commands/zerg/../../../../victim.txt", "/etc/passwd", ".claude/settings.json", "README.md"} {
		write(bad)
		if err := Check(root); err == nil {
			t.Errorf("Check accepted a manifest naming %q", bad)
		}
		if _, err := Install(root, nil); err == nil {
			t.Errorf("Install accepted a manifest naming %q", bad)
		}
		if _, err := os.Stat(victim); err != nil {
			t.Fatalf("the file outside the repository is gone after a manifest naming %q: %v", bad, err)
		}
	}
	write(CommandsDir + "/gone.md")
	if _, err := Install(root, nil); err != nil {
		t.Fatalf("control: a manifest naming a file zerg installs is refused: %v", err)
	}
}

// The allowed tools of a command file are checked against its instructions
// both ways. The control is the same file with one rule removed, one added,
// or one in a form Claude Code does not match: each is caught.
func TestCheckAllowedTools(t *testing.T) {
	body := "Ask, then with the Write tool write `.zerg/specs/FEATURE/idea.md`.\n" +
		"Run `zerg plan $ARGUMENTS --from .zerg/specs/FEATURE/idea.md` with the Bash tool, then `zerg status --json`.\n" +
		"Read `.claude/zerg/plan.md` only when needed.\n"
	file := func(rules string) string {
		return "---\ndescription: x\nallowed-tools: " + rules + "\n---\n" + body
	}
	good := "Bash(zerg plan:*), Bash(zerg status:*), Edit(.zerg/specs/*/idea.md), Read(.claude/zerg/plan.md)"
	if probs := CheckAllowedTools("plan.md", file(good)); len(probs) != 0 {
		t.Fatalf("the right rules: %v", probs)
	}
	if probs := CheckAllowedTools("plan.md", file("Bash(zerg plan:*), Bash(zerg status:*), Edit(.zerg/**), Read(.claude/zerg/*.md)")); len(probs) != 0 {
		t.Fatalf("wider globs still cover the uses: %v", probs)
	}
	bad := map[string]string{
		"Bash(zerg status:*), Edit(.zerg/specs/*/idea.md), Read(.claude/zerg/plan.md)": "zerg plan $ARGUMENTS --from .zerg/specs/FEATURE/idea.md`: the instructions ask for running it",
		"Bash(zerg plan:*), Bash(zerg status:*), Read(.claude/zerg/plan.md)":           ".zerg/specs/FEATURE/idea.md`: the instructions ask for writing it",
		"Bash(zerg plan:*), Bash(zerg status:*), Edit(.zerg/specs/*/idea.md)":          ".claude/zerg/plan.md`: the instructions ask for reading it",
		good + ", Bash(zerg rush:*)": "Bash(zerg rush:*)`: allowed-tools grants what the instructions never ask for",
		good + ", Bash":              "`Bash`: allowed-tools grants",
		"Bash(zerg plan:*), Bash(zerg status:*), Write(.zerg/specs/*/idea.md), Read(.claude/zerg/plan.md)":                "the instructions ask for writing it",
		"Bash(zerg plan:*), Bash(zerg status:*), Edit(.zerg/specs/*/requirements.md), Read(.claude/zerg/plan.md)":         "the instructions ask for writing it",
		"Bash(zerg plan:*), Bash(zerg status:*), Edit(.zerg/specs/*/idea.md), Edit(.zerg/**), Read(.claude/zerg/plan.md)": "", // both cover the write: not unused
	}
	for rules, want := range bad {
		var msgs []string
		for _, p := range CheckAllowedTools("plan.md", file(rules)) {
			msgs = append(msgs, p.String())
		}
		all := strings.Join(msgs, "\n")
		switch {
		case want == "" && all != "":
			t.Errorf("%s: %s", rules, all)
		case want != "" && !strings.Contains(all, want):
			t.Errorf("%s: got\n%s\nwant a problem containing %q", rules, all, want)
		}
	}
}

func TestAliasesOf(t *testing.T) {
	var got []string
	for _, a := range AliasesOf(testTree()) {
		got = append(got, a.Name+"="+a.Command)
	}
	if want := "graph=graph merge=merge rush=rush status=status stop=stop st=status"; strings.Join(got, " ") != want {
		t.Fatalf("got %v, want %s", got, want)
	}
}

// InstallTree is Render then Install: every rendered file is created, and a
// second run finds them all up to date.
func TestInstallTree(t *testing.T) {
	root := t.TempDir()
	opt := Options{Exit: ExitCodes{0, 1, 2, 3, 4}, Templates: map[string]string{"notes.md.tmpl": ""}}
	files, err := Render(testTree(), opt)
	if err != nil {
		t.Fatal(err)
	}
	count := func(results []Result, a Action) int {
		n := 0
		for _, r := range results {
			if r.Action == a && r.Path != ManifestPath {
				n++
			}
		}
		return n
	}
	first, err := InstallTree(root, testTree(), opt)
	if err != nil || count(first, Created) != len(files) {
		t.Fatalf("first install: %v, %+v; want %d created", err, first, len(files))
	}
	again, err := InstallTree(root, testTree(), opt)
	if err != nil || count(again, Exists) != len(files) {
		t.Fatalf("second install: %v, %+v; want %d up to date", err, again, len(files))
	}
	none := t.TempDir()
	if res, err := InstallTree(none, nil, opt); err != nil || res != nil {
		t.Errorf("no tree: %+v, %v; want nothing", res, err)
	}
	if err := CheckTree(none, nil); err != nil {
		t.Errorf("no tree to check: %v", err)
	}
	if entries, _ := os.ReadDir(none); len(entries) != 0 {
		t.Errorf("no tree wrote %d entries", len(entries))
	}
	if err := os.MkdirAll(filepath.Dir(filepath.Join(none, filepath.FromSlash(CommandsDir))), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(none, filepath.FromSlash(CommandsDir)), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := CheckTree(none, testTree()); err == nil {
		t.Error("a file where the commands directory must be: no error")
	}
}
