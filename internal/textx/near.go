package textx

// EditDistance is the Levenshtein distance of two short names (bytes);
// names over 64 bytes are 64 apart, so that a long value costs nothing.
func EditDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 64
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Closest is the name of names nearest to s, when it is fewer than within
// edits away ("" when none is): what a "did you mean" suggests for a typo.
// The first of equally near names wins.
func Closest(s string, names []string, within int) string {
	best, bestDist := "", within
	for _, n := range names {
		if d := EditDistance(s, n); d < bestDist {
			best, bestDist = n, d
		}
	}
	return best
}
