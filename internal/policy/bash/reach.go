package bash

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// What reaches outside the worker's task, whatever the mode: the network
// (and the hosts and cloud accounts behind it), the remote of the
// repository, other processes, the environment's credentials, trust the
// user gives to configuration, and listeners other machines can reach. The
// list wins over every allow rule: a toolchain, a verification command or
// worker_policy.allow_commands never allows these. In sandbox mode it is the
// whole Bash check, a courtesy on top of the sandbox (which enforces the
// same with the kernel): the model learns at once why a call cannot work.

// reachPrograms are programs refused outright, by name (the base name of
// the command, after wrappers such as time, env, command, sudo or busybox
// are seen through).
var reachPrograms = whyOf(map[string]string{
	whyNetwork: `curl wget nc ncat netcat nc.openbsd nc.traditional socat telnet ftp sftp tftp lftp scp ssh sshpass
		autossh mosh ssh-add ssh-agent ssh-keyscan ssh-copy-id http https xh httpie aria2c axel ab wrk hey gh glab hub
		tea aws gcloud gsutil bq az kubectl kubectx kubens helm k9s docker docker-compose podman podman-compose
		nerdctl buildah skopeo crane oc minikube kind k3d terraform tofu pulumi heroku flyctl fly vercel netlify doctl
		firebase wrangler supabase eksctl ngrok cloudflared tailscale nmap masscan dig nslookup host ping ping6
		traceroute tracepath mtr whois sendmail mail mailx mutt smbclient ldapsearch psql mysql mariadb redis-cli
		mongo mongosh cqlsh sqlcmd nats grpcurl websocat wscat`,
	whyProcs: `ps pgrep pkill kill killall killall5 top htop atop btop glances lsof fuser pstree pidof pidstat pmap
		pwdx skill snice prtstat`,
})

const (
	whyNetwork  = "network access"
	whyProcs    = "it looks at or signals other processes"
	whyEnv      = "it prints the environment, which holds credentials"
	whyTrust    = "it changes what the user's tools trust"
	whyPublish  = "it publishes or logs in to a registry"
	whyListener = "it listens on every network interface"
	whyRemote   = "it reaches the repository's remote"
)

// reachSubcommands are subcommands refused for what they reach (the first
// operand after the program's own options).
var reachSubcommands = map[string]map[string]string{
	"git": {"push": whyRemote, "fetch": whyRemote, "pull": whyRemote, "clone": whyRemote, "ls-remote": whyRemote,
		"submodule": whyRemote, "send-email": whyNetwork, "imap-send": whyNetwork, "daemon": whyListener,
		"instaweb": whyListener, "http-fetch": whyRemote, "http-push": whyRemote, "upload-pack": whyRemote,
		"receive-pack": whyRemote, "upload-archive": whyRemote, "fetch-pack": whyRemote, "send-pack": whyRemote,
		"credential": "it handles the user's credentials", "credential-store": "it handles the user's credentials",
		"credential-cache": "it handles the user's credentials", "svn": whyRemote, "p4": whyRemote, "cvsimport": whyRemote,
		"archimport": whyRemote, "lfs": whyRemote},
	"npm": publishing("publish", "unpublish", "deprecate", "dist-tag", "owner", "access", "login", "logout", "adduser",
		"add-user", "token", "team", "org", "profile", "star", "unstar", "hook"),
	"pnpm":   publishing("publish", "unpublish", "deprecate", "dist-tag", "owner", "access", "login", "logout", "adduser", "token"),
	"yarn":   publishing("publish", "login", "logout", "owner", "tag"),
	"bun":    publishing("publish"),
	"cargo":  publishing("publish", "login", "logout", "owner", "yank"),
	"uv":     publishing("publish"),
	"poetry": publishing("publish"),
	"twine":  publishing("upload", "register"),
	"gem":    publishing("push", "owner", "yank", "signin", "signout"),
	"mix": publishing("hex.publish", "hex.user", "hex.owner", "hex.retire", "hex.organization", "hex.registry",
		"hex.sponsor"),
	"rebar3": publishing("hex"),
	// beads: sync pulls and pushes the tracker's branch, the daemon does so
	// in the background.
	"bd":     {"sync": whyRemote, "daemon": whyRemote, "daemons": whyRemote},
	"mise":   {"trust": whyTrust},
	"direnv": {"allow": whyTrust, "permit": whyTrust, "grant": whyTrust},
}

