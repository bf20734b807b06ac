package gitx

// ShortHash is a commit's id as messages show it: its first 10 characters,
// enough to name it in any repository zerg runs in; shorter strings (a
// branch name, "") are kept whole.
func ShortHash(commit string) string {
	if len(commit) > 10 {
		return commit[:10]
	}
	return commit
}
