package mockapi

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseScenarioErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "  \n", "scenario is empty"},
		{"syntax", "tasks: [", "fix the YAML/JSON syntax"},
		{"unknown top field", "taks: []", `unknown field "taks" at the top level`},
		{"unknown turn field", "tasks: [{name: a, match: x, turns: [{txt: hi}]}]", `unknown field "txt" in a turn`},
		{"wrong type", "seed: abc", "fix the value's type"},
		{"task without name", "tasks: [{match: x, turns: [{text: a}]}]", "tasks[0].name: missing"},
		{"duplicate name", "tasks: [{name: a, match: x, turns: [{text: a}]}, {name: a, match: y, turns: [{text: a}]}]", `tasks[1] ("a").name: duplicate`},
		{"no match", "tasks: [{name: a, turns: [{text: a}]}]", `tasks[0] ("a").match: missing`},
		{"both matches", "tasks: [{name: a, match: x, match_regexp: y, turns: [{text: a}]}]", "both match and match_regexp"},
		{"bad regexp", "tasks: [{name: a, match_regexp: '(', turns: [{text: a}]}]", `tasks[0] ("a").match_regexp: error parsing regexp`},
		{"no turns", "tasks: [{name: a, match: x}]", `tasks[0] ("a").turns: empty`},
		{"empty turn", "tasks: [{name: a, match: x, turns: [{usage: {input_tokens: 1}}]}]", `tasks[0] ("a").turns[0]: neither text nor tools`},
		{"tool without name", "tasks: [{name: a, match: x, turns: [{tools: [{input: {}}]}]}]", `tasks[0] ("a").turns[0].tools[0].name: missing; give the tool name`},
		{"negative usage", "usage: {output_tokens: -1}", "usage.output_tokens: -1 is negative"},
		{"bad classifier", "classifier: maybe", `classifier: "maybe" is not allowed`},
		{"fault without effect", "faults: [{first: 1}]", "faults[0]: no effect"},
		{"two effects", "faults: [{http: 500, stall: after_headers}]", "faults[0]: 2 effects"},
		{"bad status", "faults: [{http: 200}]", "faults[0].http: 200 is not an error status"},
		{"bad malformed", "faults: [{malformed: weird}]", `faults[0].malformed: "weird" is unknown; use garbage`},
		{"bad stall", "faults: [{stall: forever}]", `faults[0].stall: "forever" is unknown`},
		{"bad drop", "faults: [{drop: sometimes}]", `faults[0].drop: "sometimes" is unknown`},
		{"bad stop", "faults: [{stop: pause}]", `faults[0].stop: "pause" is unknown`},
		{"bad rate", "faults: [{rate: 30, http: 500}]", "faults[0].rate: 30 is not a probability"},
		{"bad kind", "faults: [{kinds: [mian], http: 500}]", `faults[0].kinds: "mian" is not a request kind`},
		{"retry_after without http", "faults: [{stop: refusal, retry_after: 1}]", "only go with http"},
		{"reset_in without http", "faults: [{stop: refusal, reset_in: 20s}]", "only go with http"},
		{"duration without stall", "faults: [{http: 500, duration: 1s}]", "faults[0].duration: only goes with stall"},
		{"bad duration", "faults: [{stall: after_headers, duration: soon}]", `bad duration "soon"`},
		{"turn out of range", "tasks: [{name: a, match: x, turns: [{text: a}], faults: [{turn: 3, http: 500}]}]", `tasks[0] ("a").faults[0].turn: 3 is outside the script's turns 1..1`},
		{"turn fault turn", "default: {turns: [{text: a, faults: [{turn: 2, http: 500}]}]}", "default.turns[0].faults[0].turn: 2 inside turn 1"},
		{"any_of plus effect", "faults: [{http: 500, any_of: [{http: 429}]}]", "both an effect and any_of"},
		{"empty any_of entry", "faults: [{rate: 0.1, any_of: [{}]}]", "faults[0].any_of[0]: no effect"},
		{"selector inside any_of", "faults: [{any_of: [{http: 429, first: 1}]}]", `unknown field "first" in an any_of effect`},
		{"default without turns", "default: {turns: []}", "default.turns: empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseScenario([]byte(tc.in))
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.want) {
				t.Errorf("error %q\nwant it to contain %q", msg, tc.want)
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error is not one line: %q", msg)
			}
		})
	}
}

func TestLoadScenarioNamesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(path, []byte("tasks: [{name: a, match: x, turns: [{tools: [{input: {}}]}]}]"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadScenario(path)
	if err == nil || !strings.HasPrefix(err.Error(), path+`: tasks[0] ("a").turns[0].tools[0].name: missing`) {
		t.Errorf("error %v", err)
	}
	if _, err := LoadScenario(filepath.Join(t.TempDir(), "missing.yaml")); err == nil {
		t.Error("missing file loaded")
	}
}

func TestParseScenarioJSONAndFields(t *testing.T) {
	sc, err := ParseScenario([]byte(`{"seed": 3, "tasks": [{"name": "a", "match_regexp": "(?i)HELLO",
		"turns": [{"tools": [{"name": "Glob", "input": {"pattern": "**/*.go", "n": [1, {"k": true}]}}], "delay": 1.5},
		          {"text": "ok", "faults": [{"stall": "before_headers", "duration": "250ms"}]}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	task := sc.Tasks[0]
	if sc.Seed != 3 || !task.matches("say hello") || task.matches("bye") {
		t.Errorf("parsed %+v", sc)
	}
	if got := string(task.Turns[0].Tools[0].inputJSON); got != `{"n":[1,{"k":true}],"pattern":"**/*.go"}` {
		t.Errorf("input JSON %s", got)
	}
	if time.Duration(task.Turns[0].Delay) != 1500*time.Millisecond || time.Duration(task.Turns[1].Faults[0].Duration) != 250*time.Millisecond {
		t.Errorf("durations %v %v", task.Turns[0].Delay, task.Turns[1].Faults[0].Duration)
	}
	if f := task.Turns[1].Faults[0]; f.Turn != 2 || f.id != "tasks[0].turns[1].faults[0]" {
		t.Errorf("turn fault normalised to turn %d id %q", f.Turn, f.id)
	}
}

func TestTestdataScenariosAreValid(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.yaml")
	if len(files) == 0 {
		t.Fatal("no testdata scenarios")
	}
	for _, f := range files {
		if _, err := LoadScenario(f); err != nil {
			t.Error(err)
		}
	}
}

func FuzzParseScenario(f *testing.F) {
	f.Add([]byte(threeTurns))
	f.Add([]byte(chaos))
	f.Add([]byte(`{"tasks":[{"name":"a","match":"x","turns":[{"text":"t"}],"faults":[{"http":429,"retry_after":1}]}]}`))
	f.Add([]byte("faults: [{rate: 0.5, any_of: [{stall: after_headers, duration: 2}]}]"))
	f.Add([]byte("default: {turns: [{tools: [{name: X, input: {a: {b: [1, 2]}}}]}]}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := ParseScenario(data)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("multi-line error %q", err)
			}
			return
		}
		// A valid scenario must be servable without panics.
		srv := NewServer(sc)
		for _, task := range sc.Tasks {
			for i := range task.Turns {
				_ = srv.turnAnswer(task.Turns[i], nil)
			}
		}
	})
}

// A rehearsal waits 30 s past the longest think time any turn scripts;
// a fault's delay is no think time (control: it does not count).
func TestRehearsalTimeout(t *testing.T) {
	sc, err := ParseScenario([]byte(`
default:
  turns:
    - {text: a, delay: 2s}
tasks:
  - name: T1
    match: "Task T1"
    turns:
      - {text: b, delay: 45s}
      - {text: c, faults: [{delay: 5m}]}
faults:
  - {delay: 10m}
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := sc.RehearsalTimeout(); got != 75*time.Second {
		t.Errorf("RehearsalTimeout = %s, want 1m15s", got)
	}
	if got := (&Scenario{}).RehearsalTimeout(); got != 30*time.Second {
		t.Errorf("without think times: %s, want 30s", got)
	}
}

// The prompt is the user's text, not a reminder around it: 2.1.332 puts
// one after it when it continues past a refusal.
func TestPromptSkipsReminders(t *testing.T) {
	for blocks, want := range map[string]string{
		`[{"type":"text","text":"<system-reminder>date</system-reminder>"},{"type":"text","text":"do it"}]`:                                                                     "do it",
		`[{"type":"text","text":"<system-reminder>date</system-reminder>"},{"type":"text","text":"do it"},{"type":"text","text":"<system-reminder>stopped</system-reminder>"}]`: "do it",
		`[{"type":"text","text":"<system-reminder>only</system-reminder>"}]`:                                                                                                    "<system-reminder>only</system-reminder>",
	} {
		var r apiRequest
		if err := json.Unmarshal([]byte(`{"messages":[{"role":"user","content":`+blocks+`}]}`), &r); err != nil {
			t.Fatal(err)
		}
		if got := r.prompt(); got != want {
			t.Errorf("prompt %q, want %q", got, want)
		}
	}
}
