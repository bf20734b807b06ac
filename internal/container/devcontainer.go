package container

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/tailscale/hujson"

	"github.com/zergrush/zerg/internal/pathx"
)

// DevcontainerPaths are where a repository's devcontainer is looked for,
// relative to its root, in order.
var DevcontainerPaths = []string{".devcontainer/devcontainer.json", ".devcontainer.json"}

// Devcontainer is what zerg takes from a devcontainer.json: the image, or
// how to build it. Paths are absolute.
type Devcontainer struct {
	Path       string            // the devcontainer.json
	Image      string            // "image"; empty when built
	Dockerfile string            // "build.dockerfile" (or legacy "dockerFile"); empty when Image is set
	Context    string            // "build.context"; default: the devcontainer.json's directory
	Args       map[string]string // "build.args"
	Target     string            // "build.target"
	// Bases are the Dockerfile's FROM images as the engine has them,
	// "ref=image ID" (ID empty when it has none), filled by ResolveImage:
	// a base rebuilt or pulled again under the same name is a new build.
	Bases []string
	// Ignored are the fields present that zerg does not honour (features,
	// postCreateCommand, mounts, runArgs, ...), sorted, as JSON paths
	// ("build.cacheFrom"). The caller says so once; zerg never acts as if
	// it had applied them.
	Ignored []string
}

// Image is the image container mode runs workers in.
type Image struct {
	Ref    string // what the engine calls it
	Source string // "container.image", or the devcontainer.json relative to the repository root
	Built  bool   // ResolveImage built it now (false: configured, or a cache hit)
	// Ignored are the devcontainer's fields zerg does not honour
	// (Devcontainer.Ignored), for the caller to say once.
	Ignored []string
}

// FindDevcontainer returns the repository's devcontainer.json (one of
// DevcontainerPaths, the first that exists), or "" when it has none.
func FindDevcontainer(root string) (string, error) {
	for _, rel := range DevcontainerPaths {
		p := filepath.Join(root, filepath.FromSlash(rel))
		fi, err := os.Stat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return "", fmt.Errorf("%s: %v", rel, err)
		case !fi.Mode().IsRegular():
			return "", fmt.Errorf("%s is not a regular file; make it the devcontainer's JSON file or move it away", rel)
		}
		return p, nil
	}
	return "", nil
}

// neutralKeys are top-level fields that change nothing in a container:
// metadata and editor settings. They are neither honoured nor reported.
var neutralKeys = map[string]bool{"name": true, "$schema": true, "customizations": true}

// ReadDevcontainer reads a devcontainer.json (JSON with comments and
// trailing commas). Its image, or its Dockerfile and build context, are
// what zerg uses; every other field is listed in Ignored. A Dockerfile or
// context outside the repository holding the file is refused, as is a
// file with neither image nor Dockerfile.
//
// The repository is the nearest directory at or above the file that holds
// .git; outside one, the directory holding .devcontainer/ (or the file's
// own directory for a .devcontainer.json).
func ReadDevcontainer(path string) (Devcontainer, error) {
	path, err := filepath.Abs(path)
	if err != nil {
		return Devcontainer{}, err
	}
	return readDevcontainer(path, repoRootOf(path), path)
}

