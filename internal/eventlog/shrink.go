package eventlog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
)

// MaxData bounds an event's payload as written: every line of a log stays
// well under a mebibyte, whatever a worker put in a path list, an output
// or a message, so every reader (zerg status, audit verify, the next rush)
// can always read the log back. A larger payload is shrunk (Shrink).
const MaxData = 256 << 10

// Shrink returns data within limit bytes, keeping its shape: strings are
// clipped (ending in "…[zerg: N bytes left out]"), lists keep their first
// items, and an object whose list was cut gets a field "<name>_omitted"
// with the count, so a payload still decodes into the type it came from.
// The bounds tighten until the payload fits; data that fits is returned
// as it is.
func Shrink(data json.RawMessage, limit int) json.RawMessage {
	if len(data) <= limit {
		return data
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return mustMarshal(fmt.Sprintf("[zerg: a payload of %d bytes that is not JSON was left out]", len(data)))
	}
	for strMax, items := 4096, 256; ; strMax, items = strMax/4, items/4 {
		out := mustMarshal(shrinkValue(v, strMax, items))
		if len(out) <= limit || strMax < 16 {
			if len(out) > limit {
				return mustMarshal(fmt.Sprintf("[zerg: a payload of %d bytes was left out]", len(data)))
			}
			return out
		}
	}
}

func shrinkValue(v any, strMax, items int) any {
	switch x := v.(type) {
	case string:
		return clipString(x, strMax)
	case []any:
		n := min(len(x), items)
		out := make([]any, n)
		for i := range n {
			out[i] = shrinkValue(x[i], strMax, items)
		}
		return out
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := make(map[string]any, len(x))
		for _, k := range keys {
			if l, ok := x[k].([]any); ok && len(l) > items {
				out[k+"_omitted"] = len(l) - items
			}
			out[clipString(k, 256)] = shrinkValue(x[k], strMax, items)
		}
		return out
	}
	return v
}

// clipString cuts s to about n bytes on a rune boundary, saying how much
// was left out.
func clipString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && cut < len(s) && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + fmt.Sprintf("…[zerg: %d bytes left out]", len(s)-cut)
}

func mustMarshal(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(fmt.Sprintf("[zerg: a payload was left out: %v]", err))
	}
	return b
}
