// Package seatbelt writes the macOS Seatbelt profile (SBPL, the Scheme-like
// language `sandbox-exec -p` reads) that would confine a worker on a Mac the
// way internal/sandbox's bubblewrap sandbox confines it on Linux: its
// workspace and a private HOME and TMPDIR writable, the toolchains and the
// CLI's install read-only, the gateway's unix socket as the only way out,
// nothing else. docs/seatbelt.md is the design.
//
// The package is pure text: it builds on every GOOS, touches no file and
// runs nothing. It is generated and unit-tested on Linux and has never run
// on a Mac; no driver uses it, and sandbox mode is refused on macOS until it
// has been run there.
package seatbelt

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/zergrush/zerg/internal/pathx"
)

// SandboxExec is sandbox-exec's absolute path, so that no PATH entry chooses
// the program that applies the sandbox.
const SandboxExec = "/usr/bin/sandbox-exec"

// Spec is what one worker's profile is made of. Every path must be
// absolute, clean and already resolved (filepath.EvalSymlinks on the Mac):
// Seatbelt matches the path the kernel resolved, so an unresolved path
// (/tmp, which is /private/tmp) would silently match nothing.
type Spec struct {
	// Workspace is the worker's checkout: readable and writable.
	Workspace string
	// Home and Tmp are the worker's private HOME and TMPDIR (they may be
	// the same directory): readable and writable.
	Home, Tmp string
	// ReadOnly are the directories (or files) the worker may read and run
	// programs from: the system's and the toolchains' (DefaultReadOnly)
	// and the CLI's install.
	ReadOnly []string
	// GatewaySocket is the gateway's unix socket: the one network
	// connection the worker may open.
	GatewaySocket string
	// RealHome is the user's own HOME. Nothing under it is reachable
	// except ReadOnly or writable paths listed inside it, and never its
	// secrets (SecretDirs).
	RealHome string
}

// DefaultReadOnly are the macOS directories a worker's shell, git and
// toolchains read: the system, Homebrew (Apple silicon; Intel's /usr/local
// is under /usr), the Xcode command-line tools and the links xcrun and
// /bin/sh follow. It is a starting list written from Apple's layout, never
// measured on a Mac.
func DefaultReadOnly() []string {
	return []string{
		"/usr", "/bin", "/sbin", "/System",
		"/opt/homebrew",
		"/Library/Developer/CommandLineTools",
		"/Applications/Xcode.app/Contents/Developer",
		"/private/etc",                      // /etc: the shell's profiles, /etc/paths
		"/private/var/db/timezone",          // where /etc/localtime points
		"/private/var/select",               // /bin/sh runs the shell /private/var/select/sh names
		"/private/var/db/xcode_select_link", // xcrun's shims (/usr/bin/git) find the developer directory here
	}
}

// SecretDirs are the places under the user's real HOME that no profile
// opens, even when a listed path would cover them: keys, cloud and cluster
// credentials, the keychains, and the CLI's own credentials and history.
// The profile also denies them by name after every allow.
var SecretDirs = []string{
	".ssh", ".aws", ".gnupg", ".config/gcloud", ".azure", ".kube", ".docker", ".netrc",
	"Library/Keychains", ".claude", ".claude.json",
}

// systemSecrets are the machine's own keychains.
var systemSecrets = []string{"/Library/Keychains"}

// MachService is one mach-lookup the profile allows, with why.
type MachService struct{ Name, Why string }

// MachServices are the only mach-lookups allowed. Everything else a
// process on a Mac may ask launchd for is refused, in particular the
// keychain (com.apple.SecurityServer, com.apple.securityd.xpc), DNS
// (com.apple.dnssd.service), certificate trust (com.apple.trustd*: the
// CLI speaks plain HTTP to the gateway, which alone speaks TLS), the
// pasteboard and LaunchServices (opening applications).
var MachServices = []MachService{
	{"com.apple.system.opendirectoryd.libinfo",
		"user and group lookups (getpwuid, getgrgid): git, the shell and node ask who the user is"},
	{"com.apple.system.notification_center",
		"notify(3), which libSystem uses for time-zone and configuration change notices"},
}

// devices are the device files every profile opens: the bit bucket for
// writes, zeros and randomness for reads.
var devices = struct{ readWrite, readOnly []string }{
	readWrite: []string{"/dev/null"},
	readOnly:  []string{"/dev/zero", "/dev/random", "/dev/urandom"},
}

