package textx

import (
	"strconv"
	"strings"
)

// ListUpTo joins items with ", ", naming at most n of them and then how
// many more there are: a one-line report of a list of any length.
func ListUpTo(items []string, n int) string {
	if len(items) > n {
		return strings.Join(items[:n], ", ") + " and " + strconv.Itoa(len(items)-n) + " more"
	}
	return strings.Join(items, ", ")
}
