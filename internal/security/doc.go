// Package security holds the side of worker confinement that is not the
// hook's decision (that is internal/policy): the audit log, secret scanning
// and redaction, the commit checks, the security rules and the worker users.
package security
