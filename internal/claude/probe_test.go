package claude

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestProbeBinary(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "claude")
	if err := os.WriteFile(good, []byte("#!/bin/sh\necho '2.1.197 (Claude Code)'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := ProbeBinary(context.Background(), Location{Path: good, Source: SourceEnv}, false); err != nil {
		t.Errorf("a binary that answers: %v", err)
	}
	err := ProbeBinary(context.Background(), Location{Path: "/bin/true", Source: SourceConfig}, true)
	if err == nil || !strings.Contains(err.Error(), "claude.path") {
		t.Errorf("/bin/true: %v, want one naming claude.path", err)
	}
}

func TestBinarySetting(t *testing.T) {
	for _, c := range []struct {
		loc        Location
		configured bool
		want       string
	}{
		{Location{Source: SourceEnv}, true, "claude.path in .zerg/config.yaml"},
		{Location{Source: SourceConfig}, false, "claude.path in .zerg/config.yaml"},
		{Location{Source: SourceEnv}, false, "ZERG_CLAUDE"},
		{Location{Source: SourceRepo}, false, "the pinned install (make claude reinstalls it)"},
		{Location{}, false, "claude.path in .zerg/config.yaml (or ZERG_CLAUDE)"},
	} {
		if got := BinarySetting(c.loc, c.configured); got != c.want {
			t.Errorf("%+v %v: %q, want %q", c.loc, c.configured, got, c.want)
		}
	}
}
