// Package eventlog is an append-only JSON-lines log with one writer, an fsync
// per event and a SHA-256 hash chain: run state and the audit trail are
// derived from it by replay, a torn last line (a crash mid-write) is dropped,
// and any edited, removed or reordered line is detected.
package eventlog
