package spec

import "testing"

// One meaning of an ownership entry for the validator, the hook and the
// result check; "dir/" owns dir and everything below, never a sibling.
func TestEntryOwns(t *testing.T) {
	for _, c := range []struct {
		entry, p string
		owns     bool
	}{
		{"a.go", "a.go", true},
		{"./a.go", "a.go", true},
		{"a.go", "b.go", false},
		{"lib/", "lib/x.go", true},
		{"lib/", "lib/deep/x.go", true},
		{"lib/", "lib", true},
		{"lib/", "library/x.go", false},
		{"lib/", "lib2", false},
		{"gen/*.pb.go", "gen/a.pb.go", true},
		{"gen/*.pb.go", "gen/sub/a.pb.go", false},
		{"docs/**", "docs/a/b.md", true},
		{"docs/**", "docsx/a.md", false},
	} {
		if got := EntryOwns(c.entry, c.p); got != c.owns {
			t.Errorf("EntryOwns(%q, %q) = %v", c.entry, c.p, got)
		}
	}
	for _, c := range []struct {
		a, b    string
		overlap bool
	}{
		{"lib/", "lib/x.go", true},
		{"lib/", "lib", true},
		{"lib/", "libx/", false},
		{"a.go", "b.go", false},
		{"gen/*.go", "gen/x/", true},
		{"src/*.go", "docs/*.md", false},
	} {
		if got := EntriesMayOverlap(c.a, c.b); got != c.overlap {
			t.Errorf("EntriesMayOverlap(%q, %q) = %v", c.a, c.b, got)
		}
	}
}
