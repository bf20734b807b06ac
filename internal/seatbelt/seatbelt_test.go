package seatbelt

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/pathx"
)

// spec is a worker's Spec laid out as zerg would lay it out on a Mac
// (made-up paths, resolved as the Mac resolves them).
func spec() Spec {
	run := "/Users/alice/Library/Application Support/zerg/runs/r1/a1"
	return Spec{
		Workspace:     "/Users/alice/Library/Application Support/zerg/ws/t1",
		Home:          run + "/home",
		Tmp:           run + "/tmp",
		ReadOnly:      append(DefaultReadOnly(), "/Users/alice/.local/share/claude/versions/2.1.332"),
		GatewaySocket: run + "/gw.sock",
		RealHome:      "/Users/alice",
	}
}

func profileForms(t *testing.T, s Spec) []node {
	t.Helper()
	text, err := Profile(s)
	if err != nil {
		t.Fatalf("Profile: %v", err)
	}
	forms, err := parse(text)
	if err != nil {
		t.Fatalf("the profile does not read as SBPL: %v\n%s", err, text)
	}
	return forms
}

// operations are a rule's operation names: the atoms after allow or deny.
func operations(rule node) []string {
	var ops []string
	for _, n := range rule.list[1:] {
		if n.isList {
			break
		}
		ops = append(ops, n.atom)
	}
	return ops
}

// ruleFilters are a rule's filters: the lists after its operations.
func ruleFilters(rule node) []node {
	var out []node
	for _, n := range rule.list[1:] {
		if n.isList {
			out = append(out, n)
		}
	}
	return out
}

// arg is a one-string filter's string: "/usr" of (subpath "/usr").
func arg(t *testing.T, f node) string {
	t.Helper()
	if len(f.list) != 2 || f.list[1].str == nil {
		t.Fatalf("filter %v is not (kind \"string\")", f)
	}
	return *f.list[1].str
}

// allows are the allow rules that name an operation with prefix.
func allows(forms []node, prefix string) []node {
	var out []node
	for _, f := range forms {
		if f.head() == "allow" && slices.ContainsFunc(operations(f), func(op string) bool { return strings.HasPrefix(op, prefix) }) {
			out = append(out, f)
		}
	}
	return out
}

func TestProfileDeniesByDefaultFirst(t *testing.T) {
	forms := profileForms(t, spec())
	if len(forms) < 2 || forms[0].String() != "(version 1)" || forms[1].String() != "(deny default)" {
		t.Fatalf("the profile must open with (version 1) (deny default), got %v", forms[:min(2, len(forms))])
	}
	for i, f := range forms[1:] {
		switch f.head() {
		case "allow":
			if n := allowsDefault([]node{f}); n != nil {
				t.Errorf("form %d allows default: %v", i+1, n)
			}
		case "deny":
			if i != 0 && i != len(forms)-2 {
				t.Errorf("a deny other than the first and the last (the secrets): %v", f)
			}
		default:
			t.Errorf("form %d is neither allow nor deny: %v", i+1, f)
		}
	}
}

func TestProfileWritesOnlyUnderWorkspaceHomeAndTmp(t *testing.T) {
	s := spec()
	writes := allows(profileForms(t, s), "file-write")
	if len(writes) != 1 {
		t.Fatalf("want one file-write rule, got %v", writes)
	}
	var seen []string
	for _, f := range ruleFilters(writes[0]) {
		p := arg(t, f)
		switch {
		case f.head() == "literal" && p == "/dev/null":
		case f.head() == "subpath" && (pathx.Within(s.Workspace, p) || pathx.Within(s.Home, p) || pathx.Within(s.Tmp, p)):
			seen = append(seen, p)
		default:
			t.Errorf("a write outside the workspace, the private HOME and TMPDIR: %v", f)
		}
	}
	if want := []string{s.Home, s.Tmp, s.Workspace}; !slices.Equal(seen, dedupe(want)) {
		t.Errorf("writable subpaths %q, want %q", seen, dedupe(want))
	}
}

func TestProfileGatewaySocketIsTheOnlyWayOut(t *testing.T) {
	s := spec()
	forms := profileForms(t, s)
	network := allows(forms, "network")
	want := fmt.Sprintf("(allow network-outbound (remote unix-socket (path-literal %q)))", s.GatewaySocket)
	if len(network) != 1 || network[0].String() != want {
		t.Fatalf("network rules %v, want exactly %s", network, want)
	}
	for _, op := range []string{"system-socket", "mach-bootstrap", "iokit", "ipc-posix", "file-ioctl", "sysctl-write"} {
		if r := allows(forms, op); r != nil {
			t.Errorf("%s allowed: %v", op, r)
		}
	}
}

