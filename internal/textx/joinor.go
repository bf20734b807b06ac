package textx

// JoinOr joins s as a sentence offers a choice: "a", "a or b", "a, b or c".
// It is how a refusal names the values a flag takes.
func JoinOr(s []string) string {
	out := ""
	for i, x := range s {
		switch {
		case i == 0:
		case i == len(s)-1:
			out += " or "
		default:
			out += ", "
		}
		out += x
	}
	return out
}
