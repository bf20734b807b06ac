package textx

import "testing"

func TestFirstLine(t *testing.T) {
	for in, want := range map[string]string{
		"":                  "",
		"one":               "one",
		"  one\ntwo\nthree": "one",
		"\n\nlater\n":       "later",
	} {
		if got := FirstLine(in); got != want {
			t.Errorf("FirstLine(%q) = %q, want %q", in, got, want)
		}
	}
}
