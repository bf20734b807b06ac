package run

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/zergrush/zerg/internal/config"
	"github.com/zergrush/zerg/internal/container"
	"github.com/zergrush/zerg/internal/sandbox"
)

// On an OS without sandbox mode (macOS; played here) a run in sandbox mode
// is refused before anything else is looked at, with one line that names
// the modes that do run there: no slot user, no bwrap, no fall back.
func TestSandboxModeRefusedWhereItCannotRun(t *testing.T) {
	old := sandboxSupported
	sandboxSupported = func() error { return sandbox.SupportedOn("darwin") }
	t.Cleanup(func() { sandboxSupported = old })
	cfg := config.Default()
	cfg.Mode = config.ModeSandbox
	opts := Options{Feature: "f", Config: cfg}
	err := driverReady(context.Background(), &opts)
	var e *Error
	if !errors.As(err, &e) || e.Kind != Setup {
		t.Fatalf("err %v, want a setup error", err)
	}
	if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, "mode: subprocess") || !strings.Contains(msg, "macOS") {
		t.Fatalf("the refusal is not one line naming the modes that run: %q", msg)
	}
	if opts.RunAs != nil || opts.box != nil {
		t.Fatal("the refusal prepared a mode")
	}
}

// Container mode on macOS (played here) is refused the same way: the
// engines there run a Linux VM, which zerg's macOS binary cannot be the
// init of. No engine is looked for.
func TestContainerModeRefusedWhereItCannotRun(t *testing.T) {
	old := containerSupported
	containerSupported = func() error { return container.SupportedOn("darwin") }
	t.Cleanup(func() { containerSupported = old })
	cfg := config.Default()
	cfg.Mode = config.ModeContainer
	opts := Options{Feature: "f", Config: cfg}
	err := driverReady(context.Background(), &opts)
	var e *Error
	if !errors.As(err, &e) || e.Kind != Setup {
		t.Fatalf("err %v, want a setup error", err)
	}
	if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, "mode: subprocess") || !strings.Contains(msg, "macOS") || strings.Contains(msg, "zerg doctor") {
		t.Fatalf("the refusal is not one line naming the modes that run: %q", msg)
	}
	if opts.RunAs != nil || opts.box != nil {
		t.Fatal("the refusal prepared a mode")
	}
}
