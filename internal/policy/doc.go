// Package policy decides, in plain testable Go, what a worker may do through
// its tools: the write, read and Bash policy enforced by the PreToolUse hook
// (`zerg hook pre-tool-use`). It is pure decision code: Decide looks at the
// file system but changes nothing and starts no process, so it is tested
// without a worker, the CLI or a sandbox. See docs/security.md.
package policy
