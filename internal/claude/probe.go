package claude

import (
	"context"
	"fmt"
	"time"
)

// ProbeTimeout bounds each of the checks a rush makes before it writes
// anything (the binary here, the model API's endpoint in the command).
const ProbeTimeout = 15 * time.Second

// ProbeBinary runs the binary at loc, the one workers will run, with
// --version, and refuses a release older than the oldest zerg supports.
// configured: claude.path is set in the config. A wrong binary would
// otherwise fail every attempt one after the other; the error names the
// setting that chose it, the caller's bad input.
func ProbeBinary(ctx context.Context, loc Location, configured bool) error {
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	v, err := Version(ctx, loc.Path)
	if err != nil {
		return fmt.Errorf("%s: the Claude Code CLI does not run: %v; point %s at a working claude (zerg doctor checks it)",
			loc.Path, err, BinarySetting(loc, configured))
	}
	if err := CheckSupported(loc.Path, v); err != nil {
		return fmt.Errorf("%v (%s chose it)", err, BinarySetting(loc, configured))
	}
	return nil
}

// BinarySetting names what chose the binary at loc, for the fix.
func BinarySetting(loc Location, configured bool) string {
	switch {
	case configured || loc.Source == SourceConfig:
		return "claude.path in .zerg/config.yaml"
	case loc.Source == SourceEnv:
		return "ZERG_CLAUDE"
	case loc.Source == SourceRepo:
		return "the pinned install (make claude reinstalls it)"
	}
	return "claude.path in .zerg/config.yaml (or ZERG_CLAUDE)"
}
