package buildinfo

import (
	"runtime/debug"
	"testing"
)

// TestOf: zerg --version is the version the build set, else the
// module's, else the commit of the checkout it was built from, and never a
// made-up one such as "dev".
func TestOf(t *testing.T) {
	rev := "0123456789abcdef0123456789abcdef01234567"
	info := func(version string, settings ...debug.BuildSetting) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Path: "github.com/zergrush/zerg", Version: version}, Settings: settings}
	}
	unknown := "unknown (built without version information; build with make build)"
	for _, c := range []struct {
		name, set string
		bi        *debug.BuildInfo
		want      string
	}{
		{"make build", "v1.2.0-3-g0123456789ab-dirty", info("(devel)"), "v1.2.0-3-g0123456789ab-dirty"},
		{"go install @version", "", info("v1.2.0"), "v1.2.0"},
		{"go build in a checkout", "", info("(devel)", debug.BuildSetting{Key: "vcs.revision", Value: rev},
			debug.BuildSetting{Key: "vcs.modified", Value: "false"}), "0123456789ab"},
		{"go build with changes", "", info("(devel)", debug.BuildSetting{Key: "vcs.revision", Value: rev},
			debug.BuildSetting{Key: "vcs.modified", Value: "true"}), "0123456789ab-dirty"},
		{"no VCS stamp", "", info("(devel)"), unknown},
		{"no build info", "", nil, unknown},
	} {
		if got := Of(c.set, c.bi); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
