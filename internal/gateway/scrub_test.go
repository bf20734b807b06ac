package gateway

import (
	"bytes"
	"strings"
	"testing"
)

func TestScrubberAcrossBoundaries(t *testing.T) {
	key := []byte(realKey)
	text := "event: x\ndata: {\"echo\":\"" + realKey + "\"}\n\nand a tail without newline " + realKey
	for cut1 := 0; cut1 <= len(text); cut1 += 3 {
		for _, cut2 := range []int{cut1, min(cut1+5, len(text)), min(cut1+40, len(text))} {
			s := newScrubber([][]byte{key})
			var out bytes.Buffer
			out.Write(s.feed([]byte(text[:cut1])))
			out.Write(s.feed([]byte(text[cut1:cut2])))
			out.Write(s.feed([]byte(text[cut2:])))
			out.Write(s.flush())
			want := strings.ReplaceAll(text, realKey, strings.Repeat("*", len(realKey)))
			if out.String() != want {
				t.Fatalf("cuts %d,%d:\n got %q\nwant %q", cut1, cut2, out.String(), want)
			}
		}
	}
	// Complete lines are released at once; only the unfinished line waits.
	s := newScrubber([][]byte{key})
	if got := string(s.feed([]byte("event: ping\ndata: {}\n\npartial"))); got != "event: ping\ndata: {}\n\n" {
		t.Errorf("released %q", got)
	}
	// A huge line without a newline is released but for a key's length.
	s = newScrubber([][]byte{key})
	got := s.feed(bytes.Repeat([]byte("y"), holdMax+100))
	if len(got) != holdMax+100-(len(key)-1) {
		t.Errorf("released %d bytes of an over-long line", len(got))
	}
}
