package cast

import "fmt"

// ToIntInRangeE casts i to an int, as ToIntE does, and checks that the
// result lies in [lo, hi].
func ToIntInRangeE(i interface{}, lo, hi int) (int, error) {
	n, err := ToIntE(i)
	if err != nil {
		return 0, err
	}
	if n < lo || n > hi {
		return 0, fmt.Errorf("%d is out of range [%d, %d]", n, lo, hi)
	}
	return n, nil
}

// ToIntInRange casts i to an int in [lo, hi], or returns 0.
func ToIntInRange(i interface{}, lo, hi int) int {
	n, _ := ToIntInRangeE(i, lo, hi)
	return n
}
