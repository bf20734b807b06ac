package container

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// writeFiles writes files (slash paths relative to root) and returns root.
func writeFiles(t *testing.T, root string, files map[string]string) string {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// newRepo is a directory with .git (the repository root ReadDevcontainer
// finds) and files.
func newRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	return writeFiles(t, root, files)
}

func TestFindDevcontainer(t *testing.T) {
	root := t.TempDir()
	if p, err := FindDevcontainer(root); p != "" || err != nil {
		t.Fatalf("none: %q %v", p, err)
	}
	writeFiles(t, root, map[string]string{".devcontainer.json": "{}"})
	if p, err := FindDevcontainer(root); p != filepath.Join(root, ".devcontainer.json") || err != nil {
		t.Fatalf("top-level file: %q %v", p, err)
	}
	writeFiles(t, root, map[string]string{".devcontainer/devcontainer.json": "{}"})
	if p, err := FindDevcontainer(root); p != filepath.Join(root, ".devcontainer", "devcontainer.json") || err != nil {
		t.Fatalf(".devcontainer/ comes first: %q %v", p, err)
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".devcontainer.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := FindDevcontainer(dir); err == nil || !strings.Contains(err.Error(), ".devcontainer.json is not a regular file") {
		t.Fatalf("a directory: %v", err)
	}
}

const jsoncDevcontainer = `// The project's devcontainer.
{
	"name": "demo", /* metadata: neither honoured nor reported */
	"build": {
		"dockerfile": "Dockerfile", // beside this file
		"context": "..",
		"args": {"GO_VERSION": "1.26", "USER": "dev",},
		"target": "dev",
		"cacheFrom": "x",
	},
	"features": {"ghcr.io/devcontainers/features/node:1": {}},
	"postCreateCommand": "make setup",
	"mounts": ["source=a,target=/a,type=bind"],
	"runArgs": ["--privileged"],
	"customizations": {"vscode": {"extensions": ["golang.go"]}},
}
`