// whyOf maps each name of groups (why: the names, space-separated) to its
// why.
func whyOf(groups map[string]string) map[string]string {
	m := map[string]string{}
	for why, names := range groups {
		for _, n := range strings.Fields(names) {
			m[n] = why
		}
	}
	return m
}

func publishing(subs ...string) map[string]string {
	m := map[string]string{}
	for _, s := range subs {
		m[s] = whyPublish
	}
	return m
}

// gitReachOptions are git's global options (and prefixes) that run
// programs or name repositories elsewhere.
var gitReachOptions = []string{"-c", "--config-env", "--exec-path", "--upload-pack", "--receive-pack", "--git-dir", "--work-tree", "--namespace", "--super-prefix"}

// reachCommand says why the simple command name args reaches outside, or
// nil. name is the base name of the program; args are its arguments (words
// that are computed are judged by what is known of them).
func reachCommand(name string, args []bashWord) error {
	name = filepath.Base(name)
	if why, ok := reachPrograms[name]; ok {
		return fmt.Errorf("%s is not allowed (%s)", name, why)
	}
	switch name {
	case "rsync":
		for _, a := range args {
			if a.dynamic || remoteSpec(a.lit) || a.lit == "--daemon" || strings.HasPrefix(a.lit, "-e") || strings.HasPrefix(a.lit, "--rsh") {
				return fmt.Errorf("rsync %s is not allowed (%s)", a.raw, whyNetwork)
			}
		}
	case "env":
		if envDumps(args) {
			return fmt.Errorf("env without a command is not allowed (%s)", whyEnv)
		}
	case "printenv":
		if len(args) == 0 {
			return fmt.Errorf("printenv is not allowed (%s)", whyEnv)
		}
		for _, a := range args {
			if a.dynamic || secretVar(a.lit) {
				return fmt.Errorf("printenv %s is not allowed (%s)", a.raw, whyEnv)
			}
		}
	case "set", "export", "declare", "typeset", "readonly", "local":
		dump := len(args) == 0
		for _, a := range args {
			if strings.HasPrefix(a.lit, "-") && strings.ContainsAny(a.lit, "pxf") && name != "set" {
				dump = true
			}
		}
		if dump {
			return fmt.Errorf("%s without names is not allowed (%s)", name, whyEnv)
		}
	case "compgen":
		for _, a := range args {
			if strings.HasPrefix(a.lit, "-") && strings.ContainsAny(a.lit, "ve") || a.lit == "variable" || a.lit == "export" {
				return fmt.Errorf("compgen %s is not allowed (%s)", a.raw, whyEnv)
			}
		}
	case "git":
		for i := 0; i < len(args); i++ {
			a := args[i]
			if !strings.HasPrefix(a.lit, "-") || a.dynamic {
				break // the subcommand: its own options are its own
			}
			for _, o := range gitReachOptions {
				if a.lit == o || strings.HasPrefix(a.lit, o+"=") || (o == "-c" && strings.HasPrefix(a.lit, "-c") && len(a.lit) > 2) {
					return fmt.Errorf("git %s is not allowed (it runs programs or names a repository the policy cannot see)", a.lit)
				}
			}
			if a.lit == "-C" {
				i++
			}
		}
		if sub, rest := gitSubcommand(args); sub != "" {
			if why, ok := reachSubcommands["git"][sub]; ok {
				return fmt.Errorf("git %s is not allowed (%s)", sub, why)
			}
			switch sub {
			case "remote":
				if err := gitRemote(rest); err != nil {
					return err
				}
			case "config":
				if err := gitConfigReach(rest); err != nil {
					return err
				}
			case "archive":
				for _, a := range rest {
					if strings.HasPrefix(a.lit, "--remote") || strings.HasPrefix(a.lit, "--exec") {
						return fmt.Errorf("git archive %s is not allowed (%s)", a.lit, whyRemote)
					}
				}
			case "bisect":
				if slices.ContainsFunc(rest, func(a bashWord) bool { return a.lit == "run" }) {
					return fmt.Errorf("git bisect run is not allowed (it runs a command the policy cannot see)")
				}
			}
		}
	case "openssl":
		for _, a := range args {
			if slices.Contains([]string{"s_client", "s_server", "s_time", "ocsp"}, a.lit) {
				return fmt.Errorf("%s %s is not allowed (%s)", name, a.lit, whyNetwork)
			}
		}
	}
	if subs, ok := reachSubcommands[name]; ok && name != "git" {
		for _, a := range args {
			if strings.HasPrefix(a.lit, "-") {
				continue
			}
			if why, ok := subs[a.lit]; ok {
				return fmt.Errorf("%s %s is not allowed (%s)", name, a.lit, why)
			}
			if name == "yarn" && a.lit == "npm" {
				continue // yarn npm publish
			}
			break
		}
	}
	if why := listener(name, args); why != "" {
		return fmt.Errorf("%s is not allowed (%s)", why, whyListener)
	}
	return nil
}

