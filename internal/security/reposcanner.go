package security

// RepoScanner is a scanner with the allowlist of the repository (or the
// directory standing for it) at root: what zerg scan, its pre-commit run
// (--staged) and zerg review's secrets check use. An allowlist that cannot
// be used is the user's to fix: its error matches ErrBadAllowlist
// (errors.Is), whether the file does not parse or cannot be read, with its
// message as it is; the scanner's own failure does not match.
func RepoScanner(root string) (*Scanner, error) {
	allow, err := LoadAllowlist(root)
	if err != nil {
		return nil, badAllowlist{err}
	}
	s, err := NewScanner()
	if err != nil {
		return nil, err
	}
	return s.WithAllowlist(allow), nil
}

// badAllowlist marks any error of LoadAllowlist as ErrBadAllowlist without
// changing its message.
type badAllowlist struct{ err error }

func (e badAllowlist) Error() string        { return e.err.Error() }
func (e badAllowlist) Unwrap() error        { return e.err }
func (e badAllowlist) Is(target error) bool { return target == ErrBadAllowlist }
