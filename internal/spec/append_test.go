package spec

import (
	"strings"
	"testing"
)

func TestAppendTasks(t *testing.T) {
	doc := "{\n  \"feature\": \"demo\",\n  \"x-note\": {\"tasks\": 1},\n  \"tasks\": [\n    {\"id\": \"A\", \"title\": \"a\", \"level\": 1}\n  ]\n}\n"
	out, err := AppendTasks([]byte(doc), map[string]any{"id": "B", "title": "b", "level": 2})
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"feature\": \"demo\",\n  \"x-note\": {\"tasks\": 1},\n  \"tasks\": [\n    {\"id\": \"A\", \"title\": \"a\", \"level\": 1},\n    {\n      \"id\": \"B\",\n      \"level\": 2,\n      \"title\": \"b\"\n    }\n  ]\n}\n"
	if string(out) != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	g, issues := Parse(out)
	if len(issues) != 0 || len(g.Tasks) != 2 || g.Tasks[1].ID != "B" {
		t.Errorf("parse: %v %v", issues, g)
	}
	// One line, no space.
	out, err = AppendTasks([]byte(`{"tasks":[{"id":"A"}],"feature":"f"}`), map[string]any{"id": "B"}, map[string]any{"id": "C"})
	if err != nil || !strings.Contains(string(out), `{"id":"A"},`) || strings.Count(string(out), `"id"`) != 3 {
		t.Errorf("%s %v", out, err)
	}
	if _, err := AppendTasks([]byte(`{"feature": "f"}`), map[string]any{}); err == nil {
		t.Error("no tasks array: no error")
	}
}
