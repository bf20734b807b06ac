package capture

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

func TestBufferKeepsHeadAndTail(t *testing.T) {
	for _, chunk := range []int{1, 3, 7, 100, 1000} {
		b := NewSize(10, 20)
		var all bytes.Buffer
		for i := 0; i < 200; i++ {
			s := fmt.Sprintf("%03d,", i)
			for len(s) > 0 {
				k := min(chunk, len(s))
				b.Write([]byte(s[:k]))
				all.WriteString(s[:k])
				s = s[k:]
			}
		}
		got := b.String()
		want := all.String()[:10] + fmt.Sprintf("\n… [zerg: %d bytes of output left out] …\n", all.Len()-30) + all.String()[all.Len()-20:]
		if got != want {
			t.Errorf("chunks of %d:\n got %q\nwant %q", chunk, got, want)
		}
		if b.Total() != int64(all.Len()) || b.Omitted() != int64(all.Len()-30) {
			t.Errorf("total %d omitted %d", b.Total(), b.Omitted())
		}
	}
}

func TestBufferSmallOutputWhole(t *testing.T) {
	b := New()
	b.Write([]byte("hello\n"))
	b.Write([]byte("world\n"))
	if b.String() != "hello\nworld\n" || b.Omitted() != 0 {
		t.Errorf("%q", b.String())
	}
	big := strings.Repeat("x", DefaultHead+5)
	b = New()
	b.Write([]byte(big))
	if b.String() != big {
		t.Error("output between the bounds changed")
	}
}

// A gigabyte through the buffer keeps its memory at the bound.
func BenchmarkBufferGigabyte(b *testing.B) {
	chunk := bytes.Repeat([]byte("0123456789abcdef"), 2048) // 32 KiB
	for range b.N {
		buf := New()
		for range (1 << 30) / len(chunk) {
			buf.Write(chunk)
		}
		if buf.Omitted() == 0 {
			b.Fatal("nothing left out")
		}
	}
}

func TestLimit(t *testing.T) {
	var out bytes.Buffer
	w := Limit(&out, 10, "\n[cut]\n")
	for range 5 {
		if n, err := w.Write([]byte("abcd")); n != 4 || err != nil {
			t.Fatalf("write: %d %v", n, err)
		}
	}
	if out.String() != "abcdabcdab\n[cut]\n" {
		t.Errorf("%q", out.String())
	}
}
