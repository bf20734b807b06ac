// Package mockapi is zerg's scripted Anthropic Messages API, spoken to by the real Claude Code CLI in tests, demos and rehearsals.
package mockapi
