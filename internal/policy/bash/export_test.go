package bash

// ParseBash is parseBash for the external tests (FuzzParseBash).
var ParseBash = parseBash

// SetBSDUserland sets bsdUserland for a test and returns what undoes it.
func SetBSDUserland(bsd bool) (restore func()) {
	was := bsdUserland
	bsdUserland = bsd
	return func() { bsdUserland = was }
}
