// Package buildinfo says which zerg this binary is: the version a bug report
// quotes and zerg --version prints.
package buildinfo

import "runtime/debug"

// unknown is what a binary built without any version information says, so a
// bug report shows it rather than a made-up version.
const unknown = "unknown (built without version information; build with make build)"

// Version is this binary's version: set is the one the build stamped with
// -ldflags (empty when none), the rest comes from the Go build info.
func Version(set string) string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return Of(set, bi)
}

// Of is zerg's version: the one the build set, else the module's
// (go install …@v1.2.3), else the commit it was built from (go build in a
// checkout stamps vcs.revision and vcs.modified), written as git describe
// writes an untagged commit, so make build and go build agree. A binary
// with none of these says so rather than print a made-up version: a bug
// report then shows it was built without version information.
func Of(set string, bi *debug.BuildInfo) string {
	if set != "" {
		return set
	}
	if bi == nil {
		return unknown
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return unknown
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return rev
}