// readDevcontainer reads the devcontainer.json at path (absolute) of the
// repository at root; name is the file as errors call it.
func readDevcontainer(path, root, name string) (Devcontainer, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return Devcontainer{}, fmt.Errorf("read devcontainer: %v", err)
	}
	std, err := hujson.Standardize(raw)
	if err != nil {
		return Devcontainer{}, fmt.Errorf("%s: not valid JSON with comments: %v", name, err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(std, &top); err != nil {
		return Devcontainer{}, fmt.Errorf("%s: the top level must be a JSON object: %v", name, err)
	}
	dc := Devcontainer{Path: path}
	var dockerfile, context string
	str := func(field string, raw json.RawMessage, dst *string) error {
		if err := json.Unmarshal(raw, dst); err != nil {
			return fmt.Errorf("%s: %s must be a string", name, field)
		}
		if strings.Contains(*dst, "${") {
			return fmt.Errorf("%s: %s uses ${...} variable substitution, which zerg does not do; write the value itself", name, field)
		}
		return nil
	}
	for key, val := range top {
		var err error
		switch {
		case key == "image":
			err = str("image", val, &dc.Image)
		case key == "dockerFile": // the legacy spelling of build.dockerfile
			if dockerfile == "" {
				err = str("dockerFile", val, &dockerfile)
			}
		case key == "context": // legacy, beside dockerFile
			if context == "" {
				err = str("context", val, &context)
			}
		case key == "build":
			var build map[string]json.RawMessage
			if json.Unmarshal(val, &build) != nil {
				return Devcontainer{}, fmt.Errorf("%s: build must be an object", name)
			}
			for bk, bv := range build {
				switch bk {
				case "dockerfile", "dockerFile":
					err = str("build."+bk, bv, &dockerfile)
				case "context":
					err = str("build.context", bv, &context)
				case "target":
					err = str("build.target", bv, &dc.Target)
				case "args":
					err = readArgs(name, bv, &dc.Args)
				default:
					dc.Ignored = append(dc.Ignored, "build."+bk)
				}
				if err != nil {
					return Devcontainer{}, err
				}
			}
		case neutralKeys[key]:
		default:
			dc.Ignored = append(dc.Ignored, key)
		}
		if err != nil {
			return Devcontainer{}, err
		}
	}
	sort.Strings(dc.Ignored)
	// Both reach the engine's command line as arguments of their own.
	if strings.HasPrefix(dc.Image, "-") || strings.ContainsAny(dc.Image, " \t\n") {
		return Devcontainer{}, fmt.Errorf("%s: image %q is not an image reference; fix it", name, dc.Image)
	}
	if strings.HasPrefix(dc.Target, "-") || strings.ContainsAny(dc.Target, " \t\n") {
		return Devcontainer{}, fmt.Errorf("%s: build.target %q is not a build stage's name; fix it", name, dc.Target)
	}
	switch {
	case dc.Image == "" && dockerfile == "":
		if _, compose := top["dockerComposeFile"]; compose {
			return Devcontainer{}, fmt.Errorf("%s: zerg does not run Docker Compose devcontainers (dockerComposeFile); give it an image or build.dockerfile, or set container.image in .zerg/config.yaml", name)
		}
		return Devcontainer{}, fmt.Errorf("%s has neither image nor build.dockerfile; add one, or set container.image in .zerg/config.yaml", name)
	case dc.Image != "":
		// An image wins, as in the devcontainer CLI; a build beside it is
		// not done.
		if dockerfile != "" {
			dc.Ignored = insertSorted(dc.Ignored, "build")
		}
		dc.Args, dc.Target = nil, ""
		return dc, nil
	}
	dir := filepath.Dir(path)
	if dc.Dockerfile, err = inRepo(name, "build.dockerfile", root, dir, dockerfile); err != nil {
		return Devcontainer{}, err
	}
	if context == "" {
		context = "."
	}
	if dc.Context, err = inRepo(name, "build.context", root, dir, context); err != nil {
		return Devcontainer{}, err
	}
	return dc, nil
}

func insertSorted(s []string, v string) []string {
	i, _ := slices.BinarySearch(s, v)
	return slices.Insert(s, i, v)
}

func readArgs(name string, raw json.RawMessage, dst *map[string]string) error {
	var args map[string]any
	if json.Unmarshal(raw, &args) != nil {
		return fmt.Errorf("%s: build.args must be an object of strings", name)
	}
	out := make(map[string]string, len(args))
	for k, v := range args {
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("%s: build.args.%s must be a string", name, k)
		}
		if strings.Contains(s, "${") {
			return fmt.Errorf("%s: build.args.%s uses ${...} variable substitution, which zerg does not do; write the value itself", name, k)
		}
		if k == "" || strings.ContainsAny(k, "= \t\n") {
			return fmt.Errorf("%s: build.args has an invalid name %q", name, k)
		}
		out[k] = s
	}
	*dst = out
	return nil
}

// repoRootOf finds the repository a devcontainer.json (absolute) belongs
// to: the nearest directory at or above it that holds .git; outside a
// repository, where DevcontainerPaths would find the file.
func repoRootOf(path string) string {
	dir := filepath.Dir(path)
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		up := filepath.Dir(d)
		if up == d {
			break
		}
		d = up
	}
	if filepath.Base(dir) == ".devcontainer" {
		return filepath.Dir(dir)
	}
	return dir
}

