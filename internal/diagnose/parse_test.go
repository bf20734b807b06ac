package diagnose

import "testing"

// The parsers on real outputs of the corpus: the first finding of each.
func TestParseRealOutputs(t *testing.T) {
	byID := map[string]corpusSample{}
	for _, s := range loadCorpus(t) {
		byID[s.ID] = s
	}
	cases := []struct {
		id   string
		want Finding
	}{
		{"go-0001", Finding{Language: "go", Kind: "compile", File: "caste.go", Line: 476, Message: "declared and not used: v"}},
		{"go-0062", Finding{Language: "go", Kind: "test_failed", File: "count_test.go", Line: 52, Test: "TestCount", Message: "expected 1, got 2"}},
		{"go-0070", Finding{Language: "go", Kind: "panic", Message: "invalid UUID length: 36"}},
		{"py-0003", Finding{Language: "python", Kind: "syntax", File: "/work/project/toml/decoder.py", Line: 715, Message: "IndentationError: unindent does not match any outer indentation level"}},
		{"py-0036", Finding{Language: "python", Kind: "type", File: "settings/cli.py", Line: 17, Message: `Argument 1 to "Version" has incompatible type "float"; expected "str" [arg-type]`}},
		{"js-0043", Finding{Language: "javascript", Kind: "npm", Message: "ENOTCACHED"}},
		{"js-0109", Finding{Language: "javascript", Kind: "type", File: "src/settings.ts", Line: 15, Message: "TS2322: Type 'string | number' is not assignable to type 'number'."}},
		{"rs-0010", Finding{Language: "rust", Kind: "type", File: "src/lib.rs", Line: 260, Message: "mismatched types"}},
		{"shell-0001", Finding{Language: "shell", Kind: "command_not_found", File: "bin/greet-all", Line: 3, Message: "greeet"}},
		{"git-0001", Finding{Language: "git", Kind: "conflict", File: "cast.go"}},
	}
	for _, c := range cases {
		s, ok := byID[c.id]
		if !ok {
			t.Errorf("%s: not in the corpus", c.id)
			continue
		}
		got := Parse(s.Output)
		if len(got) == 0 || got[0] != c.want {
			t.Errorf("%s: first finding %+v, want %+v", c.id, first(got), c.want)
		}
	}
}

func first(fs []Finding) Finding {
	if len(fs) == 0 {
		return Finding{}
	}
	return fs[0]
}

// A Python exception takes the place of the traceback's last frame in the
// project, and pytest's location line; frames are not findings.
func TestParsePlacesExceptions(t *testing.T) {
	py := "Traceback (most recent call last):\n  File \"/usr/lib/python3.11/runpy.py\", line 198, in _run_module_as_main\n  File \"/work/app/cli.py\", line 12, in main\n    default = os.environ[\"SETTINGS_FILE\"]\nKeyError: 'SETTINGS_FILE'\n"
	if got := Parse(py); len(got) != 1 || got[0].File != "/work/app/cli.py" || got[0].Line != 12 || got[0].Message != "KeyError: 'SETTINGS_FILE'" {
		t.Errorf("python: %+v", got)
	}
	pytest := "    def test_dumps():\n>       assert toml.dumps({'a': 1}) == 'a = 1\\n'\nE       AssertionError: assert 'a=1\\n' == 'a = 1\\n'\n\ntests/test_toml.py:9: AssertionError\n"
	if got := Parse(pytest); len(got) != 1 || got[0].File != "tests/test_toml.py" || got[0].Line != 9 || got[0].Kind != "assertion" {
		t.Errorf("pytest: %+v", got)
	}
	js := "TypeError: Cannot read properties of undefined (reading 'toLowerCase')\n    at parse (node_modules/ms/index.js:61:23)\n    at parse (/work/project/index.js:61:23)\n    at node:internal/main:1:1\n"
	if got := Parse(js); len(got) != 1 || got[0].File != "/work/project/index.js" || got[0].Line != 61 || got[0].Language != "javascript" {
		t.Errorf("javascript: %+v", got)
	}
}
