package diagnose

import (
	"slices"
	"testing"
)

func TestCommandPrograms(t *testing.T) {
	for cmd, want := range map[string][]string{
		"go test ./...": {"go"},
		"GOPROXY=off GOFLAGS=-mod=mod go build ./...":        {"go"},
		"runuser -u nobody -- /usr/bin/python3 -m pytest -q": {"python3", "pytest"},
		"timeout 5 node --test":                              {"node"},
		"npx tsc --noEmit":                                   {"tsc"},
		"for i in 1 2; do cargo test -q; done":               {"for", "cargo", "done"},
		"env -u X ./bin/deploy":                              {"deploy"},
	} {
		if got := commandPrograms(cmd); !slices.Equal(got, want) {
			t.Errorf("%q: %q, want %q", cmd, got, want)
		}
	}
}