// inRepo resolves a devcontainer path (relative to its directory dir) and
// refuses one outside root, lexically and through symlinks.
func inRepo(name, field, root, dir, rel string) (string, error) {
	p := rel
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, filepath.FromSlash(rel))
	}
	p = filepath.Clean(p)
	outside := fmt.Errorf("%s: %s %q is outside the repository (%s); zerg builds only from the repository's own files: move it inside", name, field, rel, root)
	if !pathx.Within(root, p) {
		return "", outside
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		realRoot, rerr := filepath.EvalSymlinks(root)
		if rerr == nil && !pathx.Within(realRoot, real) {
			return "", outside
		}
	} else if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%s: %s %q does not exist (paths are relative to the devcontainer.json's directory)", name, field, rel)
	}
	return p, nil
}

// ResolveImage decides the image of container mode's workers: configured
// (container.image) when set, else the repository's devcontainer: its
// image, or its Dockerfile built and tagged TagFor(...), cached by the
// hash of everything that goes into the build. zerg never pulls: an image
// the engine does not have is an error that says what to do. A build's
// output goes to progress, a prefix on each line.
func ResolveImage(ctx context.Context, rt Runtime, root, configured string, progress io.Writer) (Image, error) {
	if progress == nil {
		progress = io.Discard
	}
	root, err := filepath.Abs(root)
	if err != nil {
		return Image{}, err
	}
	if configured != "" {
		if err := needImage(ctx, rt, "container.image "+configured, configured); err != nil {
			return Image{}, err
		}
		return Image{Ref: configured, Source: "container.image"}, nil
	}
	path, err := FindDevcontainer(root)
	if err != nil {
		return Image{}, err
	}
	if path == "" {
		return Image{}, fmt.Errorf("container mode needs an image: set container.image in .zerg/config.yaml, or add a devcontainer (%s) to the repository (docs/container.md)", DevcontainerPaths[0])
	}
	source := relTo(root, path)
	dc, err := readDevcontainer(path, root, source)
	if err != nil {
		return Image{}, err
	}
	if dc.Image != "" {
		if err := needImage(ctx, rt, source+": image "+dc.Image, dc.Image); err != nil {
			return Image{}, err
		}
		return Image{Ref: dc.Image, Source: source, Ignored: dc.Ignored}, nil
	}
	if dc.Bases, err = baseIDs(ctx, rt, dc); err != nil {
		return Image{}, fmt.Errorf("%s: %v", source, err)
	}
	sum, err := BuildHash(dc)
	if err != nil {
		return Image{}, fmt.Errorf("%s: hash the build's inputs: %v", source, err)
	}
	tag := TagFor(root, sum)
	img := Image{Ref: tag, Source: source, Ignored: dc.Ignored}
	have, err := rt.ImageExists(ctx, tag)
	if err != nil {
		return Image{}, err
	}
	if have {
		return img, nil
	}
	if err := build(ctx, rt, root, dc, tag, progress); err != nil {
		return Image{}, err
	}
	img.Built = true
	return img, nil
}

// baseIDs are the Dockerfile's base images with the engine's ID of each
// (Devcontainer.Bases).
func baseIDs(ctx context.Context, rt Runtime, dc Devcontainer) ([]string, error) {
	b, err := os.ReadFile(dc.Dockerfile)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, ref := range FromImages(b, dc.Args) {
		id, err := rt.ImageID(ctx, ref)
		if err != nil {
			return nil, err
		}
		out = append(out, ref+"="+id)
	}
	return out, nil
}

// FromImages are the images a Dockerfile's FROM lines start from, in
// order, without the build's own stages (FROM an earlier stage's name)
// and scratch. ARG defaults before the first FROM and the build's args
// are put in for $NAME and ${NAME}; a reference that still holds a $ is
// kept as written (its ID is then never known: every build is new).
func FromImages(dockerfile []byte, args map[string]string) []string {
	vars := map[string]string{}
	stages := map[string]bool{"scratch": true}
	var out []string
	text := strings.ReplaceAll(string(dockerfile), "\\\n", " ")
	seenFrom := false
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		switch strings.ToUpper(f[0]) {
		case "ARG":
			if name, def, ok := strings.Cut(f[1], "="); ok && !seenFrom {
				vars[name] = strings.Trim(def, `"'`)
			}
		case "FROM":
			seenFrom = true
			rest := f[1:]
			for len(rest) > 0 && strings.HasPrefix(rest[0], "--") {
				rest = rest[1:]
			}
			if len(rest) == 0 {
				continue
			}
			ref := os.Expand(rest[0], func(k string) string {
				if v, ok := args[k]; ok {
					return v
				}
				if v, ok := vars[k]; ok {
					return v
				}
				return "${" + k + "}"
			})
			if !stages[strings.ToLower(ref)] && !slices.Contains(out, ref) {
				out = append(out, ref)
			}
			if len(rest) >= 3 && strings.EqualFold(rest[1], "AS") {
				stages[strings.ToLower(rest[2])] = true
			}
		}
	}
	return out
}