// gitSubcommand returns git's subcommand and its arguments, after the
// global options.
func gitSubcommand(args []bashWord) (string, []bashWord) {
	for i := 0; i < len(args); i++ {
		a := args[i].lit
		switch {
		case a == "-C" || a == "-c" || a == "--git-dir" || a == "--work-tree" || a == "--namespace" || a == "--config-env":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			return a, args[i+1:]
		}
	}
	return "", nil
}

// gitRemote allows listing remotes and reading a URL; adding, changing and
// updating them (which fetches) is refused.
func gitRemote(rest []bashWord) error {
	for _, a := range rest {
		if strings.HasPrefix(a.lit, "-") {
			continue
		}
		switch a.lit {
		case "get-url":
			return nil
		case "show":
			if slices.ContainsFunc(rest, func(b bashWord) bool { return b.lit == "-n" }) {
				return nil
			}
		}
		return fmt.Errorf("git remote %s is not allowed (%s)", a.lit, whyRemote)
	}
	return nil
}

// gitConfigReach refuses the user's and the system's git configuration
// (reading it shows the user's settings, writing it changes every
// repository) and every write; reading the repository's own settings is
// fine.
func gitConfigReach(rest []bashWord) error {
	var operands []string
	for i := 0; i < len(rest); i++ {
		a := rest[i].lit
		switch {
		case a == "--global" || a == "--system" || a == "--file" || a == "-f" || strings.HasPrefix(a, "--file=") || strings.HasPrefix(a, "--blob") || a == "--includes" || a == "--show-origin":
			return fmt.Errorf("git config %s is not allowed (it reads or writes the user's configuration)", a)
		case a == "--add" || a == "--unset" || a == "--unset-all" || a == "--replace-all" || a == "--rename-section" || a == "--remove-section" || a == "-e" || a == "--edit" || a == "--edit-section":
			return fmt.Errorf("git config %s is not allowed (it changes git's configuration)", a)
		case a == "--type" || a == "--default" || a == "--comment" || a == "--value" || a == "--get-color" || a == "--get-colorbool" || a == "--get-urlmatch":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			operands = append(operands, a)
		}
	}
	if len(operands) > 0 {
		switch operands[0] {
		case "set", "unset", "rename-section", "remove-section", "edit":
			return fmt.Errorf("git config %s is not allowed (it changes git's configuration)", operands[0])
		case "get", "list":
			return nil
		}
	}
	if len(operands) > 1 {
		return fmt.Errorf("git config %s %s is not allowed (it changes git's configuration)", operands[0], operands[1])
	}
	return nil
}

// remoteSpec reports whether an rsync or scp operand names another host
// (host:path, user@host:path, rsync://).
func remoteSpec(s string) bool {
	if strings.Contains(s, "://") {
		return true
	}
	i := strings.IndexByte(s, ':')
	return i > 0 && !strings.Contains(s[:i], "/")
}

// envDumps reports whether env, given args, prints the environment: no
// command after its options and NAME=value words.
func envDumps(args []bashWord) bool {
	for i := 0; i < len(args); i++ {
		a := args[i].lit
		switch {
		case a == "-u" || a == "--unset" || a == "-C" || a == "--chdir" || a == "-S" || a == "--split-string":
			i++
		case a == "--":
		case strings.HasPrefix(a, "-"):
		case isAssignment(a):
		default:
			return false
		}
	}
	return true
}

