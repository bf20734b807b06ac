package textx

// Truncate is s cut to at most n characters (runes), its last one "…" when
// it was cut: a table column that keeps its width whatever the text.
func Truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
