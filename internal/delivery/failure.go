package delivery

import (
	"errors"
	"fmt"

	"github.com/zergrush/zerg/internal/gitx"
	"github.com/zergrush/zerg/internal/textx"
)

// MergeFailure is the one line of a merge into `into` that could not be
// made (err is a MergeError's): which files conflict and how to resolve
// them by hand, in checkedOut when into is checked out there, or git's own
// message (never git's argv). Nothing changed in either case.
func MergeFailure(err error, feature, into, integration, checkedOut string, squash bool) error {
	var mc *gitx.MergeConflict
	if !errors.As(err, &mc) {
		return fmt.Errorf("merge into %s failed; nothing changed: %s", into, gitx.Message(err))
	}
	how := "git merge " + integration
	if squash {
		how = "git merge --squash " + integration
	}
	where := "git switch " + into + " && "
	if checkedOut != "" {
		where = "in " + checkedOut + ": "
	}
	return fmt.Errorf("%s conflicts with %s on %s; nothing changed. Resolve it by hand: %s%s, fix those files, git add them and git commit (zerg review %s first if you have not)",
		integration, into, textx.ListUpTo(mc.Paths, 10), where, how, feature)
}
