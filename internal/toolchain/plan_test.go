package toolchain

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// fakeHost is a user whose home holds a Go module and build cache, pyenv
// and a cargo install.
func fakeHost() Host {
	dirs := []string{"/home/u/go/pkg/mod", "/home/u/.cache/go-build", "/home/u/.pyenv", "/home/u/.pyenv/shims",
		"/home/u/.pyenv/bin", "/home/u/.cargo", "/home/u/.cargo/bin", "/home/u/.cargo/registry", "/home/u/.rustup",
		"/home/u/.npm", "/opt/tools/bin"}
	paths := map[string]string{"python3": "/home/u/.pyenv/shims/python3", "cargo": "/home/u/.cargo/bin/cargo", "node": "/usr/bin/node"}
	return Host{
		Home:   "/home/u",
		Getenv: func(string) string { return "" },
		LookPath: func(p string) (string, error) {
			if v, ok := paths[p]; ok {
				return v, nil
			}
			return "", errors.New("not found")
		},
		GoEnv: func() (map[string]string, error) {
			return map[string]string{"GOMODCACHE": "/home/u/go/pkg/mod", "GOCACHE": "/home/u/.cache/go-build", "GOROOT": "/usr/local/go"}, nil
		},
		IsDir: func(p string) bool { return slices.Contains(dirs, p) },
	}
}

func tcs(names ...string) []Toolchain {
	var out []Toolchain
	for _, n := range names {
		out = append(out, Toolchain{Name: n})
	}
	return out
}

func TestPlanGo(t *testing.T) {
	e := Plan(fakeHost(), tcs("go"), Options{BuildCache: "/var/zerg/cache/u1", Zerg: "/run/zerg/zerg"})
	wantShared := []string{"/home/u/go/pkg/mod", "/home/u/.cache/go-build"}
	if !slices.Equal(e.Shared, wantShared) {
		t.Fatalf("Shared = %v, want %v", e.Shared, wantShared)
	}
	if !slices.Equal(e.Writable, []string{"/var/zerg/cache/u1"}) {
		t.Fatalf("Writable = %v", e.Writable)
	}
	vars := strings.Join(e.Vars, " ")
	for _, want := range []string{"GOPROXY=off", "GOTOOLCHAIN=local", "GOMODCACHE=/home/u/go/pkg/mod",
		"GOCACHE=/var/zerg/cache/u1/go-build",
		"GOCACHEPROG=/run/zerg/zerg go-cache --write /var/zerg/cache/u1/go-build --read /home/u/.cache/go-build"} {
		if !strings.Contains(vars, want) {
			t.Errorf("Vars %v lack %s", e.Vars, want)
		}
	}
	// GOROOT is under /usr/local: visible anyway, not shared.
	if slices.Contains(e.Shared, "/usr/local/go") {
		t.Error("a GOROOT outside the home was shared")
	}
}

func TestPlanOffSwitches(t *testing.T) {
	e := Plan(fakeHost(), tcs("go", "python"), Options{Off: []string{"python"}, CachesOff: []string{"go-build", "go-mod"},
		BuildCache: "/c", Zerg: "/z"})
	if len(e.Shared) != 0 || len(e.Writable) != 0 || len(e.Path) != 0 {
		t.Fatalf("turned-off caches and toolchains still planned: %+v", e)
	}
	if strings.Contains(strings.Join(e.Vars, " "), "GOCACHEPROG") {
		t.Fatalf("go-build off still sets GOCACHEPROG: %v", e.Vars)
	}
	if len(e.Toolchains) != 1 || e.Toolchains[0].Name != "go" {
		t.Fatalf("Toolchains = %+v", e.Toolchains)
	}
}

func TestPlanInstallsInTheHome(t *testing.T) {
	e := Plan(fakeHost(), tcs("python", "rust", "node"), Options{ExtraPaths: []string{"/opt/tools/bin", "/nope"}})
	for _, d := range []string{"/home/u/.pyenv", "/home/u/.cargo", "/home/u/.rustup", "/home/u/.cargo/registry", "/home/u/.npm", "/opt/tools/bin"} {
		if !slices.Contains(e.Shared, d) {
			t.Errorf("Shared %v lacks %s", e.Shared, d)
		}
	}
	wantPath := []string{"/home/u/.pyenv/shims", "/home/u/.pyenv/bin", "/home/u/.cargo/bin", "/opt/tools/bin"}
	if !slices.Equal(e.Path, wantPath) {
		t.Fatalf("Path = %v, want %v", e.Path, wantPath)
	}
	if got := e.PathValue("/usr/bin"); got != strings.Join(wantPath, ":")+":/usr/bin" {
		t.Fatalf("PathValue = %s", got)
	}
	// node is /usr/bin/node, not nvm's: nothing of nvm is planned.
	for _, c := range e.Caches {
		if c.Name == "nvm" {
			t.Fatalf("nvm planned for a node outside it: %+v", c)
		}
	}
}

// asdf's shims come from its data directory, wherever ASDF_DATA_DIR puts it.
func TestPlanAsdfDataDir(t *testing.T) {
	h := fakeHost()
	dirs := []string{"/data/asdf", "/data/asdf/shims", "/data/asdf/bin", "/home/u/.asdf/shims"}
	h.IsDir = func(p string) bool { return slices.Contains(dirs, p) }
	h.Getenv = func(k string) string {
		if k == "ASDF_DATA_DIR" {
			return "/data/asdf"
		}
		return ""
	}
	h.LookPath = func(p string) (string, error) { return "/data/asdf/bin/" + p, nil }
	e := Plan(h, tcs("elixir"), Options{})
	if !slices.Equal(e.Path, []string{"/data/asdf/shims", "/data/asdf/bin"}) || !slices.Contains(e.Shared, "/data/asdf") {
		t.Fatalf("Path %v, Shared %v: want asdf's shims and bin from ASDF_DATA_DIR", e.Path, e.Shared)
	}
}

// In an image the toolchains are the image's: of the host only the caches
// whose variables carry their paths inside, and what caches.read_only names.
func TestPlanInImage(t *testing.T) {
	h := fakeHost()
	inner := h.GoEnv
	h.GoEnv = func() (map[string]string, error) {
		m, err := inner()
		m["GOROOT"] = "/home/u/sdk/go"
		return m, err
	}
	e := Plan(h, tcs("go", "node", "python", "rust"), Options{BuildCache: "/var/zerg/cache/u1", Zerg: "/run/zerg/zerg",
		InImage: true, ExtraPaths: []string{"/opt/tools/bin"}, ExtraReadOnly: []string{"/home/u/.cargo/registry"}})
	want := []string{"/home/u/go/pkg/mod", "/home/u/.cache/go-build", "/home/u/.npm", "/home/u/.cargo/registry"}
	if !slices.Equal(e.Shared, want) {
		t.Errorf("Shared = %v, want %v", e.Shared, want)
	}
	if len(e.Path) != 0 {
		t.Errorf("host directories on PATH in an image: %v", e.Path)
	}
	if vars := strings.Join(e.Vars, " "); !strings.Contains(vars, "GOMODCACHE=/home/u/go/pkg/mod") || strings.Contains(vars, "PYENV_ROOT") || strings.Contains(vars, "RUSTUP_HOME") {
		t.Errorf("Vars = %v", e.Vars)
	}
}
