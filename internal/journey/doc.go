// Package journey holds the logic of the commands that take a feature from an
// idea to a merged branch around zerg rush: plan (requirements discovery),
// design (design.md and a task graph validated and repaired in rounds) and
// review (gates, secret scan, security rules and a model review of the
// integration branch). The commands in internal/cli wire it to git, the
// config and the Claude Code driver; the decisions here take a Model, so
// tests drive them with fakes.
package journey
