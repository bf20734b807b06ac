package security

import (
	"bytes"
	"context"
	"os"
	"strings"

	"github.com/zergrush/zerg/internal/gitx"
)

// MaxScanFileSize: bigger files are skipped (generated data, archives,
// vendored bundles), as gitleaks' own CLI does with --max-target-megabytes.
const MaxScanFileSize = 1 << 20

// ScanReport is what a scan found, as zerg scan --json prints it.
type ScanReport struct {
	Findings []Finding `json:"findings"`
	Files    int       `json:"files"`   // files scanned (with added lines, for --staged)
	Skipped  int       `json:"skipped"` // binary, larger than 1 MiB, or unreadable
}

// ScanStaged scans the lines added by `git diff --cached` of the repository
// at root: what zerg's pre-commit hook refuses to let through. An inherited
// GIT_INDEX_FILE is kept: inside a pre-commit hook of "git commit -a" or
// "git commit FILE" it names the temporary index that is being committed.
// The error is git's, unwrapped, for the caller to report, or ctx's own
// once ctx is done (an interrupted scan is not git's failure).
func (s *Scanner) ScanStaged(ctx context.Context, root string) (*ScanReport, error) {
	// StagedDiff fixes the diff format whatever the user's config says.
	g := gitx.New(root)
	if idx, ok := os.LookupEnv("GIT_INDEX_FILE"); ok {
		// As a pre-commit hook under `git commit -a`, the staged content is in
		// the temporary index git names here; the hardened runner drops every
		// other inherited GIT_* variable.
		g.ExtraEnv = append(g.ExtraEnv, "GIT_INDEX_FILE="+idx)
	}
	diff, err := g.StagedDiff(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	res := &ScanReport{Findings: s.ScanDiff(diff)}
	res.Files = strings.Count("\n"+diff, "\ndiff --git ")
	if res.Findings == nil {
		res.Findings = []Finding{}
	}
	return res, nil
}

// ReadScannable returns the file's content, or why it is skipped (binary,
// larger than MaxScanFileSize, unreadable). A skipped file still goes
// through the rules on file names alone.
func ReadScannable(path string) ([]byte, string) {
	f, err := os.Open(path)
	if err != nil {
		return nil, "cannot read: " + err.Error()
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, "cannot read: " + err.Error()
	}
	if fi.Size() > MaxScanFileSize {
		return nil, "larger than 1 MiB"
	}
	b := make([]byte, fi.Size())
	n, err := f.ReadAt(b, 0)
	if err != nil && n != len(b) {
		return nil, "cannot read: " + err.Error()
	}
	// git's own test: a NUL byte in the first 8000 bytes means binary.
	if bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0 {
		return nil, "binary"
	}
	return b, ""
}
