package gitx

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// InitBare creates an empty bare repository in dir and returns a runner for
// it. objectFormat is "" (git's default), "sha1" or "sha256".
func InitBare(ctx context.Context, dir, objectFormat string) (*Runner, error) {
	args := []string{"init", "--bare", "--quiet"}
	switch objectFormat {
	case "":
	case "sha1", "sha256":
		args = append(args, "--object-format="+objectFormat)
	default:
		return nil, fmt.Errorf("init %s: unknown object format %q", dir, objectFormat)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("init %s: %w", dir, err)
	}
	r := New(dir)
	if _, err := r.Run(ctx, args...); err != nil {
		return nil, err
	}
	return r, nil
}

// FetchCommit fetches one commit (and only its own tree: depth 1, no tags)
// from source, a URL or path that may not be trustworthy. Received objects
// are checked (malformed trees, ".." or ".git" path components are refused),
// and the ext and fd transports, which could run commands, are off even if
// a user config enables them.
func (r *Runner) FetchCommit(ctx context.Context, source, commit string) error {
	if source == "" || strings.HasPrefix(source, "-") {
		return fmt.Errorf("invalid fetch source %q", source)
	}
	if !isHex(commit) {
		return fmt.Errorf("invalid commit id %q", commit)
	}
	_, err := r.Run(ctx,
		"-c", "transfer.fsckObjects=true",
		"-c", "protocol.ext.allow=never",
		"-c", "protocol.fd.allow=never",
		"fetch", "--quiet", "--depth", "1", "--no-tags", "--", source, commit)
	return err
}

// TreeEntry is one entry of a recursive tree listing.
type TreeEntry struct {
	Mode string // "100644", "100755", "120000" (symlink), "160000" (submodule)
	Type string // "blob", or "commit" for a submodule
	OID  string
	Size int64  // -1 for a submodule, which has no size here
	Path string // slash path from the top of the tree
}

// TreeEntries lists every file under paths (the whole tree when none) in the
// tree of rev, recursively.
func (r *Runner) TreeEntries(ctx context.Context, rev string, paths ...string) ([]TreeEntry, error) {
	if err := revArg(rev); err != nil {
		return nil, err
	}
	args := append([]string{"ls-tree", "-r", "-z", "-l", "--full-tree", rev, "--"}, paths...)
	out, err := r.Run(ctx, args...)
	if err != nil {
		return nil, err
	}
	var list []TreeEntry
	for rec := range strings.SplitSeq(out, "\x00") {
		if rec == "" {
			continue
		}
		// "<mode> SP <type> SP <oid> SP+ <size> TAB <path>"
		meta, p, ok := strings.Cut(rec, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 4 {
			return nil, fmt.Errorf("list tree %s: unexpected git output %q", rev, rec)
		}
		e := TreeEntry{Mode: f[0], Type: f[1], OID: f[2], Size: -1, Path: p}
		if f[3] != "-" {
			n, err := strconv.ParseInt(f[3], 10, 64)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("list tree %s: bad size in %q", rev, rec)
			}
			e.Size = n
		}
		list = append(list, e)
	}
	return list, nil
}

// ReadBlobs returns the contents of the blobs named by oids, in order, read
// in one git call. Anything that is not a blob, or missing, is an error.
func (r *Runner) ReadBlobs(ctx context.Context, oids []string) ([][]byte, error) {
	if len(oids) == 0 {
		return nil, nil
	}
	var in bytes.Buffer
	for _, oid := range oids {
		// One name per line: a name with a newline would smuggle in another.
		if !isHex(oid) {
			return nil, fmt.Errorf("read blobs: invalid object id %q", oid)
		}
		in.WriteString(oid + "\n")
	}
	out, err := r.RunInput(ctx, in.Bytes(), "cat-file", "--batch")
	if err != nil {
		return nil, err
	}
	br := bufio.NewReader(strings.NewReader(out))
	blobs := make([][]byte, 0, len(oids))
	for _, oid := range oids {
		hdr, err := br.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("read blob %s: truncated git output", oid)
		}
		// "<oid> SP <type> SP <size> LF <content> LF", or "<name> missing LF".
		f := strings.Fields(hdr)
		if len(f) != 3 || f[0] != oid || f[1] != "blob" {
			return nil, fmt.Errorf("read blob %s: unexpected git output %q", oid, strings.TrimSpace(hdr))
		}
		n, err := strconv.Atoi(f[2])
		if err != nil || n < 0 || n > len(out) {
			return nil, fmt.Errorf("read blob %s: bad size %q", oid, f[2])
		}
		data := make([]byte, n+1) // the content and its trailing newline
		if _, err := io.ReadFull(br, data); err != nil || data[n] != '\n' {
			return nil, fmt.Errorf("read blob %s: truncated git output", oid)
		}
		blobs = append(blobs, data[:n])
	}
	return blobs, nil
}

// isHex reports whether s is a full object id (SHA-1 or SHA-256).
func isHex(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// OpenBare is the bare repository in dir, made (InitBare, git's default
// object format) when there is none yet: a zerg agent's store of the
// bases it fetches, kept between jobs.
func OpenBare(ctx context.Context, dir string) (*Repo, error) {
	if _, err := os.Stat(filepath.Join(dir, "HEAD")); err != nil {
		if _, err := InitBare(ctx, dir, ""); err != nil {
			return nil, err
		}
	}
	return &Repo{Runner: New(dir)}, nil
}
