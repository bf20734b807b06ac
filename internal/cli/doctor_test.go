package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/claude"
)

func fakeDoctorDeps(root string, claudeErr, gitMissing bool, version string) doctorDeps {
	return doctorDeps{
		locate: func(string) (claude.Location, error) {
			if claudeErr {
				return claude.Location{RepoRoot: root}, claude.ErrNotFound
			}
			return claude.Location{Path: "/x/claude", Source: claude.SourceRepo, RepoRoot: root}, nil
		},
		version: func(context.Context, string) (string, error) { return version, nil },
		lookPath: func(name string) (string, error) {
			if name == "git" && !gitMissing {
				return "/usr/bin/git", nil
			}
			return "", errors.New("not found")
		},
		toolVer:   func(context.Context, string, ...string) (string, error) { return "git version 2.39.5", nil },
		userns:    func() usernsCheck { return usernsCheck{Available: true, Detail: "max_user_namespaces=10"} },
		isRoot:    func() bool { return true },
		configBin: func(*app) string { return "" },
	}
}

func TestDoctor(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "tools/claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "tools/claude/package.json"), []byte(`{"dependencies":{"@anthropic-ai/claude-code":"2.1.197"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name             string
		claudeErr, noGit bool
		version          string
		code             int
		text             []string
		match            *bool
	}{
		{"all good", false, false, "2.1.197", 0, []string{"ok      claude", "the pinned version", "ok      git", "--      bwrap", "note    root"}, ptr(true)},
		{"version drift", false, false, "2.1.200", 0, []string{"WARN    claude", "pinned version is 2.1.197"}, ptr(false)},
		{"no claude", true, false, "", 1, []string{"MISSING claude", "make claude"}, nil},
		{"no git", false, true, "2.1.197", 1, []string{"MISSING git"}, ptr(true)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, asJSON := range []bool{false, true} {
				var out bytes.Buffer
				a := newApp(&out, &out)
				err := runDoctor(context.Background(), a, fakeDoctorDeps(root, tc.claudeErr, tc.noGit, tc.version), "", asJSON)
				if got := exitCode(err); got != tc.code {
					t.Fatalf("json=%v: exit %d, want %d", asJSON, got, tc.code)
				}
				if !asJSON {
					for _, s := range tc.text {
						if !strings.Contains(out.String(), s) {
							t.Fatalf("output lacks %q:\n%s", s, out.String())
						}
					}
					continue
				}
				var rep doctorReport
				if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
					t.Fatalf("json: %v\n%s", err, out.String())
				}
				if rep.OK != (tc.code == 0) || rep.Claude.Found == tc.claudeErr || rep.Git.Found == tc.noGit || !rep.Root || rep.Bwrap.Found {
					t.Fatalf("report %+v", rep)
				}
				if (tc.match == nil) != (rep.Claude.PinnedMatch == nil) || (tc.match != nil && *tc.match != *rep.Claude.PinnedMatch) {
					t.Fatalf("pinned_match %v, want %v", rep.Claude.PinnedMatch, tc.match)
				}
				if !tc.claudeErr && rep.Claude.Pinned != "2.1.197" {
					t.Fatalf("pinned %q", rep.Claude.Pinned)
				}
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// The real command on this machine: the pinned CLI and git must be found.
func TestDoctorReal(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), []string{"doctor", "--json"}, &stdout, &stderr)
	var rep doctorReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("exit %d, stdout %q stderr %q: %v", code, stdout.String(), stderr.String(), err)
	}
	if code != 0 || !rep.OK {
		t.Fatalf("doctor exit %d: %+v (run make claude)", code, rep)
	}
	if rep.Claude.Version == "" || rep.Claude.PinnedMatch == nil || !*rep.Claude.PinnedMatch || !rep.Git.Found {
		t.Fatalf("report %+v", rep)
	}
}
