package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/claude"
	"github.com/zergrush/zerg/internal/cliprobe"
	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/gateway"
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
		toolVer: func(context.Context, string, ...string) (string, error) { return "git version 2.39.5", nil },
		userns:  func() usernsCheck { return usernsCheck{Available: true, Detail: "max_user_namespaces=10"} },
		sandbox: func(context.Context, *app) sandboxCheck {
			return sandboxCheck{Available: true, User: "zerg-worker (uid 999, gid 995)"}
		},
		isRoot:    func() bool { return true },
		configBin: func(*app) string { return "" },
		probe: func(_ context.Context, cfg config.Config, w claude.Spec) (*cliprobe.Report, error) {
			if w.Binary != "/x/claude" || cfg.Models.Implement != "sonnet" {
				return nil, fmt.Errorf("probed %s with %+v", w.Binary, cfg.Models)
			}
			return &cliprobe.Report{MaxTokens: 128000, Models: []cliprobe.ModelReport{{Model: "sonnet", Resolved: []string{"claude-sonnet-5-5"}}}}, nil
		},
	}
}

// The launch probe's refusal of the CLI's own request fails doctor,
// naming the setting and the fix; a probe that could not run too.
func TestDoctorProbeRefused(t *testing.T) {
	root := t.TempDir()
	for _, tc := range []struct {
		name string
		rep  *cliprobe.Report
		want []string
	}{
		{"refused", &cliprobe.Report{Models: []cliprobe.ModelReport{{Model: "sonnet", Refused: &gateway.Refusal{
			Reason: "max_tokens 128000 is above the cap of 64000 (gateway.max_tokens)", Fix: "set gateway.max_tokens in .zerg/config.yaml to at least 128000"}}}},
			[]string{"FAIL    launch probe", "model sonnet: max_tokens 128000 is above the cap of 64000 (gateway.max_tokens); set gateway.max_tokens in .zerg/config.yaml to at least 128000"}},
		{"did not run", &cliprobe.Report{Models: []cliprobe.ModelReport{{Model: "sonnet", Problem: "the CLI sent no request to the model API"}}},
			[]string{"FAIL    launch probe", "model sonnet: the CLI sent no request"}},
	} {
		d := fakeDoctorDeps(root, false, false, "2.1.332")
		d.probe = func(context.Context, config.Config, claude.Spec) (*cliprobe.Report, error) { return tc.rep, nil }
		var out bytes.Buffer
		err := runDoctor(context.Background(), newApp(&out, &out), d, "", false)
		if exitCode(err) != 1 {
			t.Errorf("%s: exit %d, want 1", tc.name, exitCode(err))
		}
		for _, w := range tc.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%s: output lacks %q:\n%s", tc.name, w, out.String())
			}
		}
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
		{"all good", false, false, "2.1.197", 0, []string{"ok      claude", "the pinned version", "ok      git", "--      bwrap", "ok      sandbox          a sandbox starts as zerg-worker (uid 999, gid 995)", "note    root"}, ptr(true)},
		{"another supported release", false, false, "2.1.200", 0, []string{"ok      claude", "supported (2.1.181 to 2.1.332)", "pinned version is 2.1.197"}, ptr(false)},
		{"older than supported", false, false, "2.1.100", 1, []string{"FAIL    claude", "older than supported (2.1.181 to 2.1.332): upgrade"}, ptr(false)},
		{"newer than tested", false, false, "2.1.400", 0, []string{"WARN    claude", "newer than tested (2.1.332): the launch probe passed",
			"ok      launch probe", "sonnet → claude-sonnet-5-5", "max_tokens 128000"}, ptr(false)},
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
				if rep.OK != (tc.code == 0) || rep.Claude.Found == tc.claudeErr || rep.Git.Found == tc.noGit || !rep.Root || rep.Bwrap.Found || !rep.Sandbox.Available {
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

// A machine where sandboxes do not start: doctor says why, and it is not a
// failure (sandbox mode is optional).
func TestDoctorSandboxUnavailable(t *testing.T) {
	d := fakeDoctorDeps(t.TempDir(), false, false, "2.1.197")
	d.sandbox = func(context.Context, *app) sandboxCheck {
		return sandboxCheck{User: "nobody (uid 65534)", Error: "sandbox: bubblewrap (bwrap) is not installed"}
	}
	var out bytes.Buffer
	if err := runDoctor(context.Background(), newApp(&out, &out), d, "", false); err != nil {
		t.Fatalf("doctor failed: %v\n%s", err, out.String())
	}
	if want := "--      sandbox          unavailable: sandbox: bubblewrap (bwrap) is not installed (optional"; !strings.Contains(out.String(), want) {
		t.Fatalf("output lacks %q:\n%s", want, out.String())
	}
	// The modes this machine can run, and what the missing one needs; the
	// config's mode (sandbox, the default) is not among them.
	if want := "note    modes            these run here: subprocess, tasks; not sandbox (sandbox: bubblewrap (bwrap) is not installed); not container (not checked); the config's mode sandbox is not among them: fix what it needs above, or set mode: subprocess in .zerg/config.yaml"; !strings.Contains(out.String(), want) {
		t.Fatalf("output lacks %q:\n%s", want, out.String())
	}
	out.Reset()
	if err := runDoctor(context.Background(), newApp(&out, &out), d, "", true); err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(out.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	if m := fmt.Sprint(raw["modes"]); m != "[subprocess tasks]" {
		t.Fatalf("modes in JSON: %s", m)
	}
	sb, _ := raw["sandbox"].(map[string]any)
	if sb["available"] != false || sb["error"] != "sandbox: bubblewrap (bwrap) is not installed" || sb["user"] != "nobody (uid 65534)" {
		t.Fatalf("sandbox in JSON: %v", raw["sandbox"])
	}
}

// In a project whose mode is container, an engine or image that does not
// work fails the doctor (exit 1, a FAIL line naming why); elsewhere it is
// optional.
func TestDoctorContainerRequiredByMode(t *testing.T) {
	d := fakeDoctorDeps(t.TempDir(), false, false, "2.1.197")
	d.container = func(context.Context, *app) containerCheck {
		return containerCheck{Runtime: "podman", Error: "container.image localhost/nope:1: the engine (podman) has no such image"}
	}
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, ".zerg"), 0o755)
	for _, tc := range []struct {
		config, want string
		fails        bool
	}{
		{"version: 1\nmode: container\ncontainer:\n  image: localhost/nope:1\n", "FAIL    container        container.image localhost/nope:1", true},
		{"version: 1\nmode: sandbox\n", "--      container        unavailable: container.image", false},
	} {
		os.WriteFile(filepath.Join(dir, ".zerg", "config.yaml"), []byte(tc.config), 0o644)
		var out bytes.Buffer
		a := newApp(&out, &out)
		a.getwd = func() (string, error) { return dir, nil }
		err := runDoctor(context.Background(), a, d, "", false)
		if (err != nil) != tc.fails || !strings.Contains(out.String(), tc.want) {
			t.Errorf("%q: err %v, want failure %v and %q in\n%s", tc.config, err, tc.fails, tc.want, out.String())
		}
	}
}
