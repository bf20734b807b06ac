package security

// Audit record kinds of the check of a result's commit (every mode).
const (
	// AuditCommitRefused is a result refused at commit: a link out of the
	// repository, a protected path, an oversized file, a gitlink.
	AuditCommitRefused = "commit_refused"
	// AuditProtectedOpened is a change to a protected path that
	// security.allow_protected let through because the task names it;
	// zerg review and zerg merge put it before a person.
	AuditProtectedOpened = "protected_opened"
)
