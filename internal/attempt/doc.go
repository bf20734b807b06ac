// Package attempt runs one attempt of one task end to end: a workspace from
// the integration head, the prompt, a real Claude Code worker, verification,
// the ownership check of the diff, and the commit zerg makes. The same code
// serves local and (later) remote workers.
package attempt
