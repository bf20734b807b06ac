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
		// pytest: the assertion with the test its section's header names.
		{"py-0119", Finding{Language: "python", Kind: "assertion", File: "tests/test_settings.py", Line: 20, Test: "test_pin_count", Message: "AssertionError: two pins and the default"}},
		// node --test's TAP: the failed test inside its suites, with its
		// location and message, not the suite that holds it.
		{"js-0117", Finding{Language: "javascript", Kind: "assertion", File: "/work/project/test/suite.test.js", Line: 10, Test: "ms › parse › reads days",
			Message: "one day in milliseconds + actual - expected + 82800000 - 86400000 (expected 86400000, actual 82800000)"}},
		{"js-0119", Finding{Language: "javascript", Kind: "assertion", File: "/work/project/test/node/inc.test.js", Line: 6, Test: "inc › bumps the patch",
			Message: "'1.2.5' == '1.2.4' (expected 1.2.4, actual 1.2.5)"}},
		{"js-0120", Finding{Language: "javascript", Kind: "exception", File: "/work/project/test/suite.test.js", Line: 6, Test: "parse › reads bare numbers",
			Message: "Cannot read properties of undefined (reading 'toLowerCase')"}},
		// cargo test: the failed test's line takes its panic's place and
		// message.
		{"rs-0103", Finding{Language: "rust", Kind: "test_failed", File: "src/lib.rs", Line: 215, Test: "snake_tests::snake_of_camel", Message: "snake case of FooBar, got foo_bar"}},
		{"rs-0105", Finding{Language: "rust", Kind: "test_failed", File: "src/lib.rs", Line: 261, Test: "test_split", Message: "assertion `left == right` failed"}},
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

// A Rust panic is an assertion when the test raised it (its message, or
// assert!'s), a crash when the runtime did (an unwrap, an index, an
// overflow) or when the backtrace names other code than the test.
func TestParseRustPanics(t *testing.T) {
	byID := map[string]corpusSample{}
	for _, s := range loadCorpus(t) {
		byID[s.ID] = s
	}
	kinds := func(id string) []string {
		var out []string
		for _, f := range Parse(byID[id].Output) {
			if f.Language == "rust" && f.Kind != "test_failed" {
				out = append(out, f.Kind)
			}
		}
		return out
	}
	for id, want := range map[string]string{
		"rs-0103": "assertion", // assert!(ok, "snake case of FooBar, got …")
		"rs-0107": "assertion", // panic!("~1.2 should match 1.3.0") in the test
		"rs-0108": "panic",     // expect("a valid version") on an Err
		"rs-0043": "panic",     // panic! in decode_to_slice: the backtrace names it, not the test
	} {
		got := kinds(id)
		if len(got) == 0 || got[0] != want {
			t.Errorf("%s: kinds %v, want %s first", id, got, want)
		}
	}
	// Each failed test of a TAP output is one finding; the suites that
	// hold them are none.
	if fs := Parse(byID["js-0117"].Output); len(fs) != 1 || fs[0].Test != "ms › parse › reads days" {
		t.Errorf("js-0117: %+v", fs)
	}
}
