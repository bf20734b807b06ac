package textx

// OrList is items, or the one placeholder when there are none: a list
// that is never printed blank ("changed: nothing", not "changed: ").
func OrList(items []string, placeholder string) []string {
	if len(items) == 0 {
		return []string{placeholder}
	}
	return items
}
