// Package security decides, in plain testable Go, what a worker may do: the
// write-path policy enforced by the PreToolUse hook (`zerg hook pre-tool-use`).
package security
