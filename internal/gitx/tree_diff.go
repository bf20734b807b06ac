package gitx

import (
	"bufio"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Checks of what a worker committed read git objects, never a work tree or
// diff text: a diff hides binary files, files a .gitattributes marks -diff,
// and the blob behind a symlink. These calls give the changed entries of two
// trees and the type and size of objects, so a caller can read each blob (or
// refuse it unread when it is too large).

// TreeChange is one path that differs between two trees.
type TreeChange struct {
	Path string // slash path from the top of the tree, byte for byte as stored (any bytes but NUL)
	// Status is "A" (added), "M" (modified), "T" (type changed: a file
	// became a symlink, say) or "D" (deleted). Renames are never detected: a
	// moved file is a deletion and an addition, so its content is read.
	Status string
	// Mode is the new mode: "100644", "100755", "120000" (a symlink: the
	// blob is its target), "160000" (a gitlink: OID is a commit of another
	// repository). A deletion has "000000".
	Mode string
	// OID is the new object; all zeros for a deletion.
	OID string
	// OldMode and OldOID are the entry in the base tree; "000000" and zeros
	// for an addition.
	OldMode, OldOID string
}

// NoReplace returns a copy of r for which replacement refs (refs/replace/*)
// are ignored: with them, anyone who can write a ref in the repository can
// make git show a clean blob in place of the one a tree really holds.
func (r *Runner) NoReplace() *Runner {
	c := *r
	c.ExtraEnv = append(slices.Clone(r.ExtraEnv), "GIT_NO_REPLACE_OBJECTS=1")
	return &c
}

// ChangedEntries lists every path added, modified or deleted between the
// trees of base and commit (commits or trees), recursively, submodule
// entries included whatever .gitmodules or the config says. Replacement
// refs are ignored.
func (r *Runner) ChangedEntries(ctx context.Context, base, commit string) ([]TreeChange, error) {
	if err := revArg(base); err != nil {
		return nil, fmt.Errorf("changed entries: %w", err)
	}
	if err := revArg(commit); err != nil {
		return nil, fmt.Errorf("changed entries: %w", err)
	}
	out, err := r.Run(ctx, "--no-replace-objects", "diff-tree", "-r", "-z", "--raw", "--no-abbrev",
		"--no-renames", "--ignore-submodules=none", "--end-of-options", base, commit, "--")
	if err != nil {
		return nil, fmt.Errorf("changed entries %s..%s: %w", base, commit, err)
	}
	list, err := parseRawZ(out)
	if err != nil {
		return nil, fmt.Errorf("changed entries %s..%s: %w", base, commit, err)
	}
	return list, nil
}

// parseRawZ reads diff --raw -z output: for each path
// ":<old mode> SP <new mode> SP <old oid> SP <new oid> SP <status> NUL <path> NUL".
func parseRawZ(out string) ([]TreeChange, error) {
	var list []TreeChange
	for rest := out; rest != ""; {
		meta, after, ok := strings.Cut(rest, "\x00")
		if !ok {
			return nil, fmt.Errorf("unexpected git output %q", rest)
		}
		p, after, ok := strings.Cut(after, "\x00")
		if !ok || p == "" {
			return nil, fmt.Errorf("no path after %q", meta)
		}
		rest = after
		f := strings.Split(strings.TrimPrefix(meta, ":"), " ")
		if !strings.HasPrefix(meta, ":") || len(f) != 5 {
			return nil, fmt.Errorf("unexpected git output %q", meta)
		}
		c := TreeChange{Path: p, OldMode: f[0], Mode: f[1], OldOID: f[2], OID: f[3], Status: f[4]}
		switch c.Status {
		case "A", "M", "T", "D":
		default: // R and C carry two paths; --no-renames rules them out
			return nil, fmt.Errorf("unexpected status %q for %q", c.Status, p)
		}
		if !isMode(c.Mode) || !isMode(c.OldMode) || !isHex(c.OID) || !isHex(c.OldOID) {
			return nil, fmt.Errorf("unexpected git output %q", meta)
		}
		list = append(list, c)
	}
	return list, nil
}

func isMode(s string) bool {
	if len(s) != 6 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '7' {
			return false
		}
	}
	return true
}

// ObjectInfo is an object's type and size in bytes.
type ObjectInfo struct {
	Type string // "blob", "tree", "commit" or "tag"
	Size int64
}

// ObjectInfos returns the type and size of the objects named by oids, in
// order, in one git call that reads no content. A missing object is an
// error. Replacement refs are ignored.
func (r *Runner) ObjectInfos(ctx context.Context, oids []string) ([]ObjectInfo, error) {
	if len(oids) == 0 {
		return nil, nil
	}
	var in strings.Builder
	for _, oid := range oids {
		if !isHex(oid) {
			return nil, fmt.Errorf("object info: invalid object id %q", oid)
		}
		in.WriteString(oid + "\n")
	}
	out, err := r.RunInput(ctx, []byte(in.String()), "--no-replace-objects",
		"cat-file", "--batch-check=%(objectname) %(objecttype) %(objectsize)")
	if err != nil {
		return nil, fmt.Errorf("object info: %w", err)
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	infos := make([]ObjectInfo, 0, len(oids))
	for _, oid := range oids {
		if !sc.Scan() {
			return nil, fmt.Errorf("object info %s: truncated git output", oid)
		}
		f := strings.Fields(sc.Text())
		if len(f) != 3 || f[0] != oid {
			return nil, fmt.Errorf("object info %s: unexpected git output %q", oid, sc.Text())
		}
		n, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("object info %s: bad size %q", oid, f[2])
		}
		infos = append(infos, ObjectInfo{Type: f[1], Size: n})
	}
	return infos, nil
}
