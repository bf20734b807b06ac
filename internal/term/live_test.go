package term

import "testing"

func TestPlainWanted(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, c := range []struct {
		plain bool
		env   map[string]string
		want  bool
	}{
		{false, map[string]string{"TERM": "xterm-256color"}, false},
		{true, nil, true},
		{false, map[string]string{"ZERG_NO_TUI": "1"}, true},
		{false, map[string]string{"TERM": "dumb"}, true},
	} {
		if got := PlainWanted(c.plain, env(c.env)); got != c.want {
			t.Errorf("plain %v, env %v: %v, want %v", c.plain, c.env, got, c.want)
		}
	}
}
