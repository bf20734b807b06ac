package claude

import "github.com/zergrush/zerg/internal/policy"

// Policy is the hook policy an attempt launched with s gets: s normalized as
// Start does, then the policy prepare writes to policy.json. It touches no
// file; `zerg hook check` uses it to show the policy without a launch.
func (s Spec) Policy() (*policy.Policy, error) {
	n, err := s.normalize()
	if err != nil {
		return nil, err
	}
	return n.policy(), nil
}
