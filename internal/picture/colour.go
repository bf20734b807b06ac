package picture

// Colours of task states, shared by every format (and the dashboard's
// legend), so a picture means the same wherever it is shown. Keys are
// runstate.Status values; "" is a plan drawn without a run.
var statusFill = map[string]string{
	"":           "#eef1f5",
	"pending":    "#eef1f5",
	"ready":      "#dbe9ff",
	"running":    "#ffe08a",
	"verifying":  "#ffd166",
	"retry_wait": "#ffb86b",
	"committed":  "#b8e0c2",
	"merged":     "#5cb85c",
	"failed":     "#e5534b",
	"blocked":    "#b0b7c3",
	"cancelled":  "#b0b7c3",
}

// Fill is the colour of a status (grey for one this table lacks).
func Fill(status string) string {
	if c, ok := statusFill[status]; ok {
		return c
	}
	return "#cccccc"
}

// Legend lists the states a picture may show, in the order of a run.
func Legend() []string {
	return []string{"pending", "ready", "running", "verifying", "retry_wait", "committed", "merged", "failed", "blocked"}
}

// Marks of the critical path: its boxes' border and its edges.
const (
	CriticalStroke = "#c2185b"
	EdgeStroke     = "#8a94a6"
	TextColour     = "#1b1f24"
)
