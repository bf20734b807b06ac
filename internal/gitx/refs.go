package gitx

import (
	"fmt"
	"strings"
)

// ValidateRef checks a branch or ref name against git's rules and zerg's own:
// no leading '-' (it would read as an option), nothing git would refuse.
// Checking here means a bad feature or task name fails before any git call.
func ValidateRef(name string) error {
	bad := func(why string) error { return fmt.Errorf("invalid ref name %q: %s", name, why) }
	switch {
	case name == "":
		return bad("empty")
	case strings.HasPrefix(name, "-"):
		return bad("starts with '-'")
	case strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/"):
		return bad("starts or ends with '/'")
	case strings.HasSuffix(name, "."):
		return bad("ends with '.'")
	case strings.Contains(name, ".."):
		return bad("contains '..'")
	case strings.Contains(name, "//"):
		return bad("contains '//'")
	case strings.Contains(name, "@{"), name == "@":
		return bad("contains '@{'")
	case len(name) > 200:
		return bad("longer than 200 characters")
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(" ~^:?*[\\", r) {
			return bad(fmt.Sprintf("contains %q", r))
		}
	}
	for _, part := range strings.Split(name, "/") {
		if strings.HasPrefix(part, ".") || strings.HasSuffix(part, ".lock") {
			return bad("a component starts with '.' or ends with '.lock'")
		}
	}
	return nil
}
