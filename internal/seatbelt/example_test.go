package seatbelt_test

import (
	"fmt"

	"github.com/zergrush/zerg/internal/seatbelt"
)

// The profile of a worker with one toolchain directory and the CLI's
// install (docs/seatbelt.md shows the same text).
func ExampleProfile() {
	profile, err := seatbelt.Profile(seatbelt.Spec{
		Workspace:     "/Users/alice/zerg/ws/t1",
		Home:          "/Users/alice/zerg/runs/r1/a1/home",
		Tmp:           "/Users/alice/zerg/runs/r1/a1/home/tmp",
		ReadOnly:      []string{"/usr", "/opt/homebrew/lib/node_modules/@anthropic-ai/claude-code-darwin-arm64"},
		GatewaySocket: "/Users/alice/zerg/runs/r1/gw.sock",
		RealHome:      "/Users/alice",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(profile)
	argv, _ := seatbelt.Argv("PROFILE", "/opt/homebrew/lib/node_modules/@anthropic-ai/claude-code-darwin-arm64/claude", "-p")
	fmt.Printf("%q\n", argv)
	// Output:
	// (version 1)
	// ; Everything not allowed below is refused.
	// (deny default)
	//
	// ; The worker's processes: fork, and run programs it can read. Signals and
	// ; process information only within this sandbox, never zerg or the user's.
	// (allow process-fork)
	// (allow process-exec
	//   (subpath "/Users/alice/zerg/runs/r1/a1/home")
	//   (subpath "/Users/alice/zerg/runs/r1/a1/home/tmp")
	//   (subpath "/Users/alice/zerg/ws/t1")
	//   (subpath "/opt/homebrew/lib/node_modules/@anthropic-ai/claude-code-darwin-arm64")
	//   (subpath "/usr"))
	// (allow signal (target same-sandbox))
	// (allow process-info* (target same-sandbox))
	//
	// ; Reading kernel parameters (CPU count, memory size, OS version).
	// (allow sysctl-read)
	//
	// ; The only system services the worker may ask for.
	// (allow mach-lookup
	//   ; user and group lookups (getpwuid, getgrgid): git, the shell and node ask who the user is
	//   (global-name "com.apple.system.opendirectoryd.libinfo")
	//   ; notify(3), which libSystem uses for time-zone and configuration change notices
	//   (global-name "com.apple.system.notification_center"))
	//
	// ; stat() on the directories above each allowed path (and on nothing in them),
	// ; so that realpath and a shell's cd can walk down to it.
	// (allow file-read-metadata
	//   (literal "/")
	//   (literal "/Users")
	//   (literal "/Users/alice")
	//   (literal "/Users/alice/zerg")
	//   (literal "/Users/alice/zerg/runs")
	//   (literal "/Users/alice/zerg/runs/r1")
	//   (literal "/Users/alice/zerg/runs/r1/a1")
	//   (literal "/Users/alice/zerg/runs/r1/a1/home")
	//   (literal "/Users/alice/zerg/ws")
	//   (literal "/dev")
	//   (literal "/opt")
	//   (literal "/opt/homebrew")
	//   (literal "/opt/homebrew/lib")
	//   (literal "/opt/homebrew/lib/node_modules")
	//   (literal "/opt/homebrew/lib/node_modules/@anthropic-ai"))
	//
	// ; Read: the toolchains, the CLI's install, the workspace, the private HOME and TMPDIR.
	// (allow file-read*
	//   (subpath "/Users/alice/zerg/runs/r1/a1/home")
	//   (subpath "/Users/alice/zerg/runs/r1/a1/home/tmp")
	//   (subpath "/Users/alice/zerg/ws/t1")
	//   (subpath "/opt/homebrew/lib/node_modules/@anthropic-ai/claude-code-darwin-arm64")
	//   (subpath "/usr")
	//   (literal "/dev/null")
	//   (literal "/dev/zero")
	//   (literal "/dev/random")
	//   (literal "/dev/urandom"))
	//
	// ; Write: the workspace, the private HOME and TMPDIR, and /dev/null only.
	// (allow file-write*
	//   (subpath "/Users/alice/zerg/runs/r1/a1/home")
	//   (subpath "/Users/alice/zerg/runs/r1/a1/home/tmp")
	//   (subpath "/Users/alice/zerg/ws/t1")
	//   (literal "/dev/null"))
	//
	// ; The only way out: the gateway's unix socket. No other connection, no listening.
	// (allow network-outbound (remote unix-socket (path-literal "/Users/alice/zerg/runs/r1/gw.sock")))
	//
	// ; Never, whatever an allow above covers: the user's secrets and the keychains.
	// (deny file-read* file-write*
	//   (subpath "/Users/alice/.ssh")
	//   (subpath "/Users/alice/.aws")
	//   (subpath "/Users/alice/.gnupg")
	//   (subpath "/Users/alice/.config/gcloud")
	//   (subpath "/Users/alice/.azure")
	//   (subpath "/Users/alice/.kube")
	//   (subpath "/Users/alice/.docker")
	//   (subpath "/Users/alice/.netrc")
	//   (subpath "/Users/alice/Library/Keychains")
	//   (subpath "/Users/alice/.claude")
	//   (subpath "/Users/alice/.claude.json")
	//   (subpath "/Library/Keychains"))
	// ["/usr/bin/sandbox-exec" "-p" "PROFILE" "--" "/opt/homebrew/lib/node_modules/@anthropic-ai/claude-code-darwin-arm64/claude" "-p"]
}