// unresolvedRoots are the macOS top-level links into /private: a path
// through one of them never matches, since Seatbelt sees the resolved one.
var unresolvedRoots = []string{"/tmp", "/var", "/etc"}

// PathError is a Spec the generator refuses: the field, the path, and why.
type PathError struct{ Field, Path, Reason string }

func (e *PathError) Error() string {
	return fmt.Sprintf("seatbelt: %s %q: %s", e.Field, e.Path, e.Reason)
}

// Profile returns the SBPL profile of s, or a *PathError naming the first
// path it refuses. The same Spec always gives the same text.
func Profile(s Spec) (string, error) {
	if err := s.check(); err != nil {
		return "", err
	}
	writable := dedupe([]string{s.Workspace, s.Home, s.Tmp})
	readable := dedupe(append(slices.Clone(s.ReadOnly), writable...))
	allDevices := slices.Concat(devices.readWrite, devices.readOnly)

	var b strings.Builder
	b.WriteString("(version 1)\n")
	b.WriteString("; Everything not allowed below is refused.\n")
	b.WriteString("(deny default)\n")

	b.WriteString("\n; The worker's processes: fork, and run programs it can read. Signals and\n")
	b.WriteString("; process information only within this sandbox, never zerg or the user's.\n")
	b.WriteString("(allow process-fork)\n")
	rule(&b, "allow process-exec", subpaths(readable))
	b.WriteString("(allow signal (target same-sandbox))\n")
	b.WriteString("(allow process-info* (target same-sandbox))\n")

	b.WriteString("\n; Reading kernel parameters (CPU count, memory size, OS version).\n")
	b.WriteString("(allow sysctl-read)\n")

	b.WriteString("\n; The only system services the worker may ask for.\n")
	b.WriteString("(allow mach-lookup")
	for _, m := range MachServices {
		fmt.Fprintf(&b, "\n  ; %s\n  (global-name %s)", m.Why, quote(m.Name))
	}
	b.WriteString(")\n")

	b.WriteString("\n; stat() on the directories above each allowed path (and on nothing in them),\n")
	b.WriteString("; so that realpath and a shell's cd can walk down to it.\n")
	rule(&b, "allow file-read-metadata", literals(ancestors(slices.Concat(readable, allDevices, []string{s.GatewaySocket}))))

	b.WriteString("\n; Read: the toolchains, the CLI's install, the workspace, the private HOME and TMPDIR.\n")
	rule(&b, "allow file-read*", append(subpaths(readable), literals(allDevices)...))

	b.WriteString("\n; Write: the workspace, the private HOME and TMPDIR, and /dev/null only.\n")
	rule(&b, "allow file-write*", append(subpaths(writable), literals(devices.readWrite)...))

	b.WriteString("\n; The only way out: the gateway's unix socket. No other connection, no listening.\n")
	fmt.Fprintf(&b, "(allow network-outbound (remote unix-socket (path-literal %s)))\n", quote(s.GatewaySocket))

	b.WriteString("\n; Never, whatever an allow above covers: the user's secrets and the keychains.\n")
	rule(&b, "deny file-read* file-write*", subpaths(s.secrets()))
	return b.String(), nil
}

// Argv is the command line that would run argv under profile. The profile
// travels as an argument: it names paths and holds no secret (the API key
// stays in the gateway), so it may be seen in ps like the rest of argv.
// argv[0] must be absolute, so that no PATH inside the sandbox chooses it.
func Argv(profile string, argv ...string) ([]string, error) {
	if profile == "" {
		return nil, fmt.Errorf("seatbelt: no profile")
	}
	if len(argv) == 0 || !filepath.IsAbs(argv[0]) {
		return nil, fmt.Errorf("seatbelt: the command must start with an absolute program path, got %q", argv)
	}
	return append([]string{SandboxExec, "-p", profile, "--"}, argv...), nil
}

