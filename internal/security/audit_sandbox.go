package security

// Audit record kinds of sandbox mode.
const (
	// AuditGateway summarises what the API gateway saw for one attempt:
	// requests, the statuses the API gave, tokens, the tool calls the model
	// asked for, refused egress.
	AuditGateway = "gateway"
	// AuditCommitRefused is a result refused at commit: a link out of the
	// repository, a protected path, an oversized file, a gitlink.
	AuditCommitRefused = "commit_refused"
)
