// Command clidrift says what a Claude Code release does differently from
// another (by default the pinned one), in what zerg relies on
// (docs/claude-code.md): the betas, body fields and max_tokens its
// requests carry and the model ids its aliases resolve to (zerg's launch
// probe, internal/cliprobe, with a longer scripted session per model and
// with a subscription token), the stream events it prints, the keys of
// the PreToolUse hook's input, the flags of its --help, the keys of its
// settings schema and the platform packages of its npm install. It is
// make cli-compat's report; it talks to no network and changes nothing.
//
//	go run ./tools/clidrift -cli tools/claude-compat/2.1.266/node_modules/.bin/claude
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	cli := flag.String("cli", "", "the claude binary to report on (required)")
	against := flag.String("against", "tools/claude/node_modules/.bin/claude", "the claude binary to compare it with")
	asJSON := flag.Bool("json", false, "print what was measured of both as JSON instead")
	flag.Parse()
	if *cli == "" {
		fmt.Fprintln(os.Stderr, "clidrift: -cli is required: the claude binary to report on")
		os.Exit(2)
	}
	ctx := context.Background()
	var facts [2]*Facts
	for i, bin := range []string{*against, *cli} {
		abs, err := filepath.Abs(bin)
		if err == nil {
			f, err := Measure(ctx, abs)
			if err != nil {
				fmt.Fprintf(os.Stderr, "clidrift: %s: %v\n", bin, err)
				os.Exit(1)
			}
			facts[i] = f
			continue
		}
		fmt.Fprintf(os.Stderr, "clidrift: %s: %v\n", bin, err)
		os.Exit(1)
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(facts)
		return
	}
	if !Report(os.Stdout, facts[0], facts[1]) {
		os.Exit(1)
	}
}