// check refuses a Spec whose profile would not say what the Spec means: a
// path the profile cannot hold as a literal, one Seatbelt would never
// match, or one that would open the user's home, its secrets, the
// toolchains or the gateway's socket to writes.
func (s Spec) check() error {
	// named[0] is the real home, named[1:4] the writable paths.
	named := []namedPath{{"real home", s.RealHome}, {"workspace", s.Workspace}, {"home", s.Home}, {"tmp", s.Tmp}, {"gateway socket", s.GatewaySocket}}
	for i, p := range s.ReadOnly {
		named = append(named, namedPath{fmt.Sprintf("read-only[%d]", i), p})
	}
	for _, n := range named {
		if err := checkPath(n.field, n.path); err != nil {
			return err
		}
	}
	secrets := s.secrets()
	for _, n := range named[1:] {
		for _, secret := range secrets {
			if pathx.Within(secret, n.path) {
				return &PathError{n.field, n.path, "lies in " + secret + ", which the sandbox never opens"}
			}
		}
		if n.field != "gateway socket" && pathx.Within(n.path, s.RealHome) {
			return &PathError{n.field, n.path, "holds the user's real home " + s.RealHome + ": list the directories below it that are needed"}
		}
	}
	for _, w := range named[1:4] {
		if pathx.Within(w.path, s.GatewaySocket) {
			return &PathError{w.field, w.path, "holds the gateway's socket, which the worker could then replace"}
		}
		for i, ro := range s.ReadOnly {
			if pathx.Within(w.path, ro) {
				return &PathError{w.field, w.path, fmt.Sprintf("holds read-only[%d] %s, which would then be writable", i, ro)}
			}
		}
	}
	return nil
}

// namedPath is a Spec's path with the name its refusal gives it.
type namedPath struct{ field, path string }

// checkPath refuses a path the profile cannot hold as it stands. A path
// with a quote, a backslash or a control character is refused rather than
// escaped: zerg chooses the workspace's and the private directories' names,
// so such a path is an error or an attack, and refusing needs no trust in
// how sandbox-exec's reader unescapes a string.
func checkPath(field, p string) error {
	switch {
	case p == "":
		return &PathError{field, p, "is empty"}
	case !utf8.ValidString(p):
		return &PathError{field, p, "is not UTF-8"}
	case strings.ContainsAny(p, `"\`):
		return &PathError{field, p, `holds a quote or a backslash, which a profile string cannot hold safely`}
	case strings.ContainsFunc(p, unicode.IsControl):
		return &PathError{field, p, "holds a control character"}
	case !filepath.IsAbs(p) || filepath.Clean(p) != p:
		return &PathError{field, p, "must be absolute and clean (no .., no trailing /)"}
	case p == "/":
		return &PathError{field, p, "is the whole file system"}
	}
	for _, root := range unresolvedRoots {
		if pathx.Within(root, p) {
			return &PathError{field, p, "goes through the link " + root + " (to /private" + root + "): pass the resolved path, the one Seatbelt matches"}
		}
	}
	return nil
}

// secrets are the absolute paths of SecretDirs under RealHome and the
// machine's keychains.
func (s Spec) secrets() []string {
	out := make([]string, 0, len(SecretDirs)+len(systemSecrets))
	for _, d := range SecretDirs {
		out = append(out, filepath.Join(s.RealHome, d))
	}
	return append(out, systemSecrets...)
}

// ancestors are the proper ancestors of paths, "/" included, sorted.
func ancestors(paths []string) []string {
	var out []string
	for _, p := range paths {
		for d := filepath.Dir(p); ; d = filepath.Dir(d) {
			out = append(out, d)
			if d == "/" {
				break
			}
		}
	}
	return dedupe(out)
}

// dedupe sorts paths and drops repeats, so that the profile is the same
// for the same Spec whatever the order of its lists.
func dedupe(paths []string) []string {
	out := slices.Clone(paths)
	slices.Sort(out)
	return slices.Compact(out)
}

func subpaths(paths []string) []string { return filters("subpath", paths) }
func literals(paths []string) []string { return filters("literal", paths) }

func filters(kind string, paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = "(" + kind + " " + quote(p) + ")"
	}
	return out
}

// rule writes (head filter...) one filter a line.
func rule(b *strings.Builder, head string, filters []string) {
	b.WriteString("(" + head)
	for _, f := range filters {
		b.WriteString("\n  " + f)
	}
	b.WriteString(")\n")
}

// quote is a string literal of s, which check has already found to hold no
// quote, backslash or control character: the bytes go between the quotes as
// they are.
func quote(s string) string { return `"` + s + `"` }
