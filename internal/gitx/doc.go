// Package gitx is zerg's only way to run git: every call goes through one
// hardened runner (no repository hooks, no prompts, validated refs, "--"
// before paths, timeouts, stderr kept in errors), and operations that touch
// shared repository state are serialized.
package gitx