func TestReadDevcontainerJSONC(t *testing.T) {
	root := newRepo(t, map[string]string{
		".devcontainer/devcontainer.json": jsoncDevcontainer,
		".devcontainer/Dockerfile":        "FROM scratch\n",
	})
	dc, err := ReadDevcontainer(filepath.Join(root, ".devcontainer", "devcontainer.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := Devcontainer{
		Path:       filepath.Join(root, ".devcontainer", "devcontainer.json"),
		Dockerfile: filepath.Join(root, ".devcontainer", "Dockerfile"),
		Context:    root,
		Args:       map[string]string{"GO_VERSION": "1.26", "USER": "dev"},
		Target:     "dev",
		Ignored:    []string{"build.cacheFrom", "features", "mounts", "postCreateCommand", "runArgs"},
	}
	if !reflect.DeepEqual(dc, want) {
		t.Fatalf("got  %+v\nwant %+v", dc, want)
	}
}

func TestReadDevcontainerForms(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		path    string // the devcontainer.json
		check   func(t *testing.T, root string, dc Devcontainer)
		wantErr string
	}{
		{
			name:  "image",
			files: map[string]string{".devcontainer.json": `{"image": "localhost/dev:1", "forwardPorts": [8080]}`},
			path:  ".devcontainer.json",
			check: func(t *testing.T, root string, dc Devcontainer) {
				if dc.Image != "localhost/dev:1" || dc.Dockerfile != "" || !reflect.DeepEqual(dc.Ignored, []string{"forwardPorts"}) {
					t.Fatalf("%+v", dc)
				}
			},
		},
		{
			name:  "image wins over a build, which is reported ignored",
			files: map[string]string{".devcontainer.json": `{"image": "i", "build": {"dockerfile": "D"}}`},
			path:  ".devcontainer.json",
			check: func(t *testing.T, root string, dc Devcontainer) {
				if dc.Image != "i" || dc.Dockerfile != "" || !reflect.DeepEqual(dc.Ignored, []string{"build"}) {
					t.Fatalf("%+v", dc)
				}
			},
		},
		{
			name: "legacy dockerFile, context defaults to the file's directory",
			files: map[string]string{
				".devcontainer/devcontainer.json": `{"dockerFile": "../docker/Dockerfile"}`,
				"docker/Dockerfile":               "FROM scratch\n",
			},
			path: ".devcontainer/devcontainer.json",
			check: func(t *testing.T, root string, dc Devcontainer) {
				if dc.Dockerfile != filepath.Join(root, "docker", "Dockerfile") || dc.Context != filepath.Join(root, ".devcontainer") {
					t.Fatalf("%+v", dc)
				}
			},
		},
		{
			name:    "dockerfile outside the repository",
			files:   map[string]string{".devcontainer/devcontainer.json": `{"build": {"dockerfile": "../../Dockerfile"}}`},
			path:    ".devcontainer/devcontainer.json",
			wantErr: `build.dockerfile "../../Dockerfile" is outside the repository`,
		},
		{
			name:    "absolute dockerfile outside the repository",
			files:   map[string]string{".devcontainer.json": `{"build": {"dockerfile": "/etc/passwd"}}`},
			path:    ".devcontainer.json",
			wantErr: `build.dockerfile "/etc/passwd" is outside the repository`,
		},
		{
			name: "context outside the repository",
			files: map[string]string{
				".devcontainer/devcontainer.json": `{"build": {"dockerfile": "Dockerfile", "context": "../.."}}`,
				".devcontainer/Dockerfile":        "FROM scratch\n",
			},
			path:    ".devcontainer/devcontainer.json",
			wantErr: `build.context "../.." is outside the repository`,
		},
		{
			name:    "missing dockerfile",
			files:   map[string]string{".devcontainer.json": `{"build": {"dockerfile": "Nope"}}`},
			path:    ".devcontainer.json",
			wantErr: `build.dockerfile "Nope" does not exist`,
		},
		{
			name:    "neither image nor dockerfile",
			files:   map[string]string{".devcontainer.json": `{"name": "x", "features": {}}`},
			path:    ".devcontainer.json",
			wantErr: ".devcontainer.json has neither image nor build.dockerfile; add one, or set container.image",
		},
		{
			name:    "compose",
			files:   map[string]string{".devcontainer.json": `{"dockerComposeFile": "c.yml", "service": "app"}`},
			path:    ".devcontainer.json",
			wantErr: "zerg does not run Docker Compose devcontainers",
		},
		{
			name:    "variable substitution",
			files:   map[string]string{".devcontainer.json": `{"image": "${localEnv:IMAGE}"}`},
			path:    ".devcontainer.json",
			wantErr: "image uses ${...} variable substitution",
		},
		{
			name:    "an image that would be an option",
			files:   map[string]string{".devcontainer.json": `{"image": "--help"}`},
			path:    ".devcontainer.json",
			wantErr: `image "--help" is not an image reference`,
		},
		{
			name:    "an arg that is not a string",
			files:   map[string]string{".devcontainer.json": `{"build": {"dockerfile": "D", "args": {"N": 3}}}`, "D": "FROM scratch"},
			path:    ".devcontainer.json",
			wantErr: "build.args.N must be a string",
		},
		{
			name:    "not JSON",
			files:   map[string]string{".devcontainer.json": `{"image": "x" "y"}`},
			path:    ".devcontainer.json",
			wantErr: ".devcontainer.json: not valid JSON with comments",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := newRepo(t, tt.files)
			dc, err := ReadDevcontainer(filepath.Join(root, filepath.FromSlash(tt.path)))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one with %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Fatalf("error of more than one line: %q", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, root, dc)
		})
	}
}

// A Dockerfile reached through a symlink that leaves the repository is
// refused as well: the check sees through symlinks.
func TestReadDevcontainerSymlinkOutside(t *testing.T) {
	outside := writeFiles(t, t.TempDir(), map[string]string{"Dockerfile": "FROM scratch\n"})
	root := newRepo(t, map[string]string{".devcontainer.json": `{"build": {"dockerfile": "link/Dockerfile"}}`})
	if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	_, err := ReadDevcontainer(filepath.Join(root, ".devcontainer.json"))
	if err == nil || !strings.Contains(err.Error(), "is outside the repository") {
		t.Fatalf("error %v", err)
	}
}

