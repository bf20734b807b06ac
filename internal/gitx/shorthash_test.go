package gitx

import "testing"

func TestShortHash(t *testing.T) {
	for in, want := range map[string]string{
		"0123456789abcdef0123456789abcdef01234567": "0123456789",
		"0123456789": "0123456789",
		"abc":        "abc",
		"":           "",
	} {
		if got := ShortHash(in); got != want {
			t.Errorf("ShortHash(%q) = %q, want %q", in, got, want)
		}
	}
}