func needImage(ctx context.Context, rt Runtime, what, ref string) error {
	have, err := rt.ImageExists(ctx, ref)
	if err != nil {
		return err
	}
	if !have {
		return fmt.Errorf("%s: the engine (%s) has no such image; zerg never pulls: build or pull it yourself (docs/container.md)", what, rt.Name)
	}
	return nil
}

func relTo(root, p string) string {
	if rel, ok := pathx.Rel(root, p); ok {
		return filepath.ToSlash(rel)
	}
	return p
}

// TagFor is the tag of a devcontainer image built for the repository at
// root from inputs whose BuildHash is sum.
func TagFor(root, sum string) string {
	return "localhost/zerg-devcontainer-" + tagName(filepath.Base(root)) + ":" + sum[:12]
}

var tagInvalid = regexp.MustCompile(`[^a-z0-9._-]+`)

// tagName makes a repository's directory name a valid image name component.
func tagName(base string) string {
	s := tagInvalid.ReplaceAllString(strings.ToLower(base), "-")
	s = strings.TrimLeft(s, "._-")
	s = strings.TrimRight(s, "._-")
	if len(s) > 64 {
		s = strings.TrimRight(s[:64], "._-")
	}
	if s == "" {
		return "repo"
	}
	return s
}

// BuildHash is the hex sha256 of everything a devcontainer build reads:
// the devcontainer.json, the Dockerfile, the build args and target, and
// the build context's files (names, modes, contents, symlink targets),
// without .git, .zerg and what a simple .dockerignore excludes, and the
// base images' IDs (Bases). Two builds with the same hash make the same
// image, unless the Dockerfile fetches from the network.
func BuildHash(dc Devcontainer) (string, error) {
	h := sha256.New()
	field := func(b []byte) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	field([]byte("zerg-devcontainer-build-v1"))
	for _, p := range []string{dc.Path, dc.Dockerfile} {
		b, err := os.ReadFile(p)
		if err != nil {
			return "", err
		}
		field(b)
	}
	// The Dockerfile's place in the context matters to the build too.
	field([]byte(relTo(dc.Context, dc.Dockerfile)))
	keys := make([]string, 0, len(dc.Args))
	for k := range dc.Args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		field([]byte("arg " + k + "=" + dc.Args[k]))
	}
	field([]byte("target " + dc.Target))
	for _, b := range dc.Bases {
		field([]byte("from " + b))
	}
	if err := hashContext(field, dc.Context); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func hashContext(field func([]byte), dir string) error {
	ignore := readDockerignore(dir)
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		rel := filepath.ToSlash(relTo(dir, p))
		// .git (a directory, or a worktree's file) and zerg's own state
		// are never build inputs zerg tracks.
		if d.Name() == ".git" || d.Name() == ".zerg" || ignore.excludes(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		switch t := d.Type(); {
		case t.IsDir():
			field([]byte("d " + rel))
		case t&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			field([]byte("l " + rel + " " + target))
		case t.IsRegular():
			fi, err := d.Info()
			if err != nil {
				return err
			}
			field([]byte(fmt.Sprintf("f %s %o", rel, fi.Mode().Perm())))
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			fh := sha256.New()
			_, err = io.Copy(fh, f)
			_ = f.Close() // opened read-only: Copy's error is the one that matters
			if err != nil {
				return err
			}
			field(fh.Sum(nil))
		}
		// Sockets, fifos and devices are no build input.
		return nil
	})
}

// dockerignore is a context's .dockerignore when it is simple: patterns
// without "!" exceptions. Anything else is not applied, so that more is
// hashed, never less: a needless rebuild, never a stale image.
type dockerignore []string

func readDockerignore(dir string) dockerignore {
	b, err := os.ReadFile(filepath.Join(dir, ".dockerignore"))
	if err != nil {
		return nil
	}
	var pats dockerignore
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "!") {
			return nil
		}
		line = strings.TrimPrefix(filepath.ToSlash(filepath.Clean(line)), "/")
		if line == "." || !doublestar.ValidatePattern(line) {
			return nil
		}
		pats = append(pats, line)
	}
	return pats
}

