package config

import (
	"fmt"
	"slices"
)

// SetModeFlag sets the mode from a --mode flag that was given; the file's
// own mode was checked when it loaded. One that is not a mode (Modes) is
// the caller's bad input.
func (c *Config) SetModeFlag(mode string) error {
	if !slices.Contains(Modes, mode) {
		return fmt.Errorf("--mode %s: use --mode sandbox, --mode container, --mode subprocess or --mode tasks", mode)
	}
	c.Mode = mode
	return nil
}
