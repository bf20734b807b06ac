package security

// Audit record kinds of sandbox mode.
const (
	// AuditCommitRefused is a result refused at commit: a link out of the
	// repository, a protected path, an oversized file, a gitlink.
	AuditCommitRefused = "commit_refused"
)
