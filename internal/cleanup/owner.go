package cleanup

import "github.com/zergrush/zerg/internal/security"

// Security is Owner through internal/security.
type Security struct{}

func (Security) HandBack(ws string) error         { return security.HandBack(ws) }
func (Security) HandBackWorktree(ws string) error { return security.HandBackWorktree(ws) }
func (Security) InvokerOwns(p string) bool        { return security.InvokerOwns(p) }
