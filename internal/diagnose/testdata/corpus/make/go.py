#!/usr/bin/env python3
"""Go samples: real modules from the Go module proxy, copied, broken, built and tested."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import Corpus, SCRATCH, sh, base_env  # noqa: E402

SRC = os.path.join(SCRATCH, "src", "go")
MODS = {
    "cast": "github.com/spf13/cast@v1.7.1",
    "uuid": "github.com/google/uuid@v1.6.0",
    "errors": "github.com/pkg/errors@v0.9.1",
    "pflag": "github.com/spf13/pflag@v1.0.5",
    "lru": "github.com/hashicorp/golang-lru/v2@v2.0.7",
    "xxhash": "github.com/cespare/xxhash/v2@v2.3.0",
    "color": "github.com/fatih/color@v1.18.0",
}


def prepare():
    """Copy each module out of the module cache into a writable git repository."""
    os.makedirs(SRC, exist_ok=True)
    env = base_env()
    for name, mod in MODS.items():
        d = os.path.join(SRC, mod.split("@")[0])
        if os.path.exists(os.path.join(d, ".prepared")):
            continue
        sh(f"rm -rf {d}")
        path, ver = mod.split("@")
        info = sh(f"cd {SCRATCH} && go mod download -json {mod}", env=env)
        import json
        src = json.loads(info)["Dir"]
        sh(f"mkdir -p {os.path.dirname(d)} && cp -R {src} {d} && chmod -R u+w {d}")
        if name == "errors":  # v0.9.1 predates modules
            sh("go mod init github.com/pkg/errors && go mod edit -go=1.14", cwd=d, env=env)
            # closures are named differently since Go 1.22: the pristine suite skips that one test
            t = open(os.path.join(d, "stack_test.go")).read()
            open(os.path.join(d, "stack_test.go"), "w").write(t.replace(
                "}\n\nfunc TestStackTrace(t *testing.T) {\n", "}\nfunc TestStackTrace(t *testing.T) {\n\tt.Skip(\"closure names changed in Go 1.22\")\n", 1))
        if name == "pflag":  # go vet of Go 1.26 rejects one line of flag_test.go; keep the suite green
            t = open(os.path.join(d, "flag_test.go")).read()
            open(os.path.join(d, "flag_test.go"), "w").write(
                t.replace('fmt.Println("\\n" + defaultOutput)', 'fmt.Print("\\n" + defaultOutput)'))
        if name == "lru":  # assertion-style tests use testify
            sh("go get github.com/stretchr/testify@v1.9.0", cwd=d, env=env)
            open(os.path.join(d, "testify_test.go"), "w").write(LRU_TESTIFY)
            sh("go mod tidy", cwd=d, env=env)
        vet = "true" if name == "xxhash" else "go vet ./..."  # xxhash's assembly trips vet's asmdecl check
        sh(f"go mod download && go build ./... && {vet} && go test -count=1 ./...", cwd=d, env=env)
        sh("git init -q && git add -A && git -c user.name=corpus -c user.email=corpus@invalid commit -qm pristine", cwd=d)
        open(os.path.join(d, ".prepared"), "w").write("")


LRU_TESTIFY = '''package lru

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCacheKeepsNewest(t *testing.T) {
	c, err := New[string, int](3)
	require.NoError(t, err)
	for i, k := range []string{"a", "b", "c", "d"} {
		c.Add(k, i)
	}
	assert.Equal(t, []string{"b", "c", "d"}, c.Keys())
	v, ok := c.Get("d")
	require.True(t, ok)
	assert.Equal(t, 3, v)
}
'''


def main():
    prepare()
    C = Corpus("go")
    run = C.run
    cast, uuid, errs, pflag, lru, xx, color = (os.path.join(SRC, MODS[n].split("@")[0]) for n in
                                               ("cast", "uuid", "errors", "pflag", "lru", "xxhash", "color"))
    P = MODS
    E = base_env()
    local = base_env(GOTOOLCHAIN="local")

    # ---------------- compile_error
    run("compile_error", P["cast"], cast, "added an unused local `v := indirect(i)` in ToIntE (caste.go)",
        [("sub", "caste.go", "func ToIntE(i interface{}) (int, error) {\n\ti = indirect(i)\n",
          "func ToIntE(i interface{}) (int, error) {\n\tv := indirect(i)\n\ti = indirect(i)\n")],
        "go build ./...", r"declared and not used")
    run("compile_error", P["uuid"], uuid, "deleted `return uuid` at the end of Must (uuid.go)",
        [("sub", "uuid.go", "\t\tpanic(err)\n\t}\n\treturn uuid\n}", "\t\tpanic(err)\n\t}\n}")],
        "go build ./...", r"missing return")
    run("compile_error", P["errors"], errs, "added an import of \"os\" to errors.go that nothing uses",
        [("sub", "errors.go", 'import (\n\t"fmt"\n', 'import (\n\t"fmt"\n\t"os"\n')],
        "go build ./...", r"imported and not used")
    run("compile_error", P["pflag"], pflag, "repeated `i, err := strconv.Atoi(sval)` in countConv (count.go)",
        [("sub", "count.go", "\ti, err := strconv.Atoi(sval)\n", "\ti, err := strconv.Atoi(sval)\n\ti, err := strconv.Atoi(sval)\n")],
        "go build ./...", r"no new variables")
    run("compile_error", P["lru"], lru, "removed `return evict` from simplelru LRU.Add",
        [("sub", "simplelru/lru.go", "\t\tc.removeOldest()\n\t}\n\treturn evict\n}", "\t\tc.removeOldest()\n\t}\n}")],
        "go build ./...", r"missing return")
    run("compile_error", P["xxhash"], xx, "assigned to the constant prime1 inside ResetWithSeed",
        [("sub", "xxhash.go", "\td.v1 = seed + prime1 + prime2\n", "\tprime1 = seed\n\td.v1 = seed + prime1 + prime2\n")],
        "go build ./...", r"cannot assign to prime1")
    run("compile_error", P["cast"], cast, "put a `break` outside any loop or switch in ToBool (cast.go)",
        [("sub", "cast.go", "func ToBool(i interface{}) bool {\n", "func ToBool(i interface{}) bool {\n\tbreak\n")],
        "go vet ./...", r"break not in for, switch, or select")
    run("compile_error", P["pflag"], pflag, "declared a second NArg method on FlagSet in a new file extra.go",
        [("write", "extra.go", "package pflag\n\n// NArg counts the arguments left.\nfunc (f *FlagSet) NArg() int { return len(f.args) }\n")],
        "go build ./...", r"already declared|redeclared")
    run("compile_error", P["uuid"], uuid, "added an unused variable `want` in TestNew (uuid_test.go)",
        [("sub", "uuid_test.go", "func TestNew(t *testing.T) {\n", "func TestNew(t *testing.T) {\n\twant := 16\n")],
        "go test ./...", r"declared and not used")
    run("compile_error", P["color"], color, "deleted the `return c` at the end of getCachedColor (color.go)",
        [("sub", "color.go", "\t\tcolorsCache[p] = c\n\t}\n\n\treturn c\n}", "\t\tcolorsCache[p] = c\n\t}\n}")],
        "go build ./...", r"missing return")
    run("compile_error", P["errors"], errs, "used `goto done` with no label `done` in Cause (errors.go)",
        [("sub", "errors.go", "\tfor err != nil {\n", "\tgoto done\n\tfor err != nil {\n")],
        "go test ./...", r"label done not defined")

    # ---------------- type_error
    run("type_error", P["cast"], cast, "ToInt now returns the int64 from ToInt64E (cast.go)",
        [("sub", "cast.go", "\tv, _ := ToIntE(i)\n", "\tv, _ := ToInt64E(i)\n")],
        "go build ./...", r"cannot use v \(variable of type int64\)")
    run("type_error", P["uuid"], uuid, "NewString returns the UUID without .String() (version4.go)",
        [("sub", "version4.go", "\treturn Must(NewRandom()).String()\n", "\treturn Must(NewRandom())\n")],
        "go build ./...", r"cannot use")
    run("type_error", P["errors"], errs, "New stores []byte(message) in the string field msg",
        [("sub", "errors.go", "\t\tmsg:   message,\n\t\tstack: callers(),", "\t\tmsg:   []byte(message),\n\t\tstack: callers(),")],
        "go build ./...", r"cannot use")
    run("type_error", P["pflag"], pflag, "countValue.Set adds the string \"1\" instead of 1 (count.go)",
        [("sub", "count.go", "*i = countValue(*i + 1)", "*i = *i + \"1\"")],
        "go build ./...", r"cannot convert|mismatched types")
    run("type_error", P["lru"], lru, "simplelru Add indexes items with the value instead of the key",
        [("sub", "simplelru/lru.go", "\tc.items[key] = ent\n", "\tc.items[value] = ent\n")],
        "go build ./...", r"cannot use value")
    run("type_error", P["xxhash"], xx, "Write adds the int n to the uint64 total without a conversion",
        [("sub", "xxhash.go", "\td.total += uint64(n)\n", "\td.total += n\n")],
        "go build ./...", r"mismatched types")
    run("type_error", P["uuid"], uuid, "a test calls Parse with an int (uuid_test.go)",
        [("sub", "uuid_test.go", "func TestNew(t *testing.T) {\n", "func TestNew(t *testing.T) {\n\t_, _ = Parse(1234)\n")],
        "go vet ./...", r"cannot use 1234")
    run("type_error", P["cast"], cast, "a new test assigns ToInt's result to a string variable",
        [("write", "extra_test.go", "package cast\n\nimport \"testing\"\n\nfunc TestToIntString(t *testing.T) {\n\tvar s string = ToInt(\"8\")\n\tif s != \"8\" {\n\t\tt.Fatal(s)\n\t}\n}\n")],
        "go test ./...", r"cannot use ToInt")
    run("type_error", P["color"], color, "getCachedColor returns the Attribute instead of *Color",
        [("sub", "color.go", "\t\tcolorsCache[p] = c\n\t}\n\n\treturn c\n}", "\t\tcolorsCache[p] = c\n\t}\n\n\treturn p\n}")],
        "go build ./...", r"cannot use p")
    run("type_error", P["errors"], errs, "Wrap passes message (string) where an error is wanted in WithStack",
        [("sub", "errors.go", "\treturn &withStack{\n\t\terr,\n\t\tcallers(),\n\t}\n}\n\n// Wrapf",
          "\treturn WithStack(message)\n}\n\n// Wrapf")],
        "go build ./...", r"cannot use message")
    run("type_error", P["lru"], lru, "a test builds New[string, int] and adds an int key",
        [("write", "typed_test.go", "package lru\n\nimport \"testing\"\n\nfunc TestTypedKeys(t *testing.T) {\n\tc, _ := New[string, int](2)\n\tc.Add(1, 1)\n}\n")],
        "go test ./...", r"cannot use 1")
    run("type_error", P["pflag"], pflag, "GetCount returns the interface{} from getFlagType without assertion",
        [("sub", "count.go", "\treturn val.(int), nil", "\treturn val, nil")],
        "go build ./...", r"cannot use val|missing type assertion")

    # ---------------- undefined_symbol
    run("undefined_symbol", P["cast"], cast, "renamed ToIntE to ToIntegerE in caste.go, callers unchanged",
        [("sub", "caste.go", "func ToIntE(", "func ToIntegerE(")],
        "go build ./...", r"undefined: ToIntE")
    run("undefined_symbol", P["uuid"], uuid, "renamed NewRandom to NewRandomUUID in version4.go, callers unchanged",
        [("sub", "version4.go", "func NewRandom() (UUID, error) {", "func NewRandomUUID() (UUID, error) {")],
        "go build ./...", r"undefined: NewRandom")
    run("undefined_symbol", P["errors"], errs, "renamed callers to captureCallers in stack.go",
        [("sub", "stack.go", "func callers() *stack {", "func captureCallers() *stack {")],
        "go build ./...", r"undefined: callers")
    run("undefined_symbol", P["pflag"], pflag, "typo strconv.Atio in countConv (count.go)",
        [("sub", "count.go", "strconv.Atoi(sval)", "strconv.Atio(sval)")],
        "go build ./...", r"undefined: strconv.Atio")
    run("undefined_symbol", P["lru"], lru, "NewLRU calls internal.NewLRUList, which does not exist",
        [("sub", "simplelru/lru.go", "internal.NewList[K, V]()", "internal.NewLRUList[K, V]()")],
        "go build ./...", r"undefined: internal.NewLRUList")
    run("undefined_symbol", P["xxhash"], xx, "Write refers to d.memory, the field is mem",
        [("sub", "xxhash.go", "\tcopy(d.mem[:], b)\n", "\tcopy(d.memory[:], b)\n")],
        "go build ./...", r"has no field or method memory")
    run("undefined_symbol", P["uuid"], uuid, "a test calls ParseStrict, which uuid does not have",
        [("write", "strict_test.go", "package uuid\n\nimport \"testing\"\n\nfunc TestParseStrict(t *testing.T) {\n\tif _, err := ParseStrict(\"f47ac10b-58cc-0372-8567-0e02b2c3d479\"); err != nil {\n\t\tt.Fatal(err)\n\t}\n}\n")],
        "go test ./...", r"undefined: ParseStrict")
    run("undefined_symbol", P["color"], color, "calls c.unsetWriter, the method is unset (color.go)",
        [("re", "color.go", r"\tdefer c\.unset\(\)", "\tdefer c.unsetWriter()")],
        "go vet ./...", r"has no field or method unsetWriter|undefined")
    run("undefined_symbol", P["cast"], cast, "cast.go calls ToStringMapStringsE (typo for ToStringMapStringSliceE)",
        [("sub", "cast.go", "ToStringMapStringSliceE(i)", "ToStringMapStringsE(i)")],
        "go build ./...", r"undefined: ToStringMapStringsE")
    run("undefined_symbol", P["pflag"], pflag, "flag.go uses sort.StringList (typo of sort.StringSlice)",
        [("sub", "flag.go", "list := make(sort.StringSlice, len(flags))", "list := make(sort.StringList, len(flags))")],
        "go build ./...", r"undefined: sort.StringList")
    run("undefined_symbol", P["errors"], errs, "a new test uses errors.Is from pkg/errors' own package scope under a wrong name WrapMsg",
        [("write", "wrapmsg_test.go", "package errors\n\nimport \"testing\"\n\nfunc TestWrapMsg(t *testing.T) {\n\tif WrapMsg(New(\"x\"), \"y\") == nil {\n\t\tt.Fatal(\"nil\")\n\t}\n}\n")],
        "go test ./...", r"undefined: WrapMsg")

    # ---------------- import_missing
    run("import_missing", P["cast"], cast, "cast.go imports github.com/spf13/cast/internal, a package the module does not have",
        [("sub", "cast.go", 'import "time"', 'import (\n\t"time"\n\n\t"github.com/spf13/cast/internal"\n)\n\nvar _ = internal.X')],
        "go build ./...", r"does not contain package|cannot find|is not in std|no required module")
    run("import_missing", P["lru"], lru, "simplelru imports .../v2/internals (typo of internal)",
        [("sub", "simplelru/lru.go", '"github.com/hashicorp/golang-lru/v2/internal"', 'internal "github.com/hashicorp/golang-lru/v2/internals"')],
        "go build ./...", r"does not contain package|no required module")
    run("import_missing", P["uuid"], uuid, "uuid.go imports encodings/hex (typo of encoding/hex)",
        [("sub", "uuid.go", '"encoding/hex"', 'hex "encodings/hex"')],
        "go build ./...", r"is not in std")
    run("import_missing", P["errors"], errs, "stack.go imports io/ioutils (typo of io/ioutil)",
        [("sub", "stack.go", '\t"io"\n', '\t"io"\n\t_ "io/ioutils"\n')],
        "go build ./...", r"is not in std")
    run("import_missing", P["xxhash"], xx, "xxhash.go imports github.com/cespare/xxhash/v2/asm, a package that does not exist in the module",
        [("sub", "xxhash.go", '\t"math/bits"\n', '\t"math/bits"\n\n\t_ "github.com/cespare/xxhash/v2/asm"\n')],
        "go build ./...", r"does not contain package|no required module|cannot find")
    run("import_missing", P["lru"], lru, "moved internal/ to container/ but left the imports pointing at internal",
        [("sh", "git mv internal container")],
        "go build ./...", r"does not contain package|no required module|cannot find")
    run("import_missing", P["pflag"], pflag, "flag.go imports sort/slices (not a standard library path)",
        [("sub", "flag.go", '\t"sort"\n', '\t"sort"\n\t_ "sort/slices"\n')],
        "go vet ./...", r"is not in std")

    # ---------------- dependency_missing
    run("dependency_missing", P["cast"], cast, "cast.go imports github.com/spf13/afero, not required in go.mod",
        [("sub", "cast.go", 'import "time"', 'import (\n\t"time"\n\n\t"github.com/spf13/afero"\n)\n\nvar _ = afero.NewMemMapFs')],
        "go build ./...", r"no required module provides package github.com/spf13/afero")
    run("dependency_missing", P["uuid"], uuid, "uuid.go imports golang.org/x/exp/slices, not in go.mod",
        [("sub", "uuid.go", '\t"encoding/hex"\n', '\t"encoding/hex"\n\n\t"golang.org/x/exp/slices"\n'),
         ("append", "uuid.go", "\nvar _ = slices.Contains[[]string]\n")],
        "go build ./...", r"no required module provides package")
    run("dependency_missing", P["lru"], lru, "dropped the testify require lines from go.mod; testify_test.go still imports it",
        [("re", "go.mod", r"^require[\s\S]*\Z", "")],
        "go test ./...", r"no required module provides package github.com/stretchr/testify")
    run("dependency_missing", P["cast"], cast, "deleted go.sum",
        [("rm", "go.sum")],
        "go test ./...", r"missing go.sum entry")
    run("dependency_missing", P["color"], color, "deleted go.sum",
        [("rm", "go.sum")],
        "go build ./...", r"missing go.sum entry")
    run("dependency_missing", P["errors"], errs, "a new test imports github.com/google/go-cmp/cmp; go.mod has no requirement",
        [("write", "cmp_test.go", "package errors\n\nimport (\n\t\"testing\"\n\n\t\"github.com/google/go-cmp/cmp\"\n)\n\nfunc TestCmp(t *testing.T) {\n\tif d := cmp.Diff(New(\"a\").Error(), \"a\"); d != \"\" {\n\t\tt.Fatal(d)\n\t}\n}\n")],
        "go test ./...", r"no required module provides package github.com/google/go-cmp")
    run("dependency_missing", P["pflag"], pflag, "flag.go imports gopkg.in/yaml.v3, not in go.mod",
        [("sub", "flag.go", '\t"strings"\n', '\t"strings"\n\n\t_ "gopkg.in/yaml.v3"\n')],
        "go vet ./...", r"no required module provides package gopkg.in/yaml.v3")
    run("dependency_missing", P["lru"], lru, "removed the github.com/davecgh/go-spew lines from go.sum (testify needs it)",
        [("re", "go.sum", r"^github.com/davecgh/go-spew.*\n", "", 0)],
        "go test ./...", r"missing go.sum entry")
    run("dependency_missing", P["xxhash"], xx, "a new command imports github.com/spf13/pflag, not required by go.mod",
        [("write", "cmd/xxsum/main.go", "package main\n\nimport (\n\t\"fmt\"\n\n\t\"github.com/cespare/xxhash/v2\"\n\tflag \"github.com/spf13/pflag\"\n)\n\nfunc main() {\n\tflag.Parse()\n\tfmt.Println(xxhash.Sum64String(flag.Arg(0)))\n}\n")],
        "go run ./cmd/xxsum hello", r"no required module provides package github.com/spf13/pflag")

    # ---------------- syntax_error
    run("syntax_error", P["cast"], cast, "deleted the closing brace of ToBool (cast.go)",
        [("sub", "cast.go", "\tv, _ := ToBoolE(i)\n\treturn v\n}\n", "\tv, _ := ToBoolE(i)\n\treturn v\n\n")],
        "go build ./...", r"syntax error|expected")
    run("syntax_error", P["uuid"], uuid, "dropped the { after `if err != nil` in MustParse",
        [("sub", "uuid.go", "\tuuid, err := Parse(s)\n\tif err != nil {\n", "\tuuid, err := Parse(s)\n\tif err != nil\n")],
        "go build ./...", r"syntax error")
    run("syntax_error", P["errors"], errs, "a stray ) after callers() in New",
        [("sub", "errors.go", "\t\tmsg:   message,\n\t\tstack: callers(),", "\t\tmsg:   message,\n\t\tstack: callers()),")],
        "go build ./...", r"syntax error")
    run("syntax_error", P["pflag"], pflag, "missing ) in the receiver of countValue.Type",
        [("sub", "count.go", "func (i *countValue) Type() string {", "func (i *countValue Type() string {")],
        "go build ./...", r"syntax error")
    run("syntax_error", P["lru"], lru, "dropped the comma between type parameters of NewLRU",
        [("sub", "simplelru/lru.go", "func NewLRU[K comparable, V any](", "func NewLRU[K comparable V any](")],
        "go build ./...", r"syntax error")
    run("syntax_error", P["xxhash"], xx, "wrote `d.n := 0` (non-name on the left of :=) in ResetWithSeed",
        [("sub", "xxhash.go", "\td.total = 0\n\td.n = 0\n", "\td.total = 0\n\td.n := 0\n")],
        "go build ./...", r"non-name|syntax error")
    run("syntax_error", P["color"], color, "unterminated string literal in color.go",
        [("sub", "color.go", 'const escape = "\\x1b"', 'const escape = "\\x1b')],
        "gofmt -l .", r"string literal not terminated|newline in string")
    run("syntax_error", P["uuid"], uuid, "a test file has `for i := 0; i < 10; i++` without a body brace",
        [("write", "loop_test.go", "package uuid\n\nimport \"testing\"\n\nfunc TestLoop(t *testing.T) {\n\tfor i := 0; i < 10; i++\n\t\t_ = New()\n\t}\n}\n")],
        "go test ./...", r"syntax error|expected")
    run("syntax_error", P["cast"], cast, "`else` on its own line after the closing brace in ToDurationE (caste.go)",
        [("sub", "caste.go", "func ToDurationE(i interface{}) (d time.Duration, err error) {\n\ti = indirect(i)\n", "func ToDurationE(i interface{}) (d time.Duration, err error) {\n\tif i == nil {\n\t\treturn 0, nil\n\t}\n\telse {\n\t\ti = indirect(i)\n\t}\n")],
        "go vet ./...", r"syntax error|expected statement")

    # ---------------- test_assertion
    run("test_assertion", P["uuid"], uuid, "Variant() reports Microsoft for the RFC 4122 bit pattern",
        [("sub", "uuid.go", "\tcase (uuid[8] & 0xc0) == 0x80:\n\t\treturn RFC4122", "\tcase (uuid[8] & 0xc0) == 0x80:\n\t\treturn Microsoft")],
        "go test ./...", r"--- FAIL")
    run("test_assertion", P["errors"], errs, "withMessage.Error joins with \" - \" instead of \": \"",
        [("sub", "errors.go", 'return w.msg + ": " + w.cause.Error()', 'return w.msg + " - " + w.cause.Error()')],
        "go test ./...", r"--- FAIL")
    run("test_assertion", P["pflag"], pflag, "countValue.Set increments by 2",
        [("sub", "count.go", "*i = countValue(*i + 1)", "*i = countValue(*i + 2)")],
        "go test ./...", r"--- FAIL")
    run("test_assertion", P["lru"], lru, "simplelru Add evicts when the list reaches size (>= instead of >)",
        [("sub", "simplelru/lru.go", "evict := c.evictList.Length() > c.size", "evict := c.evictList.Length() >= c.size")],
        "go test -run 'TestCacheKeepsNewest|TestLRU$' ./...", r"Error Trace|--- FAIL")
    run("test_assertion", P["xxhash"], xx, "changed the constant prime2",
        [("re", "xxhash.go", r"prime2 uint64 = \d+", "prime2 uint64 = 14029467366897019726")],
        "go test .", r"--- FAIL")
    run("test_assertion", P["lru"], lru, "Cache.Get returns the zero value for hits in lru.go",
        [("sub", "lru.go", "\tvalue, ok = c.lru.Get(key)\n\tc.lock.Unlock()\n\treturn value, ok",
          "\tvalue, ok = c.lru.Get(key)\n\tc.lock.Unlock()\n\tvar zero V\n\treturn zero, ok")],
        "go test -run TestCacheKeepsNewest .", r"Error Trace")
    run("test_assertion", P["color"], color, "Color.wrap drops the reset sequence",
        [("re", "color.go", r"return c\.format\(\) \+ s \+ c\.unformat\(\)", "return c.format() + s")],
        "go test ./...", r"--- FAIL")

    # ---------------- test_panic
    run("test_panic", P["cast"], cast, "ToStringMapStringE starts from a nil map (`var m map[string]string`)",
        [("sub", "caste.go", "func ToStringMapStringE(i interface{}) (map[string]string, error) {\n\tm := map[string]string{}",
          "func ToStringMapStringE(i interface{}) (map[string]string, error) {\n\tvar m map[string]string")],
        "go test ./...", r"panic: assignment to entry in nil map")
    run("test_panic", P["lru"], lru, "NewLRU leaves the items map nil",
        [("sub", "simplelru/lru.go", "\t\titems:     make(map[K]*internal.Entry[K, V]),\n", "")],
        "go test ./...", r"panic: assignment to entry in nil map")
    run("test_panic", P["xxhash"], xx, "Write slices d.mem[d.n+40:] (out of range)",
        [("sub", "xxhash.go", "\tmemleft := d.mem[d.n&(len(d.mem)-1):]\n", "\tmemleft := d.mem[d.n+40:]\n")],
        "go test .", r"panic: runtime error: slice bounds out of range")
    run("test_panic", P["uuid"], uuid, "Parse rejects every 36-character UUID, so MustParse panics in the tests",
        [("sub", "uuid.go", "\tcase 36:\n\n\t// urn:uuid:", "\tcase 36:\n\t\treturn uuid, invalidLengthError{len(s)}\n\n\t// urn:uuid:")],
        "go test -run 'TestMust|TestParse|TestNew|TestNullUUID|TestJSON' .", r"panic")
    run("test_panic", P["pflag"], pflag, "FlagSet.Arg no longer checks the index",
        [("sub", "flag.go", "func (f *FlagSet) Arg(i int) string {\n\tif i < 0 || i >= len(f.args) {\n\t\treturn \"\"\n\t}\n",
          "func (f *FlagSet) Arg(i int) string {\n"),
         ("write", "arg_test.go", "package pflag\n\nimport \"testing\"\n\nfunc TestArgPastEnd(t *testing.T) {\n\tf := NewFlagSet(\"x\", ContinueOnError)\n\t_ = f.Parse([]string{\"one\"})\n\tif f.Arg(3) != \"\" {\n\t\tt.Fatal(\"want empty\")\n\t}\n}\n")],
        "go test -run TestArgPastEnd .", r"panic: runtime error: index out of range")
    run("test_panic", P["color"], color, "getCachedColor returns nil for uncached attributes",
        [("sub", "color.go", "\tc, ok := colorsCache[p]\n\tif !ok {\n\t\tc = New(p)\n\t\tcolorsCache[p] = c\n\t}",
          "\tc := colorsCache[p]")],
        "go test ./...", r"panic")
    run("test_panic", P["cast"], cast, "a new test converts with an explicit type assertion on the wrong type",
        [("write", "assert_test.go", "package cast\n\nimport \"testing\"\n\nfunc TestToSliceAssert(t *testing.T) {\n\tv := ToSlice([]interface{}{1, 2})\n\tn := v[0].(string)\n\tif n == \"\" {\n\t\tt.Fatal(\"empty\")\n\t}\n}\n")],
        "go test -run TestToSliceAssert ./...", r"panic: interface conversion")

    # ---------------- test_timeout
    run("test_timeout", P["uuid"], uuid, "a new test waits 10s on a timer (uuid)",
        [("write", "slow_test.go", "package uuid\n\nimport (\n\t\"testing\"\n\t\"time\"\n)\n\nfunc TestSlowPool(t *testing.T) {\n\tEnableRandPool()\n\tdefer DisableRandPool()\n\ttime.Sleep(10 * time.Second)\n}\n")],
        "go test -timeout 2s .", r"test timed out after 2s")
    run("test_timeout", P["lru"], lru, "Cache.Add no longer unlocks its mutex, so the next call blocks",
        [("sub", "lru.go", "\t\tc.evictedKeys, c.evictedVals = c.evictedKeys[:0], c.evictedVals[:0]\n\t}\n\tc.lock.Unlock()\n",
          "\t\tc.evictedKeys, c.evictedVals = c.evictedKeys[:0], c.evictedVals[:0]\n\t}\n"),
         ("write", "tick_test.go", "package lru\n\nimport (\n\t\"testing\"\n\t\"time\"\n)\n\nfunc TestTicker(t *testing.T) {\n\tgo func() {\n\t\tfor range time.Tick(time.Second) {\n\t\t}\n\t}()\n}\n")],
        "go test -timeout 3s -run 'TestTicker|TestCacheKeepsNewest' .", r"test timed out after 3s")
    run("test_timeout", P["xxhash"], xx, "writeBlocks' caller no longer advances b, Write loops forever",
        [("sub", "xxhash.go", "\tif len(b) >= 32 {\n\t\t// One or more full blocks left.\n\t\tnw := writeBlocks(d, b)\n\t\tb = b[nw:]\n\t}",
          "\tfor len(b) >= 32 {\n\t\t// One or more full blocks left.\n\t\tnw := writeBlocks(d, b)\n\t\tb = b[nw-nw:]\n\t}")],
        "go test -timeout 4s -run 'TestAll' .", r"test timed out after 4s")
    run("test_timeout", P["cast"], cast, "a new test reads from a channel nobody writes, with a ticking goroutine",
        [("write", "wait_test.go", "package cast\n\nimport (\n\t\"testing\"\n\t\"time\"\n)\n\nfunc TestWaitForValue(t *testing.T) {\n\tch := make(chan int)\n\tgo func() {\n\t\tfor range time.Tick(100 * time.Millisecond) {\n\t\t}\n\t}()\n\tt.Log(ToString(<-ch))\n}\n")],
        "go test -timeout 2s -run TestWaitForValue ./...", r"test timed out after 2s")
    run("test_timeout", P["pflag"], pflag, "a test polls a flag that never changes",
        [("write", "poll_test.go", "package pflag\n\nimport (\n\t\"testing\"\n\t\"time\"\n)\n\nfunc TestPollChanged(t *testing.T) {\n\tf := NewFlagSet(\"x\", ContinueOnError)\n\tf.Bool(\"ready\", false, \"\")\n\tfor !f.Changed(\"ready\") {\n\t\ttime.Sleep(50 * time.Millisecond)\n\t}\n}\n")],
        "go test -timeout 3s -run TestPollChanged -v .", r"test timed out after 3s")

    # ---------------- race_detected
    run("race_detected", P["lru"], lru, "Cache.Add no longer takes the lock; a new test adds from two goroutines",
        [("sub", "lru.go", "\tvar v V\n\tc.lock.Lock()\n\tevicted = c.lru.Add(key, value)", "\tvar v V\n\tevicted = c.lru.Add(key, value)\n\tc.lock.Lock()"),
         ("write", "race_test.go", "package lru\n\nimport (\n\t\"sync\"\n\t\"testing\"\n)\n\nfunc TestConcurrentAdd(t *testing.T) {\n\tc, _ := New[int, int](64)\n\tvar wg sync.WaitGroup\n\tfor g := 0; g < 4; g++ {\n\t\twg.Add(1)\n\t\tgo func(g int) {\n\t\t\tdefer wg.Done()\n\t\t\tfor i := 0; i < 200; i++ {\n\t\t\t\tc.Add(g*1000+i, i)\n\t\t\t}\n\t\t}(g)\n\t}\n\twg.Wait()\n}\n")],
        "go test -race -run TestConcurrentAdd .", r"WARNING: DATA RACE")
    run("race_detected", P["uuid"], uuid, "newRandomFromPool no longer holds poolMu; a test calls NewRandom from goroutines",
        [("sub", "version4.go", "\tvar uuid UUID\n\tpoolMu.Lock()\n", "\tvar uuid UUID\n"),
         ("sub", "version4.go", "\tpoolPos += 16\n\tpoolMu.Unlock()\n", "\tpoolPos += 16\n"),
         ("sub", "version4.go", "\t\tif err != nil {\n\t\t\tpoolMu.Unlock()\n", "\t\tif err != nil {\n"),
         ("write", "race_test.go", "package uuid\n\nimport (\n\t\"sync\"\n\t\"testing\"\n)\n\nfunc TestPoolConcurrent(t *testing.T) {\n\tEnableRandPool()\n\tdefer DisableRandPool()\n\tvar wg sync.WaitGroup\n\tfor g := 0; g < 4; g++ {\n\t\twg.Add(1)\n\t\tgo func() {\n\t\t\tdefer wg.Done()\n\t\t\tfor i := 0; i < 100; i++ {\n\t\t\t\t_ = New()\n\t\t\t}\n\t\t}()\n\t}\n\twg.Wait()\n}\n")],
        "go test -race -run TestPoolConcurrent .", r"WARNING: DATA RACE")
    run("race_detected", P["cast"], cast, "a new test counts conversions in a shared int from several goroutines",
        [("write", "race_test.go", "package cast\n\nimport (\n\t\"sync\"\n\t\"testing\"\n)\n\nfunc TestParallelToInt(t *testing.T) {\n\ttotal := 0\n\tvar wg sync.WaitGroup\n\tfor _, s := range []string{\"1\", \"2\", \"3\", \"4\"} {\n\t\twg.Add(1)\n\t\tgo func(s string) {\n\t\t\tdefer wg.Done()\n\t\t\ttotal += ToInt(s)\n\t\t}(s)\n\t}\n\twg.Wait()\n\tif total != 10 {\n\t\tt.Fatal(total)\n\t}\n}\n")],
        "go test -race -run TestParallelToInt ./...", r"WARNING: DATA RACE")
    run("race_detected", P["pflag"], pflag, "a new test sets one flag from two goroutines",
        [("write", "race_test.go", "package pflag\n\nimport (\n\t\"sync\"\n\t\"testing\"\n)\n\nfunc TestConcurrentSet(t *testing.T) {\n\tf := NewFlagSet(\"x\", ContinueOnError)\n\tf.Int(\"n\", 0, \"\")\n\tvar wg sync.WaitGroup\n\tfor _, v := range []string{\"1\", \"2\"} {\n\t\twg.Add(1)\n\t\tgo func(v string) {\n\t\t\tdefer wg.Done()\n\t\t\t_ = f.Set(\"n\", v)\n\t\t}(v)\n\t}\n\twg.Wait()\n}\n")],
        "go test -race -run TestConcurrentSet .", r"WARNING: DATA RACE")
    run("race_detected", P["xxhash"], xx, "a new test writes one Digest from two goroutines",
        [("write", "race_test.go", "package xxhash\n\nimport (\n\t\"sync\"\n\t\"testing\"\n)\n\nfunc TestSharedDigest(t *testing.T) {\n\td := New()\n\tvar wg sync.WaitGroup\n\tfor g := 0; g < 2; g++ {\n\t\twg.Add(1)\n\t\tgo func() {\n\t\t\tdefer wg.Done()\n\t\t\td.WriteString(\"hello, world\")\n\t\t}()\n\t}\n\twg.Wait()\n\t_ = d.Sum64()\n}\n")],
        "go test -race -run TestSharedDigest .", r"WARNING: DATA RACE")
    run("race_detected", P["color"], color, "getCachedColor no longer locks colorsCacheMu; a test prints colors from goroutines",
        [("sub", "color.go", "\tcolorsCacheMu.Lock()\n\tdefer colorsCacheMu.Unlock()\n\n\tc, ok := colorsCache[p]", "\tc, ok := colorsCache[p]"),
         ("write", "race_test.go", "package color\n\nimport (\n\t\"sync\"\n\t\"testing\"\n)\n\nfunc TestParallelColors(t *testing.T) {\n\tvar wg sync.WaitGroup\n\tfor _, a := range []Attribute{FgRed, FgGreen, FgBlue, FgCyan} {\n\t\twg.Add(1)\n\t\tgo func(a Attribute) {\n\t\t\tdefer wg.Done()\n\t\t\t_ = getCachedColor(a)\n\t\t}(a)\n\t}\n\twg.Wait()\n}\n")],
        "go test -race -run TestParallelColors .", r"WARNING: DATA RACE")
    run("race_detected", P["errors"], errs, "a new test wraps into one shared error variable from goroutines",
        [("write", "race_test.go", "package errors\n\nimport (\n\t\"sync\"\n\t\"testing\"\n)\n\nfunc TestWrapShared(t *testing.T) {\n\tvar err error = New(\"base\")\n\tvar wg sync.WaitGroup\n\tfor i := 0; i < 3; i++ {\n\t\twg.Add(1)\n\t\tgo func() {\n\t\t\tdefer wg.Done()\n\t\t\terr = Wrap(err, \"layer\")\n\t\t}()\n\t}\n\twg.Wait()\n\tt.Log(err)\n}\n")],
        "go test -race -run TestWrapShared -count=1 .", r"WARNING: DATA RACE")

    # ---------------- lint_failure (go vet)
    run("lint_failure", P["cast"], cast, "dropped the second argument of an Errorf with %#v and %T in ToIntE",
        [("re", "caste.go", r'(func ToIntE[\s\S]*?)return 0, fmt\.Errorf\("unable to cast %#v of type %T to int", i, i\)',
          r'\1return 0, fmt.Errorf("unable to cast %#v of type %T to int", i)')],
        "go vet ./...", r"reads arg #2")
    run("lint_failure", P["uuid"], uuid, "added a statement after panic in Must (unreachable code)",
        [("sub", "uuid.go", "\tif err != nil {\n\t\tpanic(err)\n\t}\n\treturn uuid\n}", "\tif err != nil {\n\t\tpanic(err)\n\t\treturn Nil\n\t}\n\treturn uuid\n}")],
        "go vet ./...", r"unreachable code")
    run("lint_failure", P["errors"], errs, "a new test calls Errorf(\"%d\", \"x\")",
        [("write", "vet_test.go", "package errors\n\nimport \"testing\"\n\nfunc TestErrorfVet(t *testing.T) {\n\tif Errorf(\"count %d\", \"x\") == nil {\n\t\tt.Fatal(\"nil\")\n\t}\n}\n")],
        "go vet ./...", r"wrong type")
    run("lint_failure", P["pflag"], pflag, "self-assignment `f.name = f.name` in a new helper",
        [("write", "self.go", "package pflag\n\nfunc (f *FlagSet) rename() {\n\tf.name = f.name\n}\n")],
        "go vet ./...", r"self-assignment")
    run("lint_failure", P["lru"], lru, "a new helper takes Cache by value (copies its lock)",
        [("write", "copy.go", "package lru\n\n// Snapshot reports the length of a copy of the cache.\nfunc Snapshot[K comparable, V any](c Cache[K, V]) int {\n\treturn c.lru.Len()\n}\n")],
        "go vet ./...", r"passes lock by value")
    run("lint_failure", P["xxhash"], xx, "added a malformed struct tag `json:total` on Digest.total",
        [("sub", "xxhash.go", "\ttotal uint64\n", "\ttotal uint64 `json:total`\n")],
        "go vet -structtag .", r"struct field tag")
    run("lint_failure", P["cast"], cast, "discards the result of fmt.Sprintf in ToStringE",
        [("re", "caste.go", r"(func ToStringE\(i interface\{\}\) \(string, error\) \{\n)", r'\1\tfmt.Sprintf("%v", i)\n')],
        "go vet ./...", r"result of fmt.Sprintf call not used")
    run("lint_failure", P["color"], color, "wrote `if p != FgRed || p != FgGreen` in getCachedColor",
        [("sub", "color.go", "\tc, ok := colorsCache[p]\n", "\tif p != FgRed || p != FgGreen {\n\t\t_ = p\n\t}\n\tc, ok := colorsCache[p]\n")],
        "go vet ./...", r"suspect or")
    run("lint_failure", P["uuid"], uuid, "a new test calls t.Fatal from a goroutine it starts",
        [("write", "vet_test.go", "package uuid\n\nimport \"testing\"\n\nfunc TestBackground(t *testing.T) {\n\tdone := make(chan bool)\n\tgo func() {\n\t\tif New() == Nil {\n\t\t\tt.Fatal(\"nil uuid\")\n\t\t}\n\t\tclose(done)\n\t}()\n\t<-done\n}\n")],
        "go vet ./...", r"call to \(\*testing.T\).Fatal from a non-test goroutine")

    # ---------------- format_failure
    run("format_failure", P["cast"], cast, "re-indented ToBool in cast.go with spaces",
        [("sub", "cast.go", "\tv, _ := ToBoolE(i)\n\treturn v\n", "    v, _ := ToBoolE(i)\n    return v\n")],
        "gofmt -l .", r"cast.go", allow_zero=True)
    run("format_failure", P["uuid"], uuid, "joined two statements of Must with extra spaces around tokens",
        [("sub", "uuid.go", "func Must(uuid UUID, err error) UUID {\n\tif err != nil {", "func Must(uuid UUID, err error) UUID {\n\tif   err!=nil    {")],
        "gofmt -d uuid.go", r"^\+\tif err != nil \{", allow_zero=True)
    run("format_failure", P["lru"], lru, "misaligned the LRU struct fields in simplelru/lru.go",
        [("sub", "simplelru/lru.go", "\tsize      int\n\tevictList *internal.LruList[K, V]", "\tsize int\n\tevictList    *internal.LruList[K, V]")],
        "test -z \"$(gofmt -l .)\" || { gofmt -l .; exit 1; }", r"simplelru/lru.go")
    run("format_failure", P["xxhash"], xx, "one-line if block in Write and an unsorted import block",
        [("sub", "xxhash.go", '\t"encoding/binary"\n\t"errors"\n', '\t"errors"\n\t"encoding/binary"\n'),
         ("sub", "xxhash.go", "\tif d.n > 0 {\n", "\tif d.n > 0 {   \n")],
        "gofmt -d -s .", r"^diff", allow_zero=True)
    run("format_failure", P["pflag"], pflag, "trailing spaces and a blank-line run in count.go and bool.go",
        [("sub", "count.go", "func (i *countValue) Type() string {\n", "\n\n\nfunc (i *countValue) Type() string {   \n"),
         ("sub", "bool.go", "package pflag\n", "package  pflag\n")],
        "gofmt -l .", r"count.go", allow_zero=True)
    run("format_failure", P["errors"], errs, "a composite literal in stack.go written on one line without spaces",
        [("re", "errors.go", r"return &fundamental\{\n\t\tmsg:   message,\n\t\tstack: callers\(\),\n\t\}", "return &fundamental{msg:message,stack:callers()}")],
        "gofmt -l . && test -z \"$(gofmt -l .)\"", r"errors.go")
    run("format_failure", P["color"], color, "indented color.go's const block with spaces",
        [("re", "color.go", r"^\tFgRed$", "        FgRed")],
        "gofmt -l .", r"color.go", allow_zero=True)

    # ---------------- network_unavailable
    run("network_unavailable", P["cast"], cast, "GOPROXY=direct (no proxy) and a go get of a module not in the cache",
        [], "GOPROXY=direct go get github.com/spf13/afero@v1.11.0", r"Could not resolve host")
    run("network_unavailable", P["uuid"], uuid, "GOPROXY points at a mirror on a closed local port; go get of a new module",
        [], "GOPROXY=http://127.0.0.1:9 go get golang.org/x/sync@v0.7.0", r"connection refused")
    run("network_unavailable", P["lru"], lru, "GOPROXY set to a host that does not resolve; go mod download after deleting the module cache entry via GOMODCACHE",
        [], "GOMODCACHE=$PWD/.modcache GOPROXY=https://goproxy.corp.invalid go mod download", r"no such host|server misbehaving|dial tcp")
    run("network_unavailable", P["errors"], errs, "go install of a tool from a VCS path with GOPROXY=direct",
        [], "GOPROXY=direct go install golang.org/x/tools/cmd/stringer@v0.21.0", r"Could not resolve host|dial tcp|unrecognized import path")
    run("network_unavailable", P["pflag"], pflag, "git fetch of the upstream repository with no network",
        [], "git fetch https://github.com/spf13/pflag master", r"Could not resolve host")
    run("network_unavailable", P["xxhash"], xx, "GOPROXY=direct, GOSUMDB off, a go get of a gitlab module",
        [], "GOPROXY=direct GONOSUMDB=* go get gitlab.com/golang-commonmark/markdown@v0.0.0-20211110145824-bf3e522c626a", r"Could not resolve host|dial tcp|unrecognized import path")

    # ---------------- offline_cache_miss
    run("offline_cache_miss", P["cast"], cast, "go.mod requires github.com/spf13/afero v1.11.0 (not in the module cache), GOPROXY=off",
        [("sub", "cast.go", 'import "time"', 'import (\n\t"time"\n\n\t"github.com/spf13/afero"\n)\n\nvar _ = afero.NewMemMapFs'),
         ("append", "go.mod", "\nrequire github.com/spf13/afero v1.11.0\n")],
        "GOPROXY=off GOFLAGS=-mod=mod go build ./...", r"module lookup disabled by GOPROXY=off")
    run("offline_cache_miss", P["uuid"], uuid, "go get of golang.org/x/sync@v0.7.0 with GOPROXY=off",
        [], "GOPROXY=off go get golang.org/x/sync@v0.7.0", r"module lookup disabled by GOPROXY=off")
    run("offline_cache_miss", P["errors"], errs, "a test imports github.com/google/go-cmp/cmp, go mod tidy with GOPROXY=off and GOFLAGS=-mod=mod",
        [("write", "cmp_test.go", "package errors\n\nimport (\n\t\"testing\"\n\n\t\"github.com/google/go-cmp/cmp\"\n)\n\nfunc TestCmp(t *testing.T) { _ = cmp.Diff(1, 2) }\n")],
        "GOPROXY=off GOFLAGS=-mod=mod go mod tidy", r"module lookup disabled by GOPROXY=off")
    run("offline_cache_miss", P["lru"], lru, "empty GOMODCACHE, GOPROXY=off, go test needs testify",
        [], "GOMODCACHE=$PWD/.emptycache GOPROXY=off go test ./...", r"module lookup disabled by GOPROXY=off")
    run("offline_cache_miss", P["color"], color, "bumped golang.org/x/sys to v0.20.0 (not cached) and built with GOPROXY=off",
        [("re", "go.mod", r"golang.org/x/sys v[0-9.]+", "golang.org/x/sys v0.20.0")],
        "GOPROXY=off GOFLAGS=-mod=mod go build ./...", r"module lookup disabled by GOPROXY=off")
    run("offline_cache_miss", P["pflag"], pflag, "go run of a tool at a version that is not cached, GOPROXY=off",
        [], "GOPROXY=off go run golang.org/x/tools/cmd/goimports@v0.20.0 -l .", r"module lookup disabled by GOPROXY=off")

    # ---------------- permission_denied
    nobody = "runuser -u nobody -- env HOME=/tmp GOCACHE=/tmp/gocache-nobody GOPATH=/tmp/gopath-nobody GOFLAGS=-mod=mod GOPROXY=off "
    run("permission_denied", P["cast"], cast, "cast.go made unreadable (chmod 000), build run as user nobody",
        [("chmod", "cast.go", 0o000)], nobody + "go build ./...", r"permission denied")
    run("permission_denied", P["uuid"], uuid, "go build -o into /usr/local/bin as user nobody",
        [("write", "cmd/uuidgen/main.go", "package main\n\nimport (\n\t\"fmt\"\n\n\t\"github.com/google/uuid\"\n)\n\nfunc main() { fmt.Println(uuid.New()) }\n")],
        nobody + "go build -o /usr/local/bin/uuidgen ./cmd/uuidgen", r"permission denied")
    run("permission_denied", P["xxhash"], xx, "the test writes a fixture into testdata/, which is read-only for user nobody",
        [("write", "fixture_test.go", "package xxhash\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestWriteFixture(t *testing.T) {\n\tif err := os.WriteFile(\"testdata/sum.txt\", []byte(\"x\"), 0644); err != nil {\n\t\tt.Fatal(err)\n\t}\n}\n"),
         ("sh", "mkdir -p testdata && chmod 555 testdata && chmod 777 . ")],
        nobody + "go test -run TestWriteFixture .", r"permission denied")
    run("permission_denied", P["errors"], errs, "GOCACHE points at a root-owned directory, go build run as nobody",
        [("sh", "mkdir -p /tmp/diagcorpus/rootcache && chmod 700 /tmp/diagcorpus/rootcache")],
        "runuser -u nobody -- env HOME=/tmp GOCACHE=/tmp/diagcorpus/rootcache go build ./...", r"permission denied")

    # ---------------- disk_full
    small = os.path.join(SCRATCH, "small")

    def mount_small(work):
        sh(f"mkdir -p {small}; umount {small} 2>/dev/null; mount -t tmpfs -o size=2m tmpfs {small}")
    run("disk_full", P["uuid"], uuid, "go build -o onto a 2 MiB tmpfs",
        [mount_small, ("write", "cmd/uuidgen/main.go", "package main\n\nimport (\n\t\"fmt\"\n\n\t\"github.com/google/uuid\"\n)\n\nfunc main() { fmt.Println(uuid.New()) }\n")],
        f"go build -o {small}/uuidgen ./cmd/uuidgen", r"no space left on device")
    run("disk_full", P["xxhash"], xx, "go test -c writes the test binary to a 2 MiB tmpfs",
        [mount_small], f"go test -c -o {small}/xxhash.test .", r"no space left on device")

    # ---------------- out_of_memory
    run("out_of_memory", P["cast"], cast, "a test builds a 16 GiB slice, run under ulimit -v 4 GiB",
        [("write", "big_test.go", "package cast\n\nimport \"testing\"\n\nfunc TestHugeSlice(t *testing.T) {\n\tbig := make([]int64, 2<<30)\n\tfor i := range big {\n\t\tbig[i] = ToInt64(i)\n\t}\n\tt.Log(len(big))\n}\n")],
        "go test -c -o cast.test . && (ulimit -v 4000000; ./cast.test -test.run TestHugeSlice)", r"out of memory")
    run("out_of_memory", P["lru"], lru, "a test fills a cache of 1<<40 entries under ulimit -v 2 GiB",
        [("write", "big_test.go", "package lru\n\nimport \"testing\"\n\nfunc TestHugeCache(t *testing.T) {\n\tc, _ := New[int, [1024]byte](1 << 40)\n\tfor i := 0; ; i++ {\n\t\tc.Add(i, [1024]byte{})\n\t}\n}\n")],
        "go test -c -o lru.test . && (ulimit -v 2000000; ./lru.test -test.run TestHugeCache)", r"out of memory")

    # ---------------- command_not_found
    run("command_not_found", P["cast"], cast, "a go:generate directive runs stringer, which is not installed",
        [("sub", "cast.go", "package cast\n", "package cast\n\n//go:generate stringer -type=timeFormatType -output timeformattype_string.go\n")],
        "go generate ./...", r"executable file not found")
    run("command_not_found", P["uuid"], uuid, "the Makefile's lint step calls golangci-lint, which is not installed",
        [("write", "Makefile", "lint:\n\tgolangci-lint run ./...\n")], "make lint", r"No such file or directory|not found")
    run("command_not_found", P["xxhash"], xx, "testall.sh calls go1.19 as an extra toolchain that is not installed",
        [("write", "check.sh", "#!/bin/bash\nset -e\ngo1.19 test ./...\n"), ("chmod", "check.sh", 0o755)],
        "./check.sh", r"command not found")

    # ---------------- toolchain_version
    run("toolchain_version", P["cast"], cast, "go.mod's go directive raised to 1.99 with GOTOOLCHAIN=local",
        [("re", "go.mod", r"^go 1\.\d+", "go 1.99")], "GOTOOLCHAIN=local go build ./...", r"requires go >= 1.99")
    run("toolchain_version", P["lru"], lru, "go.mod's go directive raised to 1.27.0 with GOTOOLCHAIN=local",
        [("re", "go.mod", r"^go 1\.\d+", "go 1.27.0")], "GOTOOLCHAIN=local go test ./...", r"requires go >= 1.27")
    run("toolchain_version", P["uuid"], uuid, "go.mod gets `go 1.30` and `toolchain go1.30.1`, GOTOOLCHAIN=local, go vet",
        [("write", "go.mod", "module github.com/google/uuid\n\ngo 1.30\n\ntoolchain go1.30.1\n")],
        "GOTOOLCHAIN=local go vet ./...", r"requires go >= 1.30")
    run("toolchain_version", P["pflag"], pflag, "GOTOOLCHAIN=go1.99.0 asks for a toolchain that does not exist",
        [], "GOTOOLCHAIN=go1.99.0 go build ./...", r"go1.99.0")

    # ---------------- env_var_missing
    run("env_var_missing", P["cast"], cast, "a new command needs CAST_INPUT and exits when it is unset",
        [("write", "cmd/castint/main.go", "package main\n\nimport (\n\t\"fmt\"\n\t\"log\"\n\t\"os\"\n\n\t\"github.com/spf13/cast\"\n)\n\nfunc main() {\n\tv, ok := os.LookupEnv(\"CAST_INPUT\")\n\tif !ok {\n\t\tlog.Fatal(\"castint: CAST_INPUT is not set\")\n\t}\n\tfmt.Println(cast.ToInt(v))\n}\n")],
        "go run ./cmd/castint", r"CAST_INPUT is not set")
    run("env_var_missing", P["uuid"], uuid, "a new integration test requires UUID_NODE_ID in the environment",
        [("write", "env_test.go", "package uuid\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestNodeFromEnv(t *testing.T) {\n\tid := os.Getenv(\"UUID_NODE_ID\")\n\tif id == \"\" {\n\t\tt.Fatal(\"UUID_NODE_ID environment variable is required for this test\")\n\t}\n\tSetNodeID([]byte(id))\n}\n")],
        "go test -run TestNodeFromEnv .", r"UUID_NODE_ID environment variable is required")

    # ---------------- terminal_dependent_output
    TERM_TEST = "package color\n\nimport \"testing\"\n\nfunc TestRedStringHasEscapes(t *testing.T) {\n\tgot := RedString(\"error\")\n\twant := \"\\x1b[31merror\\x1b[0m\"\n\tif got != want {\n\t\tt.Fatalf(\"RedString = %q, want %q\", got, want)\n\t}\n}\n"
    run("terminal_dependent_output", P["color"], color, "a test expects RedString to emit ANSI codes; run with TERM=dumb and no tty (NoColor is set)",
        [("write", "term_test.go", TERM_TEST)], "TERM=dumb go test -run TestRedStringHasEscapes .", r"want \"\\x1b\[31merror")
    run("terminal_dependent_output", P["color"], color, "a test compares Color.Sprint output with escape codes; run with NO_COLOR=1",
        [("write", "term_test.go", "package color\n\nimport \"testing\"\n\nfunc TestBoldGreen(t *testing.T) {\n\tc := New(FgGreen, Bold)\n\tif got := c.Sprint(\"ok\"); got != \"\\x1b[32;1mok\\x1b[0m\" {\n\t\tt.Errorf(\"Sprint = %q\", got)\n\t}\n}\n")],
        "NO_COLOR=1 go test -run TestBoldGreen -v .", r"Sprint = \"ok\"")

    # ---------------- flaky_test
    run("flaky_test", P["uuid"], uuid, "a new test requires the first hex digit of a random UUID to be below 8",
        [("write", "flaky_test.go", "package uuid\n\nimport \"testing\"\n\nfunc TestLowUUID(t *testing.T) {\n\tu := New()\n\tif u[0] >= 0x80 {\n\t\tt.Errorf(\"uuid %s starts high\", u)\n\t}\n}\n")],
        "go test -count=10 -run TestLowUUID -v .", r"(?s)(--- PASS: TestLowUUID.*--- FAIL: TestLowUUID|--- FAIL: TestLowUUID.*--- PASS: TestLowUUID)")
    run("flaky_test", P["cast"], cast, "a new test joins ToStringMapString's keys in map iteration order",
        [("write", "flaky_test.go", "package cast\n\nimport (\n\t\"strings\"\n\t\"testing\"\n)\n\nfunc TestKeysOrder(t *testing.T) {\n\tm := ToStringMapString(map[string]interface{}{\"a\": 1, \"b\": 2, \"c\": 3})\n\tvar keys []string\n\tfor k := range m {\n\t\tkeys = append(keys, k)\n\t}\n\tif got := strings.Join(keys, \",\"); got != \"a,b,c\" {\n\t\tt.Errorf(\"keys = %s, want a,b,c\", got)\n\t}\n}\n")],
        "go test -count=8 -run TestKeysOrder -v .", r"(?s)(--- PASS: TestKeysOrder.*--- FAIL: TestKeysOrder|--- FAIL: TestKeysOrder.*--- PASS: TestKeysOrder)")
    run("flaky_test", P["lru"], lru, "a new test expects a goroutine's Add to land within 1 scheduler yield",
        [("write", "flaky_test.go", "package lru\n\nimport (\n\t\"math/rand\"\n\t\"testing\"\n\t\"time\"\n)\n\nfunc TestAsyncAdd(t *testing.T) {\n\tc, _ := New[int, int](8)\n\tgo func() {\n\t\ttime.Sleep(time.Duration(rand.Intn(4)) * time.Millisecond)\n\t\tc.Add(1, 1)\n\t}()\n\ttime.Sleep(2 * time.Millisecond)\n\tif !c.Contains(1) {\n\t\tt.Error(\"key 1 not added yet\")\n\t}\n}\n")],
        "go test -count=12 -run TestAsyncAdd -v .", r"(?s)(--- PASS: TestAsyncAdd.*--- FAIL: TestAsyncAdd|--- FAIL: TestAsyncAdd.*--- PASS: TestAsyncAdd)")
    run("flaky_test", P["xxhash"], xx, "a new test hashes a random-length input and expects an even hash",
        [("write", "flaky_test.go", "package xxhash\n\nimport (\n\t\"math/rand\"\n\t\"testing\"\n)\n\nfunc TestEvenHash(t *testing.T) {\n\tb := make([]byte, rand.Intn(100))\n\tif h := Sum64(b); h%2 != 0 {\n\t\tt.Fatalf(\"Sum64 of %d zero bytes = %#x, odd\", len(b), h)\n\t}\n}\n")],
        "go test -count=10 -run TestEvenHash -v .", r"(?s)(--- PASS: TestEvenHash.*--- FAIL: TestEvenHash|--- FAIL: TestEvenHash.*--- PASS: TestEvenHash)")
    run("flaky_test", P["pflag"], pflag, "a new test parses a duration flag and compares against wall-clock time",
        [("write", "flaky_test.go", "package pflag\n\nimport (\n\t\"testing\"\n\t\"time\"\n)\n\nfunc TestDeadlineFlag(t *testing.T) {\n\tf := NewFlagSet(\"x\", ContinueOnError)\n\td := f.Duration(\"wait\", 0, \"\")\n\t_ = f.Parse([]string{\"--wait=1ms\"})\n\tstart := time.Now()\n\ttime.Sleep(*d)\n\tif el := time.Since(start); el.Microseconds()%2 == 1 {\n\t\tt.Errorf(\"slept %v\", el)\n\t}\n}\n")],
        "go test -count=10 -run TestDeadlineFlag -v .", r"(?s)(--- PASS: TestDeadlineFlag.*--- FAIL: TestDeadlineFlag|--- FAIL: TestDeadlineFlag.*--- PASS: TestDeadlineFlag)")

    # ---------------- no_tests_ran
    run("no_tests_ran", P["cast"], cast, "no break: the -run filter (TestToInteger) matches no test",
        [], "go test -run TestToInteger ./...", r"no tests to run", allow_zero=True)
    run("no_tests_ran", P["lru"], lru, "no break: go test of a package directory without tests (internal)",
        [], "go test ./internal/...", r"no test files", allow_zero=True)
    run("no_tests_ran", P["uuid"], uuid, "renamed every *_test.go to *_test.go.off",
        [("sh", "for f in *_test.go; do mv $f $f.off; done")], "go test -v ./...", r"no test files", allow_zero=True)
    run("no_tests_ran", P["errors"], errs, "no break: -run filter with a typo (TestWarp)",
        [], "go test -v -run TestWarp .", r"no tests to run", allow_zero=True)
    run("no_tests_ran", P["xxhash"], xx, "no break: -run filter TestSum64 matches nothing (tests are TestAll, TestReset, ...)",
        [], "go test -run TestSum64 -v ./...", r"no tests to run", allow_zero=True)

    # ---------------- unknown
    run("unknown", P["cast"], cast, "a release script prints a generic error and exits 1",
        [("write", "scripts/release.sh", "#!/bin/sh\necho \"release: preparing github.com/spf13/cast\"\necho \"something went wrong\" >&2\nexit 1\n"),
         ("chmod", "scripts/release.sh", 0o755)], "./scripts/release.sh", r"something went wrong")
    run("unknown", P["uuid"], uuid, "a small checker command returns its own error code 3",
        [("write", "cmd/uuidcheck/main.go", "package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n\n\t\"github.com/google/uuid\"\n)\n\nfunc main() {\n\tu := uuid.New()\n\tfmt.Fprintf(os.Stderr, \"uuidcheck: state mismatch for %s (code E17)\\n\", u.Version())\n\tos.Exit(3)\n}\n")],
        "go run ./cmd/uuidcheck", r"state mismatch")

    C.write()


if __name__ == "__main__":
    main()