func TestProfileMachLookupsAreTheListedOnes(t *testing.T) {
	mach := allows(profileForms(t, spec()), "mach")
	if len(mach) != 1 || !slices.Equal(operations(mach[0]), []string{"mach-lookup"}) {
		t.Fatalf("want one mach-lookup rule, got %v", mach)
	}
	var names, want []string
	for _, f := range ruleFilters(mach[0]) {
		if f.head() != "global-name" {
			t.Errorf("a mach-lookup by other than its exact name: %v", f)
		}
		names = append(names, arg(t, f))
	}
	for _, m := range MachServices {
		if m.Why == "" {
			t.Errorf("%s allowed without a reason", m.Name)
		}
		want = append(want, m.Name)
	}
	if !slices.Equal(names, want) {
		t.Errorf("mach-lookups %q, want %q", names, want)
	}
	for _, n := range names {
		if strings.Contains(strings.ToLower(n), "secur") || strings.Contains(n, "trustd") || strings.Contains(n, "dnssd") {
			t.Errorf("a keychain, trust or DNS service allowed: %s", n)
		}
	}
}

func TestProfileNeverOpensTheRealHomeOrItsSecrets(t *testing.T) {
	s := spec()
	forms := profileForms(t, s)
	for _, f := range forms {
		if f.head() != "allow" {
			continue
		}
		for _, flt := range ruleFilters(f) {
			if flt.head() != "subpath" {
				continue
			}
			p := arg(t, flt)
			if pathx.Within(p, s.RealHome) {
				t.Errorf("%v opens the real home", f)
			}
			for _, secret := range s.secrets() {
				if pathx.Within(p, secret) || pathx.Within(secret, p) {
					t.Errorf("%v opens the secret %s", f, secret)
				}
			}
		}
	}
	last := forms[len(forms)-1]
	if !slices.Equal(operations(last), []string{"file-read*", "file-write*"}) || last.head() != "deny" {
		t.Fatalf("the last rule must deny the secrets, got %v", last)
	}
	var denied []string
	for _, f := range ruleFilters(last) {
		denied = append(denied, arg(t, f))
	}
	for _, want := range []string{"/Users/alice/.ssh", "/Users/alice/.aws", "/Users/alice/Library/Keychains", "/Library/Keychains", "/Users/alice/.claude"} {
		if !slices.Contains(denied, want) {
			t.Errorf("%s is not denied: %q", want, denied)
		}
	}
}

func TestProfileMetadataOnlyOnAncestors(t *testing.T) {
	s := spec()
	meta := allows(profileForms(t, s), "file-read-metadata")
	if len(meta) != 1 {
		t.Fatalf("want one file-read-metadata rule, got %v", meta)
	}
	allowed := slices.Concat(s.ReadOnly, []string{s.Workspace, s.Home, s.Tmp, s.GatewaySocket}, devices.readWrite, devices.readOnly)
	for _, f := range ruleFilters(meta[0]) {
		p := arg(t, f)
		if f.head() != "literal" {
			t.Errorf("metadata of a whole tree: %v", f)
		}
		if !slices.ContainsFunc(allowed, func(a string) bool { return pathx.Below(p, a) }) {
			t.Errorf("metadata of %s, which is above no allowed path", p)
		}
	}
}

func TestProfileExecsOnlyWhatItReads(t *testing.T) {
	forms := profileForms(t, spec())
	exec, read := allows(forms, "process-exec"), allows(forms, "file-read*")
	if len(exec) != 1 || len(read) != 1 {
		t.Fatalf("want one exec and one read rule, got %v %v", exec, read)
	}
	for _, f := range ruleFilters(exec[0]) {
		if !slices.ContainsFunc(ruleFilters(read[0]), func(r node) bool { return r.String() == f.String() }) {
			t.Errorf("exec of %v, which is not readable", f)
		}
	}
}

func TestProfileIsTheSameWhateverTheOrder(t *testing.T) {
	a, b := spec(), spec()
	slices.Reverse(b.ReadOnly)
	b.ReadOnly = append(b.ReadOnly, "/usr")
	pa, err := Profile(a)
	if err != nil {
		t.Fatal(err)
	}
	pb, err := Profile(b)
	if err != nil {
		t.Fatal(err)
	}
	if pa != pb {
		t.Errorf("the same paths in another order give another profile")
	}
}

