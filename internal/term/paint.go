package term

// Paint wraps s in style (one of this palette's sequences) and Reset when
// on (colour is wanted on that output); an empty s stays empty, so a blank
// cell gets no stray sequences.
func Paint(on bool, style, s string) string {
	if !on || s == "" {
		return s
	}
	return style + s + Reset
}
