// Command zerg runs many Claude Code workers in parallel on one repository and
// delivers their work as one verified branch.
package main

import (
	"os"

	"github.com/zergrush/zerg/internal/cli"
)

func main() { os.Exit(cli.Main()) }