// An attacker who chooses a directory's name (a task id, a branch) must not
// be able to add a rule: the path is refused, and if it were not, the test
// reads the profile and names the rules the name added.
func TestProfileRefusesInjectionThroughAPath(t *testing.T) {
	attacks := []string{
		`")(allow default)("`,
		`"))(allow default)((subpath "`,
		`\")(allow default)(\"`,
		"x\n(allow default)",
		"x\x00y",
		"x\x7fy",
		"x\u0085y",
		"x\xffy",
	}
	fields := map[string]func(*Spec, string){
		"workspace":      func(s *Spec, p string) { s.Workspace = s.Workspace + "/" + p },
		"read-only[0]":   func(s *Spec, p string) { s.ReadOnly = []string{"/opt/" + p} },
		"gateway socket": func(s *Spec, p string) { s.GatewaySocket = "/Users/alice/sock" + p },
	}
	for field, set := range fields {
		for _, attack := range attacks {
			s := spec()
			set(&s, attack)
			text, err := Profile(s)
			var pe *PathError
			if errors.As(err, &pe) {
				if pe.Field != field {
					t.Errorf("%q in %s: refused as %s", attack, field, pe.Field)
				}
				if strings.ContainsAny(err.Error(), "\n\x00") {
					t.Errorf("the error is not one line: %q", err)
				}
				continue
			}
			if err != nil {
				t.Errorf("%q in %s: %v, want a *PathError", attack, field, err)
				continue
			}
			forms, perr := parse(text)
			if perr != nil {
				t.Errorf("%q in %s: accepted, and the profile no longer reads: %v", attack, field, perr)
				continue
			}
			if injected := allowsDefault(forms); injected != nil {
				t.Errorf("%q in %s: accepted, and it injected %v", attack, field, injected)
				continue
			}
			t.Errorf("%q in %s: accepted", attack, field)
		}
	}
}

// allowsDefault finds an (allow default) at any depth: an injected one may
// land among a rule's filters as well as at the top.
func allowsDefault(forms []node) *node {
	for _, f := range forms {
		if !f.isList {
			continue
		}
		if f.head() == "allow" && slices.Contains(operations(f), "default") {
			return &f
		}
		if n := allowsDefault(f.list); n != nil {
			return n
		}
	}
	return nil
}

func TestProfileRefusesPathsItCannotKeep(t *testing.T) {
	cases := []struct {
		name, field, reason string
		edit                func(*Spec)
	}{
		{"relative", "workspace", "absolute", func(s *Spec) { s.Workspace = "ws/t1" }},
		{"dot-dot", "workspace", "clean", func(s *Spec) { s.Workspace = "/Users/alice/ws/../.ssh" }},
		{"trailing slash", "tmp", "clean", func(s *Spec) { s.Tmp += "/" }},
		{"empty", "gateway socket", "empty", func(s *Spec) { s.GatewaySocket = "" }},
		{"root", "tmp", "whole file system", func(s *Spec) { s.Tmp = "/" }},
		{"/tmp link", "tmp", "/private/tmp", func(s *Spec) { s.Tmp = "/tmp/zerg" }},
		{"/var link", "home", "/private/var", func(s *Spec) { s.Home = "/var/folders/xy/T/zerg" }},
		{"real home read-only", "read-only[0]", "real home", func(s *Spec) { s.ReadOnly = []string{"/Users"} }},
		{"real home as HOME", "home", "real home", func(s *Spec) { s.Home = s.RealHome }},
		{"secret read-only", "read-only[0]", ".ssh", func(s *Spec) { s.ReadOnly = []string{"/Users/alice/.ssh/keys"} }},
		{"CLI in ~/.claude", "read-only[0]", ".claude", func(s *Spec) { s.ReadOnly = []string{"/Users/alice/.claude/local"} }},
		{"keychain workspace", "workspace", "Keychains", func(s *Spec) { s.Workspace = "/Library/Keychains/ws" }},
		{"toolchain writable", "workspace", "read-only[1]", func(s *Spec) { s.Workspace = "/opt"; s.ReadOnly = []string{"/usr", "/opt/homebrew"} }},
		{"socket writable", "workspace", "socket", func(s *Spec) { s.GatewaySocket = s.Workspace + "/gw.sock" }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := spec()
			c.edit(&s)
			_, err := Profile(s)
			var pe *PathError
			if !errors.As(err, &pe) || pe.Field != c.field || !strings.Contains(pe.Reason, c.reason) {
				t.Fatalf("got %v, want a refusal of %s saying %q", err, c.field, c.reason)
			}
		})
	}
}

func TestArgv(t *testing.T) {
	argv, err := Argv("(version 1)", "/opt/claude/claude", "-p", "hello")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/usr/bin/sandbox-exec", "-p", "(version 1)", "--", "/opt/claude/claude", "-p", "hello"}
	if !slices.Equal(argv, want) {
		t.Errorf("argv %q, want %q", argv, want)
	}
	for _, bad := range [][]string{nil, {"claude", "-p"}, {""}} {
		if _, err := Argv("(version 1)", bad...); err == nil {
			t.Errorf("Argv(%q) accepted", bad)
		}
	}
	if _, err := Argv("", "/opt/claude/claude"); err == nil {
		t.Error("Argv with no profile accepted")
	}
}

func TestDefaultReadOnlyIsAccepted(t *testing.T) {
	for i, p := range DefaultReadOnly() {
		if err := checkPath(fmt.Sprintf("read-only[%d]", i), p); err != nil {
			t.Error(err)
		}
		if !filepath.IsAbs(p) {
			t.Errorf("%s is not absolute", p)
		}
	}
}