func TestBuildHash(t *testing.T) {
	root := newRepo(t, map[string]string{
		".devcontainer/devcontainer.json": `{"build": {"dockerfile": "Dockerfile", "context": "..", "args": {"A": "1"}}}`,
		".devcontainer/Dockerfile":        "FROM scratch\nCOPY . /src\n",
		"main.go":                         "package main\n",
		"sub/data.txt":                    "data\n",
		".dockerignore":                   "# comment\nbuild/\n*.log\n",
		"build/out":                       "x",
		"trace.log":                       "x",
		".zerg/runs/1/log":                "x",
	})
	path := filepath.Join(root, ".devcontainer", "devcontainer.json")
	hash := func(t *testing.T, edit func(dc *Devcontainer)) string {
		t.Helper()
		dc, err := ReadDevcontainer(path)
		if err != nil {
			t.Fatal(err)
		}
		if edit != nil {
			edit(&dc)
		}
		h, err := BuildHash(dc)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	base := hash(t, nil)
	if again := hash(t, nil); again != base {
		t.Fatalf("not stable: %s then %s", base, again)
	}
	write := func(rel, content string) func() {
		return func() { writeFiles(t, root, map[string]string{rel: content}) }
	}
	// Each change is made, hashed, and undone.
	changes := []struct {
		name    string
		do      func()
		undo    func()
		edit    func(dc *Devcontainer)
		changes bool
	}{
		{name: "devcontainer.json", do: write(".devcontainer/devcontainer.json", `{"build": {"dockerfile": "Dockerfile", "context": "..", "args": {"A": "1"}}, "name": "x"}`),
			undo: write(".devcontainer/devcontainer.json", `{"build": {"dockerfile": "Dockerfile", "context": "..", "args": {"A": "1"}}}`), changes: true},
		{name: "Dockerfile", do: write(".devcontainer/Dockerfile", "FROM scratch\n"), undo: write(".devcontainer/Dockerfile", "FROM scratch\nCOPY . /src\n"), changes: true},
		{name: "a context file", do: write("sub/data.txt", "other\n"), undo: write("sub/data.txt", "data\n"), changes: true},
		{name: "a new context file", do: write("new.txt", ""), undo: func() { os.Remove(filepath.Join(root, "new.txt")) }, changes: true},
		{name: "a file's mode", do: func() { os.Chmod(filepath.Join(root, "main.go"), 0o755) }, undo: func() { os.Chmod(filepath.Join(root, "main.go"), 0o644) }, changes: true},
		{name: "an arg", edit: func(dc *Devcontainer) { dc.Args["A"] = "2" }, changes: true},
		{name: "a new arg", edit: func(dc *Devcontainer) { dc.Args["B"] = "" }, changes: true},
		{name: "the target", edit: func(dc *Devcontainer) { dc.Target = "dev" }, changes: true},
		{name: "a base image's ID", edit: func(dc *Devcontainer) { dc.Bases = []string{"localhost/base=sha256:1"} }, changes: true},
		{name: ".git", do: write(".git/HEAD", "ref: x\n"), undo: func() {}},
		{name: ".zerg", do: write(".zerg/runs/2/log", "y"), undo: func() {}},
		{name: "a .dockerignored directory", do: write("build/out", "y"), undo: write("build/out", "x")},
		{name: "a .dockerignored pattern", do: write("other.log", "y"), undo: func() { os.Remove(filepath.Join(root, "other.log")) }},
		// As in docker, *.log is the context's top level only.
		{name: "a pattern matches from the context's root", do: write("sub/deep.log", "y"), undo: func() { os.Remove(filepath.Join(root, "sub", "deep.log")) }, changes: true},
		{name: "a .dockerignore with exceptions is not applied", do: write(".dockerignore", "build/\n!build/keep\n"), undo: write(".dockerignore", "# comment\nbuild/\n*.log\n"), changes: true},
	}
	for _, c := range changes {
		t.Run(c.name, func(t *testing.T) {
			if c.do != nil {
				c.do()
			}
			got := hash(t, c.edit)
			if c.undo != nil {
				c.undo()
			}
			if changed := got != base; changed != c.changes {
				t.Fatalf("hash changed: %v, want %v", changed, c.changes)
			}
		})
	}
	// .git and .zerg changed for good above; the hash must not see them.
	if after := hash(t, nil); after != base {
		t.Fatalf("hash after the undone changes differs: %s, was %s", after, base)
	}
}

func TestTagFor(t *testing.T) {
	sum := strings.Repeat("ab", 32)
	for root, want := range map[string]string{
		"/src/My Project": "localhost/zerg-devcontainer-my-project:abababababab",
		"/src/zerg":       "localhost/zerg-devcontainer-zerg:abababababab",
		"/src/.hidden_":   "localhost/zerg-devcontainer-hidden:abababababab",
		"/src/ÉÉ":         "localhost/zerg-devcontainer-repo:abababababab",
	} {
		if got := TagFor(root, sum); got != want {
			t.Errorf("TagFor(%q) = %q, want %q", root, got, want)
		}
	}
}

// fakeRuntime is a Runtime whose client is a shell script: it logs its
// arguments, answers `image inspect REF` by whether REF starts a line of
// its images file (the ID is the line's second word, sha256:0123 without
// one; the last line of REF wins), and `build` by adding the tag there (or
// failing with the output in its fail file).
type fakeRuntime struct {
	Runtime
	dir string
}

func newFakeRuntime(t *testing.T, images ...string) *fakeRuntime {
	t.Helper()
	dir := t.TempDir()
	script := `#!/bin/sh
d='` + dir + `'
printf '%s\n' "$*" >> "$d/log"
case "$1" in
image)
	for ref; do :; done
	id=$(awk -v r="$ref" '$1 == r { print ($2 == "" ? "sha256:0123" : $2) }' "$d/images" | tail -n 1)
	if [ -n "$id" ]; then echo "$id"; exit 0; fi
	echo "Error: $ref: image not known" >&2; exit 125;;
build)
	if [ -f "$d/fail" ]; then cat "$d/fail" >&2; exit 1; fi
	echo "STEP 1/2: FROM localhost/base"
	printf 'STEP 2/2: RUN true\r\n' >&2
	tag=; prev=
	for a; do [ "$prev" = -t ] && tag=$a; prev=$a; done
	echo "COMMIT $tag"
	printf '%s\n' "$tag" >> "$d/images"
	printf 'no newline at the end';;
*)
	echo "unexpected: $*" >&2; exit 2;;
esac
`
	bin := filepath.Join(dir, "podman")
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "images"), []byte(strings.Join(append(images, ""), "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return &fakeRuntime{Runtime: Runtime{Name: Podman, Binary: bin}, dir: dir}
}

// calls returns the client's invocations so far and forgets them.
func (f *fakeRuntime) calls(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.dir, "log"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(f.dir, "log"))
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func (f *fakeRuntime) builds(t *testing.T) (n int) {
	for _, c := range f.calls(t) {
		if strings.HasPrefix(c, "build ") {
			n++
		}
	}
	return n
}

func TestResolveImageConfigured(t *testing.T) {
	ctx := context.Background()
	// container.image wins over a devcontainer, which is not even read.
	root := newRepo(t, map[string]string{".devcontainer.json": `not json`})
	rt := newFakeRuntime(t, "localhost/mine:1")
	img, err := ResolveImage(ctx, rt.Runtime, root, "localhost/mine:1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Image{Ref: "localhost/mine:1", Source: "container.image"}); !reflect.DeepEqual(img, want) {
		t.Fatalf("got %+v, want %+v", img, want)
	}
	_, err = ResolveImage(ctx, rt.Runtime, root, "localhost/other:2", nil)
	want := "container.image localhost/other:2: the engine (podman) has no such image; zerg never pulls: build or pull it yourself (docs/container.md)"
	if err == nil || err.Error() != want {
		t.Fatalf("error %v\nwant %s", err, want)
	}
	if n := rt.builds(t); n != 0 {
		t.Fatalf("%d builds", n)
	}
}

func TestResolveImageNoImage(t *testing.T) {
	rt := newFakeRuntime(t)
	_, err := ResolveImage(context.Background(), rt.Runtime, newRepo(t, nil), "", nil)
	if err == nil || !strings.Contains(err.Error(), "set container.image in .zerg/config.yaml, or add a devcontainer (.devcontainer/devcontainer.json)") {
		t.Fatalf("error %v", err)
	}
}

func TestResolveImageDevcontainerImage(t *testing.T) {
	ctx := context.Background()
	root := newRepo(t, map[string]string{".devcontainer/devcontainer.json": `{"image": "localhost/dev:1", "postCreateCommand": "x"}`})
	rt := newFakeRuntime(t, "localhost/dev:1")
	img, err := ResolveImage(ctx, rt.Runtime, root, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Image{Ref: "localhost/dev:1", Source: ".devcontainer/devcontainer.json", Ignored: []string{"postCreateCommand"}}
	if !reflect.DeepEqual(img, want) {
		t.Fatalf("got %+v, want %+v", img, want)
	}
	rt = newFakeRuntime(t)
	_, err = ResolveImage(ctx, rt.Runtime, root, "", nil)
	if err == nil || err.Error() != ".devcontainer/devcontainer.json: image localhost/dev:1: the engine (podman) has no such image; zerg never pulls: build or pull it yourself (docs/container.md)" {
		t.Fatalf("error %v", err)
	}
}

func TestResolveImageBuildsOnceThenCaches(t *testing.T) {
	ctx := context.Background()
	root := newRepo(t, map[string]string{
		".devcontainer/devcontainer.json": `{
			// built from the repository
			"build": {"dockerfile": "Dockerfile", "context": "..", "args": {"B": "2", "A": "1"}, "target": "dev",},
		}`,
		".devcontainer/Dockerfile": "FROM localhost/base\n",
	})
	rt := newFakeRuntime(t)
	var progress bytes.Buffer
	img, err := ResolveImage(ctx, rt.Runtime, root, "", &progress)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := ReadDevcontainer(filepath.Join(root, ".devcontainer", "devcontainer.json"))
	if err != nil {
		t.Fatal(err)
	}
	dc.Bases = []string{"localhost/base="} // the engine has no such image (yet)
	sum, err := BuildHash(dc)
	if err != nil {
		t.Fatal(err)
	}
	tag := TagFor(root, sum)
	if want := (Image{Ref: tag, Source: ".devcontainer/devcontainer.json", Built: true}); !reflect.DeepEqual(img, want) {
		t.Fatalf("got %+v, want %+v", img, want)
	}
	calls := rt.calls(t)
	wantCalls := []string{
		"image inspect --format {{.Id}} localhost/base",
		"image inspect --format {{.Id}} " + tag,
		"build --pull=never -t " + tag + " -f " + filepath.Join(root, ".devcontainer", "Dockerfile") + " --build-arg A=1 --build-arg B=2 --target dev " + root,
	}
	if !reflect.DeepEqual(calls, wantCalls) {
		t.Fatalf("calls\n%q\nwant\n%q", calls, wantCalls)
	}
	wantOut := "building the devcontainer image " + tag + " from .devcontainer/devcontainer.json (podman build)\n" +
		"podman build | STEP 1/2: FROM localhost/base\n"
	if !strings.HasPrefix(progress.String(), wantOut) || !strings.Contains(progress.String(), "podman build | STEP 2/2: RUN true\n") ||
		!strings.HasSuffix(progress.String(), "podman build | no newline at the end\n") {
		t.Fatalf("progress:\n%s", progress.String())
	}

	// The second time, the image is there: no build.
	progress.Reset()
	img, err = ResolveImage(ctx, rt.Runtime, root, "", &progress)
	if err != nil || img.Built || img.Ref != tag {
		t.Fatalf("second call: %+v %v", img, err)
	}
	if n := rt.builds(t); n != 0 || progress.Len() != 0 {
		t.Fatalf("second call built %d times, said %q", n, progress.String())
	}

	// A change to the context is a new tag, built.
	writeFiles(t, root, map[string]string{"main.go": "package main\n"})
	img, err = ResolveImage(ctx, rt.Runtime, root, "", nil)
	if err != nil || !img.Built || img.Ref == tag {
		t.Fatalf("after a change: %+v %v", img, err)
	}
	tag = img.Ref

	// The base image built again under the same name (a new ID): a new
	// tag, built; nothing else changed.
	f, err := os.OpenFile(filepath.Join(rt.dir, "images"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("localhost/base sha256:feed\n")
	f.Close()
	img, err = ResolveImage(ctx, rt.Runtime, root, "", nil)
	if err != nil || !img.Built || img.Ref == tag {
		t.Fatalf("after the base image changed: %+v %v", img, err)
	}
	tag = img.Ref
	if img, err = ResolveImage(ctx, rt.Runtime, root, "", nil); err != nil || img.Built || img.Ref != tag {
		t.Fatalf("the same base again: %+v %v", img, err)
	}
}

func TestFromImages(t *testing.T) {
	for _, c := range []struct {
		name, dockerfile string
		args             map[string]string
		want             []string
	}{
		{"one", "FROM debian:bookworm\nRUN true\n", nil, []string{"debian:bookworm"}},
		{"stages", "FROM golang:1.26 AS build\nRUN go build\nFROM build AS test\nFROM --platform=linux/amd64 debian:bookworm\nCOPY --from=build /x /x\n",
			nil, []string{"golang:1.26", "debian:bookworm"}},
		{"scratch", "FROM scratch\n", nil, nil},
		{"arg default", "ARG BASE=localhost/base:1\nFROM ${BASE}\n", nil, []string{"localhost/base:1"}},
		{"build arg wins", "ARG BASE=localhost/base:1\nFROM $BASE\n", map[string]string{"BASE": "localhost/other:2"}, []string{"localhost/other:2"}},
		{"unknown arg kept", "FROM ${NOPE}:1\n", nil, []string{"${NOPE}:1"}},
		{"an arg without a default", "ARG BASE\nFROM ${BASE}\n", nil, []string{"${BASE}"}},
		{"lower case, continued", "from \\\n  localhost/base\n", nil, []string{"localhost/base"}},
		{"an image named like a later stage", "FROM base\nFROM localhost/x AS base\nFROM base\n", nil, []string{"base", "localhost/x"}},
	} {
		if got := FromImages([]byte(c.dockerfile), c.args); !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestResolveImageBuildFails(t *testing.T) {
	root := newRepo(t, map[string]string{
		".devcontainer.json": `{"build": {"dockerfile": "Dockerfile"}}`,
		"Dockerfile":         "FROM debian\nRUN apt-get update\n",
	})
	for _, tt := range []struct{ name, output, want string }{
		{"network", "STEP 2/2: RUN apt-get update\nErr:1 http://deb.debian.org bookworm InRelease\n  Temporary failure resolving 'deb.debian.org'\nError: building at STEP \"RUN apt-get update\": exit status 100\n",
			`.devcontainer.json: podman build of Dockerfile failed: it needs the network (Error: building at STEP "RUN apt-get update": exit status 100), which this machine does not reach`},
		{"other", "STEP 2/2: RUN false\nError: building at STEP \"RUN false\": exit status 1\n",
			`.devcontainer.json: podman build of Dockerfile failed (Error: building at STEP "RUN false": exit status 1); its output is above; a build that fetches base images or packages needs the network`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rt := newFakeRuntime(t)
			writeFiles(t, rt.dir, map[string]string{"fail": tt.output})
			var progress bytes.Buffer
			_, err := ResolveImage(context.Background(), rt.Runtime, root, "", &progress)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %v\nwant %s...", err, tt.want)
			}
			if !strings.Contains(progress.String(), "podman build | STEP 2/2") {
				t.Fatalf("the build's output was not streamed: %q", progress.String())
			}
		})
	}
}
