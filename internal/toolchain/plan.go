package toolchain

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/zergrush/zerg/internal/gocache"
	"github.com/zergrush/zerg/internal/pathx"
)

// Host is what a plan reads of the machine zerg runs on, as the user
// running zerg. Tests fake it; LocalHost is the real one.
type Host struct {
	Home     string
	Getenv   func(string) string
	LookPath func(string) (string, error)
	// GoEnv returns the user's `go env` values of GOMODCACHE, GOCACHE and
	// GOROOT; an error when there is no go command.
	GoEnv func() (map[string]string, error)
	IsDir func(string) bool
}

// LocalHost is the machine zerg runs on.
func LocalHost() Host {
	home, _ := os.UserHomeDir()
	return Host{
		Home: home, Getenv: os.Getenv, LookPath: exec.LookPath,
		GoEnv: goEnv,
		IsDir: func(p string) bool { fi, err := os.Stat(p); return err == nil && fi.IsDir() },
	}
}

func goEnv() (map[string]string, error) {
	out, err := exec.Command("go", "env", "-json", "GOMODCACHE", "GOCACHE", "GOROOT").Output()
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	return m, json.Unmarshal(out, &m)
}

// Options are the config's choices (toolchains.*, caches.*) and where
// zerg's own build cache for one sandbox user is.
type Options struct {
	Off           []string // toolchains.off
	CachesOff     []string // caches.off
	ExtraPaths    []string // toolchains.paths
	ExtraReadOnly []string // caches.read_only
	// BuildCache is zerg's writable build-cache directory for the user the
	// commands run as; "" gives each command none of its own (Go then
	// builds from the user's cache into a fresh one).
	BuildCache string
	// Zerg is the zerg binary as the commands see it (GOCACHEPROG runs it).
	Zerg string
	// InImage plans for commands in a container whose image has its own
	// toolchains (container mode): no host install, no host directory on
	// PATH; only the caches whose paths their variables carry inside
	// (Go's module and build caches, npm's) and caches.read_only.
	InImage bool
}

// Env is what the commands of a run (workers, verification, gates) get.
type Env struct {
	Toolchains []Toolchain
	Shared     []string // host directories visible read-only at their own path
	Writable   []string // zerg's build caches, writable
	Path       []string // directories put first on PATH
	Vars       []string // KEY=VALUE
	Caches     []Cache  // what was found, for zerg check and doctor
}

// Cache is one cache or install the commands get.
type Cache struct {
	Name string `json:"name"` // go-mod, go-build, npm, pip, uv, cargo, or an install: go-root, pyenv, nvm, rustup, asdf, mise
	Dir  string `json:"dir"`
	Kind string `json:"kind"` // "read-only" or "writable"
}

