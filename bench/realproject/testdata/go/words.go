package cast

import "strings"

// ToBoolWordE casts i to a bool as ToBoolE does, and also accepts the words
// people write in configuration files: yes/no, y/n and on/off, in any case.
func ToBoolWordE(i interface{}) (bool, error) {
	if s, ok := indirect(i).(string); ok {
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "yes", "y", "on":
			return true, nil
		case "no", "n", "off":
			return false, nil
		}
	}
	return ToBoolE(i)
}

// ToBoolWord casts i to a bool like ToBoolWordE, or returns false.
func ToBoolWord(i interface{}) bool {
	b, _ := ToBoolWordE(i)
	return b
}