// secretVar reports whether a variable name looks like it holds a
// credential.
func secretVar(name string) bool {
	u := strings.ToUpper(name)
	return hasPrefix(u, "ANTHROPIC", "CLAUDE_CODE_OAUTH", "AWS_", "AZURE_", "GOOGLE_APPLICATION", "GITHUB_TOKEN", "GH_TOKEN", "NPM_TOKEN") ||
		slices.ContainsFunc([]string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL"},
			func(s string) bool { return strings.Contains(u, s) }) ||
		slices.ContainsFunc(strings.Split(u, "_"), func(seg string) bool { return secretWords[seg] })
}

var secretWords = set("AUTH OAUTH PAT PASS COOKIE PRIVATE")

// listener says which listener on every interface name args starts, or
// "": a development server that binds to all interfaces unless told
// otherwise, or any server told to bind to a non-loopback address.
func listener(name string, args []bashWord) string {
	module := ""
	if strings.HasPrefix(name, "python") {
		for i, a := range args {
			if a.lit == "-m" && i+1 < len(args) {
				module = args[i+1].lit
				break
			}
			if strings.HasPrefix(a.lit, "-m") && len(a.lit) > 2 {
				module = a.lit[2:]
				break
			}
		}
	}
	allByDefault := ""
	switch {
	case module == "http.server" || module == "SimpleHTTPServer":
		allByDefault = name + " -m " + module
	case name == "http-server" || name == "live-server" || name == "serve" || name == "browser-sync":
		allByDefault = name
	case name == "ruby" && slices.ContainsFunc(args, func(a bashWord) bool { return a.lit == "-run" || strings.HasPrefix(a.lit, "-run") }):
		allByDefault = "ruby -run"
	}
	loopbackBind := false
	for i := 0; i < len(args); i++ {
		a := args[i].lit
		opt, val, eq := strings.Cut(a, "=")
		bindOpt := slices.Contains([]string{"--host", "--bind", "--listen", "--address", "--addr", "--ip", "--interface", "-http", "--http", "-listen"}, opt) ||
			(allByDefault != "" && (opt == "-b" || opt == "-a" || opt == "-l")) ||
			(opt == "-b" && slices.Contains([]string{"gunicorn", "hypercorn", "daphne"}, name))
		if !bindOpt {
			continue
		}
		if !eq {
			if i+1 >= len(args) || strings.HasPrefix(args[i+1].lit, "-") {
				if opt == "--host" {
					return name + " --host" // vite and friends: every interface
				}
				continue
			}
			val = args[i+1].lit
			i++
		}
		switch {
		case loopback(val):
			loopbackBind = true
		case anyAddress(val):
			return name + " " + opt + " " + val
		}
	}
	if allByDefault != "" && !loopbackBind {
		return allByDefault + " without a loopback bind address (add --bind 127.0.0.1)"
	}
	return ""
}

// loopback reports whether a bind address (maybe with a port, or a
// tcp:// URL) is the loopback interface.
func loopback(v string) bool {
	host := bindHost(v)
	a, err := netip.ParseAddr(host)
	return host == "localhost" || err == nil && a.IsLoopback()
}

// anyAddress reports whether a bind address is every interface or another
// machine's interface: the unspecified address, "*", or an IP address that
// is not the loopback.
func anyAddress(v string) bool {
	host := bindHost(v)
	a, err := netip.ParseAddr(host)
	return host == "*" || host == "" || host == "all" || err == nil && !a.IsLoopback()
}

// bindHost is the host of a bind address: without a tcp:// or http://
// scheme, a port, or the brackets of an IPv6 address.
func bindHost(v string) string {
	v = strings.TrimPrefix(strings.TrimPrefix(v, "tcp://"), "http://")
	if i := strings.LastIndexByte(v, ':'); i >= 0 && (strings.Count(v, ":") == 1 || strings.HasPrefix(v, "[")) {
		v = v[:i]
	}
	return strings.Trim(v, "[]")
}

// anyInterfaceRE finds the unspecified addresses in a command line's text,
// wherever they are (an option, a script, a here-document). A bare "::" is
// only judged as a bind option's value (listener): in text it is too
// common (a Haskell signature, a C++ name).
var anyInterfaceRE = regexp.MustCompile(`(^|[^0-9.])0\.0\.0\.0([^0-9.]|$)|\[::\]`)

// deniedProgram reports whether name is on the user's deny list.
func (b Policy) deniedProgram(name string) error {
	if slices.Contains(b.Deny, filepath.Base(name)) {
		return fmt.Errorf("%s is not allowed (worker_policy.deny_commands)", filepath.Base(name))
	}
	return nil
}