// Plan says what the commands of a repository with toolchains tcs get on
// host h. Nothing is created; a directory that is not there is left out.
func Plan(h Host, tcs []Toolchain, o Options) Env {
	e := Env{}
	for _, tc := range tcs {
		if !slices.Contains(o.Off, tc.Name) {
			e.Toolchains = append(e.Toolchains, tc)
		}
	}
	on := func(name string) bool { return !slices.Contains(o.CachesOff, name) }
	home := func(parts ...string) string {
		if h.Home == "" {
			return ""
		}
		return filepath.Join(append([]string{h.Home}, parts...)...)
	}
	envOr := func(name, def string) string {
		if v := h.Getenv(name); v != "" && filepath.IsAbs(v) {
			return v
		}
		return def
	}
	share := func(name, dir string) bool {
		if dir == "" || !h.IsDir(dir) {
			return false
		}
		if !slices.Contains(e.Shared, dir) {
			e.Shared = append(e.Shared, dir)
		}
		e.Caches = append(e.Caches, Cache{Name: name, Dir: dir, Kind: "read-only"})
		return true
	}
	path := func(dirs ...string) {
		for _, d := range dirs {
			if d != "" && h.IsDir(d) && !slices.Contains(e.Path, d) {
				e.Path = append(e.Path, d)
			}
		}
	}
	// installed shares the install root and puts bins first on PATH,
	// unless the user's PATH finds program ("": any) in another install.
	installed := func(name, root string, program string, bins ...string) {
		if o.InImage || root == "" || !h.IsDir(root) {
			return
		}
		if p, err := h.LookPath(program); program != "" && err == nil && !pathx.Within(root, p) {
			return // the user's PATH finds another install first: not this one
		}
		if share(name, root) {
			path(bins...)
		}
	}
	for _, tc := range e.Toolchains {
		switch tc.Name {
		case "go":
			ge, err := h.GoEnv()
			if err != nil {
				continue
			}
			if root := ge["GOROOT"]; !o.InImage && root != "" && h.Home != "" && pathx.Within(h.Home, root) {
				if share("go-root", root) {
					path(filepath.Join(root, "bin"))
				}
			}
			// No network for modules: they come from the user's module
			// cache or the build names the one that is missing.
			e.Vars = append(e.Vars, "GOPROXY=off", "GOTOOLCHAIN=local")
			if on("go-mod") && share("go-mod", ge["GOMODCACHE"]) {
				e.Vars = append(e.Vars, "GOMODCACHE="+ge["GOMODCACHE"])
			}
			if on("go-build") && o.BuildCache != "" && o.Zerg != "" {
				l := gocache.Layers{Write: filepath.Join(o.BuildCache, "go-build")}
				if share("go-build", ge["GOCACHE"]) {
					l.Read = []string{ge["GOCACHE"]}
				}
				e.Vars = append(e.Vars, "GOCACHE="+l.Write, "GOCACHEPROG="+l.Prog(o.Zerg))
				e.Caches = append(e.Caches, Cache{Name: "go-build", Dir: l.Write, Kind: "writable"})
				if !slices.Contains(e.Writable, o.BuildCache) {
					e.Writable = append(e.Writable, o.BuildCache)
				}
			}
		case "node":
			nvm := envOr("NVM_DIR", home(".nvm"))
			if p, err := h.LookPath("node"); err == nil && nvm != "" && pathx.Within(nvm, p) {
				installed("nvm", nvm, "node", filepath.Dir(p))
			}
			if npm := envOr("npm_config_cache", home(".npm")); on("npm") && share("npm", npm) {
				// Installs come from the cache; the network is not there.
				// The cache is read-only: npm's logs go to the sandbox's own /tmp.
				e.Vars = append(e.Vars, "npm_config_cache="+npm, "npm_config_prefer_offline=true", "npm_config_logs_dir=/tmp/npm-logs")
			}
		case "python", "rust", "elixir", "mise":
			if o.InImage {
				continue // their caches have no variable zerg sets: the image's paths decide
			}
		}
		switch tc.Name {
		case "python":
			pyenv := envOr("PYENV_ROOT", home(".pyenv"))
			installed("pyenv", pyenv, "python3", filepath.Join(pyenv, "shims"), filepath.Join(pyenv, "bin"))
			if slices.Contains(e.Shared, pyenv) {
				e.Vars = append(e.Vars, "PYENV_ROOT="+pyenv)
			}
			if on("pip") {
				share("pip", envOr("PIP_CACHE_DIR", home(".cache", "pip")))
			}
			if on("uv") {
				share("uv", envOr("UV_CACHE_DIR", home(".cache", "uv")))
			}
		case "rust":
			cargo := envOr("CARGO_HOME", home(".cargo"))
			rustup := envOr("RUSTUP_HOME", home(".rustup"))
			installed("cargo", cargo, "cargo", filepath.Join(cargo, "bin"))
			if share("rustup", rustup) {
				e.Vars = append(e.Vars, "RUSTUP_HOME="+rustup)
			}
			if on("cargo") && share("cargo", filepath.Join(cargo, "registry")) {
				e.Vars = append(e.Vars, "CARGO_NET_OFFLINE=true")
			}
		case "elixir", "mise":
			asdf := envOr("ASDF_DATA_DIR", home(".asdf"))
			installed("asdf", asdf, "asdf", filepath.Join(asdf, "shims"), filepath.Join(asdf, "bin"))
			mise := envOr("MISE_DATA_DIR", home(".local", "share", "mise"))
			installed("mise", mise, "", filepath.Join(mise, "shims"))
		}
	}
	for _, d := range o.ExtraPaths {
		if o.InImage {
			break // the host's programs
		}
		if share("toolchains.paths", d) {
			path(d)
		}
	}
	for _, d := range o.ExtraReadOnly {
		share("caches.read_only", d)
	}
	return e
}

// PathValue is PATH for the commands: the plan's directories, then base.
func (e Env) PathValue(base string) string {
	if len(e.Path) == 0 {
		return base
	}
	p := strings.Join(e.Path, ":")
	if base == "" {
		return p
	}
	return p + ":" + base
}
