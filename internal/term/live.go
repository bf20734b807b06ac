package term

// PlainWanted reports whether the user asked for plain lines instead of a
// live view at a terminal: --plain (plain), ZERG_NO_TUI, or a terminal
// that draws nothing (TERM=dumb). getenv reads the environment.
func PlainWanted(plain bool, getenv func(string) string) bool {
	return plain || getenv("ZERG_NO_TUI") != "" || getenv("TERM") == "dumb"
}
