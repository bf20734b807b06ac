// Package claude locates, launches, reads and stops real Claude Code (`claude -p
// --output-format stream-json`) worker processes and classifies how each run ended.
package claude
