package cli

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/zergrush/zerg/internal/delivery"
	"github.com/zergrush/zerg/internal/textx"
)

// protectedGate asks before a merge that brings changes to protected
// paths or instruction files: on a terminal it asks, otherwise it needs
// --force.
func protectedGate(a *app, feature string, c delivery.ReaderChanges, force bool) error {
	if c.Empty() {
		return nil
	}
	var parts []string
	if len(c.Protected) > 0 {
		parts = append(parts, fmt.Sprintf("%s, protected (CI, hook or editor files that run commands)", textx.ListUpTo(c.Protected, 10)))
	}
	if len(c.Instructions) > 0 {
		parts = append(parts, fmt.Sprintf("%s, instructions your coding agents load (a prompt for your next session)", textx.ListUpTo(c.Instructions, 10)))
	}
	what := fmt.Sprintf("%s changes %s", feature, strings.Join(parts, "; and "))
	if force {
		fmt.Fprintf(a.stderr, "zerg: warning: %s; merging anyway (--force)\n", what)
		return nil
	}
	if !stdinIsTerminal() {
		return failedf("%s; read those changes yourself, then merge with --force", what)
	}
	fmt.Fprintf(a.stderr, "zerg: %s.\nHave you read them, and merge? [y/N] ", what)
	line, _ := bufio.NewReader(rushStdin).ReadString('\n')
	if ans := strings.ToLower(strings.TrimSpace(line)); ans == "y" || ans == "yes" {
		return nil
	}
	return failedf("%s: not merged (not confirmed); nothing changed", feature)
}
