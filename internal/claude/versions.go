package claude

import (
	"fmt"

	"github.com/Masterminds/semver/v3"
)

// The supported range of Claude Code releases (docs/claude-code.md): make
// test runs the CLI contract suite against MinVersion, a release between
// and TestedVersion (the pinned one, tools/claude), each installed from
// npm with an exact version and lockfile (tools/claude-compat).
const (
	// MinVersion is the oldest release zerg supports: the oldest the
	// contract suite passes on. An older one is refused.
	MinVersion = "2.1.181"
	// TestedVersion is the newest release the contract suite ran on. A
	// newer one runs when zerg's launch probe passes with it.
	TestedVersion = "2.1.332"
)

// Support is where a version stands against the supported range.
type Support string

const (
	Supported   Support = "supported"  // between MinVersion and TestedVersion
	NewerTested Support = "newer"      // newer than TestedVersion: the launch probe decides
	OlderMin    Support = "older"      // older than MinVersion: refused
	Unreadable  Support = "unreadable" // not a version number
)

// SupportOf places a version ("2.1.332") against the supported range.
func SupportOf(version string) Support {
	v, err := semver.NewVersion(version)
	if err != nil {
		return Unreadable
	}
	switch {
	case v.LessThan(semver.MustParse(MinVersion)):
		return OlderMin
	case v.GreaterThan(semver.MustParse(TestedVersion)):
		return NewerTested
	}
	return Supported
}

// CheckSupported refuses a release older than MinVersion, naming it and
// the binary, and what to do.
func CheckSupported(path, version string) error {
	if SupportOf(version) == OlderMin {
		return fmt.Errorf("%s is Claude Code %s, older than the oldest release zerg supports (%s): upgrade it (claude update, or npm install -g @anthropic-ai/claude-code), or point ZERG_CLAUDE or claude.path at a newer one", path, version, MinVersion)
	}
	return nil
}
