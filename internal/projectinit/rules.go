package projectinit

import "github.com/zergrush/zerg/internal/security"

// CheckRulesCache rejects a rules cache path that is not a directory: the
// rules are fetched into it.
func CheckRulesCache(root string) error {
	for _, rel := range []string{".zerg/cache/", security.RulesCacheRel + "/"} {
		if err := CheckDirOrAbsent(root, rel); err != nil {
			return err
		}
	}
	return nil
}
