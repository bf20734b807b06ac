package config

import "testing"

func TestSetModeFlag(t *testing.T) {
	cfg := Default()
	if err := cfg.SetModeFlag("subprocess"); err != nil || cfg.Mode != "subprocess" {
		t.Errorf("subprocess: %v, mode %s", err, cfg.Mode)
	}
	if err := cfg.SetModeFlag("vm"); err == nil || err.Error() != "--mode vm: use --mode sandbox, --mode container, --mode subprocess or --mode tasks" || cfg.Mode != "subprocess" {
		t.Errorf("vm: %v, mode %s", err, cfg.Mode)
	}
}
