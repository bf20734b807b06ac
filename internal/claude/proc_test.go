package claude

import "testing"

// Only runc's init, whatever path runc was run by, is a stranded
// container's init.
func TestContainerInit(t *testing.T) {
	for _, c := range []struct {
		argv []string
		want bool
	}{
		{[]string{"/usr/bin/runc", "init"}, true},
		{[]string{"runc", "init"}, true},
		{[]string{"/usr/bin/runc", "create", "x"}, false},
		{[]string{"/usr/bin/crun", "init"}, false},
		{[]string{"sh", "-c", "runc init"}, false},
		{[]string{"runc"}, false},
		{nil, false},
	} {
		if got := containerInit(c.argv); got != c.want {
			t.Errorf("containerInit(%q) = %v, want %v", c.argv, got, c.want)
		}
	}
}
