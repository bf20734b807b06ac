// Package bash is the hook's Bash analyser: it parses a command line the
// Bash tool would run and judges each simple command in it, before it runs,
// against the task's rules (subprocess mode) or for what reaches outside the
// sandbox (sandbox mode). internal/policy calls it with the scope it judges
// the other tools against. Like policy it is pure decision code: it looks at
// the file system but changes nothing and starts no process. See
// docs/security.md.
package bash
