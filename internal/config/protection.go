package config

import "github.com/zergrush/zerg/internal/security"

// Protection is the run's one protection value (security.Protection):
// zerg's own protected paths with security.protected_paths, opened by
// security.allow_protected. Validate refuses lists it cannot build; a
// config that skipped it keeps zerg's own list, nothing opened.
func (c Config) Protection() *security.Protection {
	p, err := security.NewProtection(c.Security.ProtectedPaths, c.Security.AllowProtected)
	if err != nil {
		return security.DefaultProtection()
	}
	return p
}