// excludes reports whether rel (slash-separated, relative to the context)
// or one of its parent directories matches a pattern. The Dockerfile and
// .dockerignore are sent whatever it says, and so are hashed anyway.
func (ig dockerignore) excludes(rel string) bool {
	for _, pat := range ig {
		for p := rel; ; {
			if ok, _ := doublestar.Match(pat, p); ok {
				return true
			}
			i := strings.LastIndexByte(p, '/')
			if i < 0 {
				break
			}
			p = p[:i]
		}
	}
	return false
}

// networkSigns are what a build prints when it needed a network it could
// not reach.
var networkSigns = []string{
	"temporary failure in name resolution", "temporary failure resolving", "no such host", "could not resolve",
	"network is unreachable", "connection refused", "connection timed out",
	"i/o timeout", "failed to fetch", "tls handshake timeout", "unable to connect",
	"initializing source docker://", "pinging container registry",
}

// build runs the engine's build of a devcontainer's Dockerfile, its output
// streamed to progress.
func build(ctx context.Context, rt Runtime, root string, dc Devcontainer, tag string, progress io.Writer) error {
	args := BuildArgs(dc, tag)
	if rt.Name == Podman {
		// zerg never pulls: a FROM image the engine lacks is named, not
		// fetched (docker's build has no such switch; it pulls only what
		// it lacks).
		args = append([]string{args[0], "--pull=never"}, args[1:]...)
	}
	source := relTo(root, dc.Path)
	fmt.Fprintf(progress, "building the devcontainer image %s from %s (%s build)\n", tag, source, rt.Name)
	w := &prefixWriter{w: progress, prefix: rt.Name + " build | "}
	cmd := rt.Command(ctx, args...)
	cmd.Stdout, cmd.Stderr = w, w
	err := cmd.Run()
	w.Flush()
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%s: building %s stopped: %v", source, tag, ctx.Err())
	}
	out := strings.ToLower(w.tail.String())
	for _, sign := range networkSigns {
		if strings.Contains(out, sign) {
			return fmt.Errorf("%s: %s build of %s failed: it needs the network (%s), which this machine does not reach; build the image where it can and set container.image, or make the Dockerfile build offline", source, rt.Name, relTo(root, dc.Dockerfile), w.last)
		}
	}
	last := w.last
	if last == "" {
		last = err.Error()
	}
	return fmt.Errorf("%s: %s build of %s failed (%s); its output is above; a build that fetches base images or packages needs the network", source, rt.Name, relTo(root, dc.Dockerfile), last)
}

// BuildArgs are the engine arguments that build dc's image as tag.
func BuildArgs(dc Devcontainer, tag string) []string {
	args := []string{"build", "-t", tag, "-f", dc.Dockerfile}
	keys := make([]string, 0, len(dc.Args))
	for k := range dc.Args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, "--build-arg", k+"="+dc.Args[k])
	}
	if dc.Target != "" {
		args = append(args, "--target", dc.Target)
	}
	return append(args, dc.Context)
}

// prefixWriter writes each line with a prefix, and keeps the last lines
// for the error.
type prefixWriter struct {
	mu      sync.Mutex
	w       io.Writer
	prefix  string
	partial []byte
	tail    bytes.Buffer // the last tailMax bytes
	last    string       // the last non-empty line
}

const tailMax = 8 << 10

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.partial = append(p.partial, b...)
	for {
		i := bytes.IndexByte(p.partial, '\n')
		if i < 0 {
			break
		}
		p.line(p.partial[:i])
		p.partial = p.partial[i+1:]
	}
	return len(b), nil
}

// Flush writes a last line without its newline.
func (p *prefixWriter) Flush() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.partial) > 0 {
		p.line(p.partial)
		p.partial = nil
	}
}

func (p *prefixWriter) line(l []byte) {
	l = bytes.TrimRight(l, "\r")
	bw := bufio.NewWriter(p.w)
	bw.WriteString(p.prefix)
	bw.Write(l)
	bw.WriteByte('\n')
	_ = bw.Flush() // a progress line: a terminal that went away cannot be told
	if s := strings.TrimSpace(string(l)); s != "" {
		p.last = s
	}
	p.tail.Write(l)
	p.tail.WriteByte('\n')
	if p.tail.Len() > tailMax {
		rest := p.tail.Bytes()[p.tail.Len()-tailMax:]
		p.tail = *bytes.NewBuffer(append([]byte(nil), rest...))
	}
}
