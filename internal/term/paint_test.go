package term

import "testing"

func TestPaint(t *testing.T) {
	if got := Paint(true, Bold, "x"); got != Bold+"x"+Reset {
		t.Errorf("on: %q", got)
	}
	if got := Paint(false, Bold, "x"); got != "x" {
		t.Errorf("off: %q", got)
	}
	if got := Paint(true, Red, ""); got != "" {
		t.Errorf("empty: %q", got)
	}
}
