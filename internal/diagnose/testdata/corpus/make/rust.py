#!/usr/bin/env python3
"""Rust samples: dependency-free crates from Debian's librust-*-dev packages
(/usr/share/cargo/registry: hex 0.4.3, strsim 0.10.0, heck 0.4.0, shlex 1.1.0,
semver 1.0.14), copied with their dev-dependencies and benches removed and a
[workspace] table added, built with cargo/rustc 1.95 (rustfmt, clippy) offline.
A .cargo/config.toml above the copies replaces crates-io with the Debian
directory registry, the way Debian builds crates."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import Corpus, SCRATCH, sh, base_env  # noqa: E402

SRC = os.path.join(SCRATCH, "src", "rust")
REG = "/usr/share/cargo/registry"
CRATES = {"hex": "hex-0.4.3", "strsim": "strsim-0.10.0", "heck": "heck-0.4.0", "shlex": "shlex-1.1.0", "semver": "semver-1.0.14"}
CARGO_CONFIG = '[source.crates-io]\nreplace-with = "debian"\n\n[source.debian]\ndirectory = "/usr/share/cargo/registry"\n'


def strip_manifest(p):
    out, skip = [], False
    for line in open(p).read().splitlines():
        if line.startswith("["):
            skip = line.startswith(("[dev-dependencies", "[[bench", "[[test"))
        if not skip:
            out.append(line)
    open(p, "w").write("\n".join(out) + "\n\n[workspace]\n")


def prepare():
    for base in (SRC, os.path.join(SCRATCH, "run", "rust")):
        os.makedirs(os.path.join(base, ".cargo"), exist_ok=True)
        open(os.path.join(base, ".cargo", "config.toml"), "w").write(CARGO_CONFIG)
    env = base_env()
    for name, dirname in CRATES.items():
        d = os.path.join(SRC, name)
        if os.path.exists(os.path.join(d, ".prepared")):
            continue
        sh(f"rm -rf {d} && cp -R {REG}/{dirname} {d} && rm -rf {d}/benches {d}/.cargo-checksum.json {d}/debian")
        strip_manifest(os.path.join(d, "Cargo.toml"))
        if name == "semver":  # 1.0.14's build.rs cfgs flood rustc 1.95 with unexpected_cfgs warnings
            open(os.path.join(d, "Cargo.toml"), "a").write("\n[lints.rust]\nunexpected_cfgs = \"allow\"\n")
        if name == "hex":  # pretty_assertions was a dev-dependency
            for f in ("src/lib.rs", "src/error.rs"):
                p = os.path.join(d, f)
                text = open(p).read()
                open(p, "w").write(text.replace("    use pretty_assertions::assert_eq;\n", ""))
            os.remove(os.path.join(d, "tests", "version-number.rs"))  # needs the version-sync dev-dependency
        sh("cargo fmt && cargo test --offline -q && cargo fmt --check", cwd=d, env=env)
        sh("rm -rf target && printf 'target\\n' > .gitignore && git init -q && git add -A && git -c user.name=corpus -c user.email=corpus@invalid commit -qm pristine", cwd=d)
        open(os.path.join(d, ".prepared"), "w").write("")


def main():
    prepare()
    C = Corpus("rust", prefix="rs")

    def r(pattern, crate, brk, ops, cmd, expect=None, **kw):
        C.run(pattern, f"{CRATES[crate].rsplit('-', 1)[0]} {CRATES[crate].rsplit('-', 1)[1]} (Debian librust-{crate}-dev)",
              os.path.join(SRC, crate), brk, ops, cmd, expect, **kw)
    CB, CT = "cargo build --offline", "cargo test --offline"

    # ---------------- compile_error
    r("compile_error", "hex", "a new helper uses a String after moving it (E0382)",
      [("append", "src/lib.rs", "\n#[cfg(feature = \"alloc\")]\npub fn encode_twice(s: String) -> (String, String) {\n    let a = encode(s);\n    let b = encode(s);\n    (a, b)\n}\n")], CB, r"E0382")
    r("compile_error", "strsim", "levenshtein mutably borrows a vector while it is borrowed (E0502)",
      [("append", "src/lib.rs", "\npub fn longest<'a>(words: &mut Vec<&'a str>) -> &'a str {\n    let first = &words[0];\n    words.push(\"x\");\n    first\n}\n")], CB, r"E0502")
    r("compile_error", "shlex", "assigns twice to an immutable binding in split (E0384)",
      [("sub", "src/lib.rs", "    let res = shl.by_ref().collect();", "    let res = shl.by_ref().collect();\n    let count = 0;\n    count = 1;\n    let _ = count;")], CB, r"E0384")
    r("compile_error", "heck", "a function returns a reference to a local String (E0106 missing lifetime)",
      [("append", "src/lib.rs", "\npub fn shout(s: &str) -> &str {\n    let owned = s.to_uppercase();\n    &owned\n}\n")], CB, r"E0106|E0515")
    r("compile_error", "semver", "a match on Op that misses variants (E0004)",
      [("append", "src/lib.rs", "\npub fn op_name(op: Op) -> &'static str {\n    match op {\n        Op::Exact => \"=\",\n        Op::Greater => \">\",\n    }\n}\n")], CB, r"E0004")
    r("compile_error", "hex", "borrows a local Vec mutably twice (E0499)",
      [("append", "src/lib.rs", "\npub fn fill_twice(buf: &mut [u8]) {\n    let mut v = vec![0u8; 4];\n    let a = &mut v;\n    let b = &mut v;\n    a.push(1);\n    b.push(2);\n    buf[0] = v[0];\n}\n")], CB, r"E0499")
    r("compile_error", "strsim", "a test mutates through a shared reference (E0596)",
      [("append", "tests/lib.rs", "\n#[test]\nfn sorted_words() {\n    let words = vec![\"b\", \"a\"];\n    let r = &words;\n    r.sort();\n    assert_eq!(strsim::hamming(r[0], r[1]), Ok(1));\n}\n")], CT, r"E0596")
    r("compile_error", "shlex", "calls an unsafe fn outside an unsafe block (E0133)",
      [("sub", "src/lib.rs", "        unsafe { String::from_utf8_unchecked(out) }.into()", "        String::from_utf8_unchecked(out).into()")], CB, r"E0133")
    r("compile_error", "semver", "a closure that outlives a borrowed local (E0373)",
      [("append", "src/lib.rs", "\npub fn matcher(req: VersionReq) -> impl Fn(&Version) -> bool {\n    let r = &req;\n    move |v| r.matches(v)\n}\n")], CB, r"E0597|E0373|E0515|borrowed value does not live long enough|returns a value referencing")

    # ---------------- type_error
    r("type_error", "hex", "encode returns the byte slice instead of a String (E0308)",
      [("sub", "src/lib.rs", "pub fn encode<T: AsRef<[u8]>>(data: T) -> String {\n    data.encode_hex()\n}", "pub fn encode<T: AsRef<[u8]>>(data: T) -> String {\n    data.as_ref().to_vec()\n}")], CB, r"E0308")
    r("type_error", "strsim", "hamming passes &str where chars() iterators are expected",
      [("sub", "src/lib.rs", "    generic_hamming(a.chars(), b.chars())", "    generic_hamming(a.len(), b.chars())")], CB, r"E0277|E0308")
    r("type_error", "shlex", "quote returns a usize length",
      [("sub", "src/lib.rs", "    if in_str.len() == 0 {\n        \"\\\"\\\"\".into()", "    if in_str.len() == 0 {\n        in_str.len()")], CB, r"E0308")
    r("type_error", "heck", "to_snake_case returns a &str (E0308)",
      [("sub", "src/snake.rs", "    fn to_snake_case(&self) -> String {\n        AsSnakeCase(self).to_string()", "    fn to_snake_case(&self) -> String {\n        \"snake\"")], CB, r"E0308")
    r("type_error", "semver", "VersionReq::matches returns an integer",
      [("sub", "src/lib.rs", "    pub fn matches(&self, version: &Version) -> bool {\n        eval::matches_req(self, version)", "    pub fn matches(&self, version: &Version) -> bool {\n        eval::matches_req(self, version) as u8")], CB, r"E0308")
    r("type_error", "hex", "a test compares Vec<u8> with a &str",
      [("write", "tests/roundtrip.rs", "#[test]\nfn roundtrip() {\n    let v = hex::decode(\"48656c6c6f\").unwrap();\n    assert_eq!(v, \"Hello\");\n}\n")], CT, r"E0277|E0308|can't compare")
    r("type_error", "strsim", "levenshtein's result stored in an i8",
      [("append", "src/lib.rs", "\npub fn short_distance(a: &str, b: &str) -> i8 {\n    let d: i8 = levenshtein(a, b);\n    d\n}\n")], CB, r"E0308")
    r("type_error", "semver", "Version::new called with string arguments in a test",
      [("write", "tests/test_new.rs", "use semver::Version;\n\n#[test]\nfn new_from_strings() {\n    let v = Version::new(\"1\", \"2\", \"3\");\n    assert_eq!(v.major, 1);\n}\n")], CT, r"E0308")
    r("type_error", "shlex", "split's result indexed as if it were a Vec (Option<Vec<String>>)",
      [("append", "src/lib.rs", "\npub fn first_word(s: &str) -> String {\n    split(s)[0].clone()\n}\n")], CB, r"E0608|cannot index")

    # ---------------- undefined_symbol
    r("undefined_symbol", "hex", "encode calls data.to_hex() (the method is encode_hex)",
      [("sub", "src/lib.rs", "pub fn encode<T: AsRef<[u8]>>(data: T) -> String {\n    data.encode_hex()", "pub fn encode<T: AsRef<[u8]>>(data: T) -> String {\n    data.to_hex()")], CB, r"E0599")
    r("undefined_symbol", "strsim", "levenshtein calls generic_levenstein (typo)",
      [("sub", "src/lib.rs", "    generic_levenshtein(&StringWrapper(a), &StringWrapper(b))\n}", "    generic_levenstein(&StringWrapper(a), &StringWrapper(b))\n}")], CB, r"E0425")
    r("undefined_symbol", "shlex", "split refers to `shlex` (the variable is shl)",
      [("sub", "src/lib.rs", "    if shl.had_error {", "    if shlex.had_error {")], CB, r"E0425")
    r("undefined_symbol", "heck", "snake.rs uses a type AsSnake (it is AsSnakeCase)",
      [("sub", "src/snake.rs", "        AsSnakeCase(self).to_string()", "        AsSnake(self).to_string()")], CB, r"E0425|E0412|cannot find")
    r("undefined_symbol", "semver", "a test reads Version::pre_release (the field is pre)",
      [("write", "tests/test_field.rs", "use semver::Version;\n\n#[test]\nfn prerelease_field() {\n    let v = Version::parse(\"1.0.0-alpha\").unwrap();\n    assert_eq!(v.pre_release.as_str(), \"alpha\");\n}\n")], CT, r"E0609|no field")
    r("undefined_symbol", "strsim", "a test calls strsim::jaro_winkler_distance (no such function)",
      [("append", "tests/lib.rs", "\n#[test]\nfn jw_distance() {\n    assert!(strsim::jaro_winkler_distance(\"a\", \"a\") > 0.9);\n}\n")], CT, r"E0425|cannot find function")
    r("undefined_symbol", "hex", "a new function uses a type HexError (it is FromHexError)",
      [("append", "src/lib.rs", "\npub fn check(s: &str) -> Result<(), HexError> {\n    decode_to_slice(s, &mut [0u8; 0])\n}\n")], CB, r"E0412|E0425")
    r("undefined_symbol", "semver", "eval.rs calls matches_comparator_impl (not defined)",
      [("sub", "src/lib.rs", "        eval::matches_comparator(self, version)", "        eval::matches_comparator_impl(self, version)")], CB, r"E0425")

    # ---------------- import_missing
    r("import_missing", "hex", "lib.rs declares `mod codec;` with no src/codec.rs (E0583)",
      [("sub", "src/lib.rs", "mod error;", "mod codec;\nmod error;")], CB, r"E0583")
    r("import_missing", "strsim", "a `use crate::utils::StringWrapper` of a module that does not exist",
      [("append", "src/lib.rs", "\nmod helpers {\n    use crate::utils::StringWrapper;\n}\n")], CB, r"E0432|E0433")
    r("import_missing", "shlex", "a std path typo: use std::colections::HashMap",
      [("append", "src/lib.rs", "\nuse std::colections::HashMap;\n")], CB, r"E0432")
    r("import_missing", "heck", "lib.rs re-exports from a module `camel` (the file is upper_camel.rs)",
      [("append", "src/lib.rs", "\npub use camel::ToCamelCase;\n")], CB, r"E0432|E0433|unresolved")
    r("import_missing", "semver", "renamed src/parse.rs to src/parser.rs, `mod parse;` unchanged",
      [("sh", "git mv src/parse.rs src/parser.rs")], CB, r"E0583")
    r("import_missing", "hex", "a test imports hex::codec::encode (no such module)",
      [("write", "tests/codec.rs", "use hex::codec::encode;\n\n#[test]\nfn enc() {\n    assert_eq!(encode(\"a\"), \"61\");\n}\n")], CT, r"E0432|E0433")

    # ---------------- dependency_missing
    r("dependency_missing", "strsim", "lib.rs uses the regex crate, not in Cargo.toml",
      [("append", "src/lib.rs", "\npub fn words(s: &str) -> usize {\n    regex::Regex::new(r\"\\w+\").unwrap().find_iter(s).count()\n}\n")], CB, r"regex")
    r("dependency_missing", "shlex", "`extern crate rand;` without the dependency (E0463)",
      [("sub", "src/lib.rs", "use alloc::borrow::Cow;", "extern crate rand;\nuse alloc::borrow::Cow;")], CB, r"E0463|can't find crate")
    r("dependency_missing", "heck", "a test uses serde_json, which is not a dev-dependency",
      [("write", "tests/json.rs", "use heck::ToSnakeCase;\n\n#[test]\nfn json_keys() {\n    let v: serde_json::Value = serde_json::from_str(\"{}\").unwrap();\n    assert_eq!(\"HelloWorld\".to_snake_case(), \"hello_world\");\n    let _ = v;\n}\n")], CT, r"serde_json")
    r("dependency_missing", "semver", "use serde::Serialize in a new module without enabling the serde feature",
      [("append", "src/lib.rs", "\nmod export {\n    use serde::Serialize;\n    #[derive(Serialize)]\n    pub struct Report { pub version: String }\n}\n")], CB, r"serde")
    r("dependency_missing", "hex", "a path dependency ../hex-macros that does not exist",
      [("sub", "Cargo.toml", "[features]", "[dependencies.hex-macros]\npath = \"../hex-macros\"\n\n[features]")], CB, r"hex-macros")
    r("dependency_missing", "strsim", "a crate unknown to the local registry (fuzzy-matcher) added to Cargo.toml",
      [("append", "Cargo.toml", "\n[dependencies]\nfuzzy-matcher = \"0.3\"\n")], "cargo build", r"no matching package named `fuzzy-matcher`")

    # ---------------- syntax_error
    r("syntax_error", "hex", "missing semicolon between two statements in a new helper",
      [("append", "src/lib.rs", "\npub fn two() -> usize {\n    let a = 1\n    let b = 1;\n    a + b\n}\n")], CB, r"expected `;`")
    r("syntax_error", "strsim", "an unclosed delimiter in hamming",
      [("sub", "src/lib.rs", "pub fn hamming(a: &str, b: &str) -> HammingResult {\n    generic_hamming(a.chars(), b.chars())\n}", "pub fn hamming(a: &str, b: &str) -> HammingResult {\n    generic_hamming(a.chars(), b.chars()\n}")], CB, r"unclosed delimiter|mismatched closing delimiter")
    r("syntax_error", "shlex", "`let x = ;` in quote", [("sub", "src/lib.rs", "        let mut out: Vec<u8> = Vec::new();", "        let mut out: Vec<u8> = ;")], CB, r"expected expression")
    r("syntax_error", "heck", "`=>` replaced by `->` in a match arm (lib.rs transform)",
      [("append", "src/lib.rs", "\npub fn kind(c: char) -> u8 {\n    match c {\n        'a'..='z' -> 1,\n        _ => 0,\n    }\n}\n")], CB, r"expected one of")
    r("syntax_error", "semver", "cargo fmt --check on a file with a stray `}`",
      [("append", "src/lib.rs", "\n}\n")], "cargo fmt --check", r"unexpected closing delimiter|error")
    r("syntax_error", "hex", "a test with an unterminated string literal",
      [("write", "tests/bad.rs", "#[test]\nfn t() {\n    assert_eq!(hex::encode(\"a\"), \"61);\n}\n")], CT, r"unterminated double quote string")
    r("syntax_error", "strsim", "`fn` keyword misspelled `fun` in tests/lib.rs",
      [("append", "tests/lib.rs", "\n#[test]\nfun lev_empty() {\n    assert_eq!(strsim::levenshtein(\"\", \"\"), 0);\n}\n")], CT, r"expected one of|expected item")

    # ---------------- test_assertion
    r("test_assertion", "hex", "val() maps 'a'..'f' to 11..16", [("sub", "src/lib.rs", "        b'a'..=b'f' => Ok(c - b'a' + 10),", "        b'a'..=b'f' => Ok(c - b'a' + 11),")], CT, r"assertion `left == right` failed|assertion failed")
    r("test_assertion", "strsim", "generic_hamming counts equal characters", [("sub", "src/lib.rs", "                if x != y {\n                    count += 1", "                if x == y {\n                    count += 1")], CT + " --lib", r"assertion `left == right` failed|assertion failed")
    r("test_assertion", "semver", "a new test expects ^1.2 to match 2.0.0", [("write", "tests/test_caret.rs", "use semver::{Version, VersionReq};\n\n#[test]\nfn caret_allows_next_major() {\n    let req = VersionReq::parse(\"^1.2\").unwrap();\n    assert!(req.matches(&Version::parse(\"2.0.0\").unwrap()), \"^1.2 should match 2.0.0\");\n}\n")], CT + " --test test_caret", r"should match 2.0.0")
    r("test_assertion", "hex", "encode_upper uses the lower-case table", [("sub", "src/lib.rs", "    data.encode_hex_upper()", "    data.encode_hex()")], CT + " --doc", r"assertion|FAILED")
    r("test_assertion", "strsim", "a new test with a wrong expected distance", [("append", "tests/lib.rs", "\n#[test]\nfn kitten_sitting() {\n    assert_eq!(strsim::levenshtein(\"kitten\", \"sitting\"), 2, \"three edits expected\");\n}\n")], CT + " --test lib", r"assertion `left == right` failed")
    r("test_assertion", "semver", "Version ordering compares patch before minor", [("write", "tests/test_order.rs", "use semver::Version;\n\n#[test]\nfn ordering() {\n    let a = Version::parse(\"1.2.9\").unwrap();\n    let b = Version::parse(\"1.10.0\").unwrap();\n    assert!(a > b);\n}\n")], CT + " --test test_order", r"assertion failed: a > b")

    # ---------------- test_panic
    r("test_panic", "hex", "a test unwraps the decode of an odd-length string", [("write", "tests/odd.rs", "#[test]\nfn decode_odd() {\n    let v = hex::decode(\"abc\").unwrap();\n    assert_eq!(v.len(), 2);\n}\n")], CT + " --test odd", r"called `Result::unwrap\(\)` on an `Err` value")
    r("test_panic", "shlex", "split(...).unwrap() of an unterminated quote in a new test", [("append", "src/lib.rs", "\n#[cfg(test)]\nmod more_tests {\n    #[test]\n    fn split_unterminated() {\n        let words = super::split(\"echo 'oops\").unwrap();\n        assert_eq!(words.len(), 2);\n    }\n}\n")], CT, r"called `Option::unwrap\(\)` on a `None` value")
    r("test_panic", "strsim", "a test indexes past the end of a Vec", [("append", "tests/lib.rs", "\n#[test]\nfn best_match() {\n    let words = vec![\"apple\", \"apply\"];\n    let best = words[2];\n    assert!(strsim::jaro(best, \"appl\") > 0.5);\n}\n")], CT + " --test lib", r"index out of bounds")
    r("test_panic", "heck", "a test divides by a zero word count", [("write", "tests/avg.rs", "use heck::ToSnakeCase;\n\n#[test]\nfn average_word_length() {\n    let s = \"\".to_snake_case();\n    let words = s.split('_').filter(|w| !w.is_empty()).count();\n    let avg = s.len() / words;\n    assert!(avg > 0);\n}\n")], CT + " --test avg", r"attempt to divide by zero")
    r("test_panic", "semver", "a test subtracts past zero on a u64 (overflow in debug)", [("write", "tests/test_prev.rs", "use semver::Version;\n\n#[test]\nfn previous_major() {\n    let v = Version::parse(\"0.4.0\").unwrap();\n    let prev = v.major - 1;\n    assert_eq!(prev, 0);\n}\n")], CT + " --test test_prev", r"attempt to subtract with overflow")
    r("test_panic", "hex", "explicit panic! in decode_to_slice for long inputs", [("sub", "src/lib.rs", "pub fn decode_to_slice<T: AsRef<[u8]>>(data: T, out: &mut [u8]) -> Result<(), FromHexError> {", "pub fn decode_to_slice<T: AsRef<[u8]>>(data: T, out: &mut [u8]) -> Result<(), FromHexError> {\n    if data.as_ref().len() > 4 {\n        panic!(\"decode_to_slice: input too long ({} bytes)\", data.as_ref().len());\n    }")], CT + " --lib", r"input too long")
    r("test_panic", "semver", "RefCell borrowed mutably twice in a test", [("write", "tests/test_cell.rs", "use std::cell::RefCell;\n\n#[test]\nfn cached_versions() {\n    let cache = RefCell::new(vec![semver::Version::new(1, 0, 0)]);\n    let first = cache.borrow_mut();\n    cache.borrow_mut().push(semver::Version::new(2, 0, 0));\n    assert_eq!(first.len(), 1);\n}\n")], CT + " --test test_cell", r"already borrowed|BorrowMutError")

    # ---------------- test_timeout
    r("test_timeout", "shlex", "Shlex::next loops forever; `timeout 20 cargo test`", [("sub", "src/lib.rs", "    fn next_char(&mut self) -> Option<u8> {", "    fn next_char(&mut self) -> Option<u8> {\n        loop {\n            std::hint::spin_loop();\n        }\n        #[allow(unreachable_code)]")], "timeout 20 cargo test --offline", r"Running")
    r("test_timeout", "strsim", "a test sleeps for 120 s; stopped by `timeout -s INT 15`", [("append", "tests/lib.rs", "\n#[test]\nfn slow_similarity() {\n    std::thread::sleep(std::time::Duration::from_secs(120));\n    assert!(strsim::jaro(\"a\", \"a\") > 0.0);\n}\n")], "timeout -s INT 15 cargo test --offline --test lib", r"Running")
    r("test_timeout", "heck", "a test waits on a channel with no sender thread alive; `timeout 70`", [("write", "tests/wait.rs", "use std::sync::mpsc;\n\n#[test]\nfn waits_for_case() {\n    let (tx, rx) = mpsc::channel::<String>();\n    let _keep = tx;\n    let s = rx.recv().unwrap();\n    assert_eq!(s, \"x\");\n}\n")], "timeout 70 cargo test --offline --test wait", r"has been running for over 60 seconds")

    # ---------------- lint_failure
    CL = "cargo clippy --offline -q -- -D warnings"
    r("lint_failure", "hex", "a needless `return` and a redundant clone", [("append", "src/lib.rs", "\n#[cfg(feature = \"alloc\")]\npub fn encode_owned(s: String) -> String {\n    let t = s.clone();\n    return encode(t);\n}\n")], CL, r"clippy::needless_return|needless_return|redundant_clone")
    r("lint_failure", "hex", "`len() == 0` instead of is_empty()", [("append", "src/lib.rs", "\npub fn is_blank(s: &str) -> bool {\n    s.trim().len() == 0\n}\n")], CL, r"len_zero|is_empty")
    r("lint_failure", "hex", "a manual range check", [("append", "src/lib.rs", "\npub fn is_digit(c: u8) -> bool {\n    c >= b'0' && c <= b'9'\n}\n")], CL, r"manual_range_contains|is_ascii_digit")
    r("lint_failure", "strsim", "an unused variable with RUSTFLAGS=-D warnings", [("sub", "src/lib.rs", "    generic_levenshtein(&StringWrapper(a), &StringWrapper(b))\n}", "    let unused = a.len();\n    generic_levenshtein(&StringWrapper(a), &StringWrapper(b))\n}")], "RUSTFLAGS='-D warnings' cargo build --offline", r"unused variable")
    r("lint_failure", "shlex", "clippy::single_char_pattern style lint selected explicitly", [("append", "src/lib.rs", "\npub fn first_field(s: &str) -> Option<&str> {\n    s.split(\"=\").next()\n}\n")], "cargo clippy --offline -q -- -A clippy::all -D clippy::single_char_pattern", r"single_char_pattern|single-character")
    r("lint_failure", "semver", "#![deny(missing_docs)] style: a new public fn without docs", [("sub", "src/lib.rs", "#![doc(html_root_url", "#![deny(missing_docs)]\n#![doc(html_root_url"), ("append", "src/lib.rs", "\npub fn newest(a: Version, b: Version) -> Version {\n    if a > b { a } else { b }\n}\n")], CB, r"missing documentation")
    r("lint_failure", "heck", "an unused import with -D warnings", [("sub", "src/snake.rs", "use std::fmt;", "use std::fmt;\nuse std::fmt::Write as _;")], "RUSTFLAGS='-D warnings' cargo build --offline", r"unused import")
    r("lint_failure", "hex", "a comparison of a float to itself (clippy eq_op)", [("append", "src/lib.rs", "\npub fn same(x: f64) -> bool {\n    x == x\n}\n")], CL, r"eq_op|equal expressions|float_cmp")

    # ---------------- format_failure
    r("format_failure", "hex", "a function squeezed onto one line", [("append", "src/lib.rs", "\npub fn nibble(b:u8)->(u8,u8){ (b>>4,b&0xf) }\n")], "cargo fmt --check", r"Diff in")
    r("format_failure", "strsim", "over-indented body of hamming", [("sub", "src/lib.rs", "pub fn hamming(a: &str, b: &str) -> HammingResult {\n    generic_hamming(a.chars(), b.chars())", "pub fn hamming(a: &str, b: &str) -> HammingResult {\n            generic_hamming(a.chars(), b.chars())")], "cargo fmt --check", r"Diff in")
    r("format_failure", "heck", "a long use list on one line in lib.rs", [("append", "src/lib.rs", "\n#[allow(unused_imports)]\nuse crate::{kebab::ToKebabCase,lower_camel::ToLowerCamelCase,shouty_kebab::ToShoutyKebabCase,shouty_snake::ToShoutySnakeCase};\n")], "cargo fmt --check", r"Diff in")
    r("format_failure", "semver", "trailing whitespace and a brace on its own line", [("append", "src/lib.rs", "\nfn helper()\n{\n    let _x = 1;   \n}\n")], "cargo fmt -- --check", r"Diff in")
    r("format_failure", "shlex", "a match with arms on one line in a test", [("append", "src/lib.rs", "\n#[cfg(test)]\nfn classify(c: char) -> u8 { match c { 'a' => 1, 'b' => 2, _ => 0 } }\n")], "cargo fmt --check", r"Diff in")
    r("format_failure", "hex", "tests/serde.rs re-indented with tabs", [("sh", "sed -i 's/^    /\\t/' tests/serde.rs")], "cargo fmt --all --check", r"Diff in")

    # ---------------- offline_cache_miss
    r("offline_cache_miss", "hex", "Cargo.toml gains `regex = \"1\"`, which the offline registry does not have", [("sub", "Cargo.toml", "[features]", "[dependencies.regex]\nversion = \"1\"\n\n[features]")], CB, r"no matching package")
    r("offline_cache_miss", "strsim", "a newer itoa (2.0) required, only 1.0.1 is available offline", [("append", "Cargo.toml", "\n[dependencies]\nitoa = \"2.0\"\n")], "cargo generate-lockfile --offline", r"failed to select a version|itoa")
    r("offline_cache_miss", "shlex", "cargo update --offline after adding anyhow", [("append", "Cargo.toml", "\n[dependencies]\nanyhow = \"1\"\n")], "cargo update --offline", r"no matching package named `anyhow`")
    r("offline_cache_miss", "heck", "cargo fetch --offline with unicode-segmentation bumped to 1.12", [("re", "Cargo.toml", r'\[dependencies\.unicode-segmentation\]\nversion = "[^"]+"', '[dependencies.unicode-segmentation]\nversion = "1.12"')], "cargo fetch --offline", r"failed to select a version|unicode-segmentation")

    # ---------------- network_unavailable
    r("network_unavailable", "hex", "a git dependency on GitHub", [("sub", "Cargo.toml", "[features]", "[dependencies.faster-hex]\ngit = \"https://github.com/nugine/faster-hex\"\n\n[features]")], "cargo build", r"failed to resolve address|Could not resolve host|Couldn't resolve host")
    r("network_unavailable", "strsim", "cargo search against the crates.io API", [], "cargo search --registry crates-io --limit 1 strsim", r"failed to resolve address|Could not resolve host|Couldn't resolve host|dns")
    r("network_unavailable", "semver", "cargo install of a tool from a git URL", [], "cargo install --git https://github.com/dtolnay/cargo-expand cargo-expand", r"failed to resolve address|Could not resolve host|Couldn't resolve host")

    # ---------------- toolchain_version
    r("toolchain_version", "hex", "rust-version raised to 1.99", [("sub", "Cargo.toml", "[package]\n", "[package]\nrust-version = \"1.99\"\n")], CB, r"requires rustc 1.99")
    r("toolchain_version", "strsim", "edition = \"2027\"", [("sub", "Cargo.toml", "[package]\n", "[package]\nedition = \"2027\"\n")], CB, r"2027")
    r("toolchain_version", "shlex", "rust-version = \"1.120\" with cargo test", [("sub", "Cargo.toml", "[package]\n", "[package]\nrust-version = \"1.120\"\n")], CT, r"requires rustc 1.120")
    r("toolchain_version", "semver", "a nightly-only feature gate in lib.rs", [("sub", "src/lib.rs", "#![doc(html_root_url", "#![feature(never_type)]\n#![doc(html_root_url")], CB, r"E0554|may not be used on the stable release channel")

    # ---------------- env_var_missing
    r("env_var_missing", "hex", "env!(\"HEX_BUILD_ID\") in lib.rs", [("append", "src/lib.rs", "\npub const BUILD_ID: &str = env!(\"HEX_BUILD_ID\");\n")], CB, r"environment variable `HEX_BUILD_ID` not defined")
    r("env_var_missing", "strsim", "a test reads STRSIM_CORPUS with std::env::var(...).expect", [("append", "tests/lib.rs", "\n#[test]\nfn corpus_from_env() {\n    let path = std::env::var(\"STRSIM_CORPUS\").expect(\"STRSIM_CORPUS must be set\");\n    assert!(!path.is_empty());\n}\n")], CT + " --test lib corpus_from_env", r"STRSIM_CORPUS must be set")
    r("env_var_missing", "semver", "a small example binary needs TARGET_VERSION", [("write", "examples/check.rs", "fn main() {\n    let v = std::env::var(\"TARGET_VERSION\").unwrap_or_else(|_| {\n        eprintln!(\"check: TARGET_VERSION is not set\");\n        std::process::exit(2)\n    });\n    println!(\"{}\", semver::Version::parse(&v).unwrap());\n}\n")], "cargo run --offline -q --example check", r"TARGET_VERSION is not set")

    # ---------------- permission_denied
    nob = "runuser -u nobody -- env HOME=/tmp/nobody-home CARGO_HOME=/tmp/nobody-cargo PATH=/root/.cargo/bin:/usr/bin:/bin RUSTUP_HOME=/root/.rustup "
    r("permission_denied", "hex", "cargo build as user nobody in a root-owned checkout", [("sh", "chmod -R o+rX . && chmod o+rx /root /root/.cargo /root/.rustup 2>/dev/null; true")], nob + "cargo build --offline", r"Permission denied|permission denied")
    r("permission_denied", "strsim", "CARGO_TARGET_DIR is a root-only directory", [("sh", "mkdir -p /tmp/diagcorpus/root-target && chmod 700 /tmp/diagcorpus/root-target && chmod -R o+rX .; chmod o+rx /root /root/.cargo /root/.rustup; true")], nob + "CARGO_TARGET_DIR=/tmp/diagcorpus/root-target cargo build --offline", r"Permission denied|permission denied")

    # ---------------- disk_full
    small = os.path.join(SCRATCH, "small")

    def mount_small(work):
        sh(f"mkdir -p {small}; umount {small} 2>/dev/null; mount -t tmpfs -o size=2m tmpfs {small}")
    r("disk_full", "hex", "a test writes a 3 MB fixture into a full tmpfs", [mount_small, ("write", "tests/dump.rs", f"#[test]\nfn dump_fixture() {{\n    let data = hex::encode(vec![7u8; 3 << 20]);\n    std::fs::write(\"{small}/fixture.hex\", data).unwrap();\n}}\n")], CT + " --test dump", r"No space left on device|StorageFull")

    # ---------------- out_of_memory
    r("out_of_memory", "hex", "a test encodes a 4 GiB buffer under ulimit -v 2 GiB", [("write", "tests/huge.rs", "#[test]\nfn encode_huge() {\n    let data = vec![1u8; 4 << 30];\n    assert!(!hex::encode(data).is_empty());\n}\n")], "cargo test --offline --no-run -q 2>/dev/null; ulimit -v 2000000; cargo test --offline --test huge", r"memory allocation of \d+ bytes failed")
    r("out_of_memory", "strsim", "levenshtein of two 200k strings with a full matrix, under ulimit -v 1 GiB", [("append", "tests/lib.rs", "\n#[test]\nfn huge_matrix() {\n    let n = 200_000;\n    let m: Vec<Vec<usize>> = (0..n).map(|_| vec![0usize; n]).collect();\n    assert_eq!(m.len(), n);\n}\n")], "cargo test --offline --no-run -q 2>/dev/null; ulimit -v 1000000; cargo test --offline --test lib huge_matrix", r"memory allocation of \d+ bytes failed")

    # ---------------- command_not_found
    r("command_not_found", "hex", "cargo nextest is not installed", [], "cargo nextest run", r"no such command")
    r("command_not_found", "semver", "a CI script calls cargo-deny", [("write", "ci.sh", "#!/bin/sh\nset -e\ncargo-deny check licenses\n"), ("chmod", "ci.sh", 0o755)], "./ci.sh", r"not found")

    # ---------------- no_tests_ran
    r("no_tests_ran", "hex", "no break: a test filter that matches nothing", [], "cargo test --offline -q decode_base64", r"running 0 tests", allow_zero=True)
    r("no_tests_ran", "heck", "no break: --test of an integration test target that has no tests", [("write", "tests/empty.rs", "// integration tests go here\n")], "cargo test --offline --test empty", r"running 0 tests", allow_zero=True)
    r("no_tests_ran", "shlex", "no break: --exact filter with a test name typo", [], "cargo test --offline --lib -- --exact test_splt", r"running 0 tests", allow_zero=True)

    # ---------------- flaky_test
    r("flaky_test", "strsim", "a test asserting an even clock reading, run 6 times", [("append", "tests/lib.rs", "\n#[test]\nfn clock_even() {\n    let n = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos() / 1000;\n    assert_eq!(n % 2, 0, \"odd microsecond {}\", n);\n}\n"), ("sh", "cargo test --offline --no-run -q 2>/dev/null")], "for i in 1 2 3 4 5 6; do cargo test --offline -q --test lib clock_even; done", r"(?s)(test result: ok.*test result: FAILED|test result: FAILED.*test result: ok)", allow_zero=True)
    r("flaky_test", "shlex", "a test depending on HashMap iteration order, run 6 times", [("append", "src/lib.rs", "\n#[cfg(test)]\nmod order_tests {\n    #[test]\n    fn words_in_order() {\n        let mut m = std::collections::HashMap::new();\n        for w in super::split(\"a b\").unwrap() {\n            m.insert(w.clone(), w);\n        }\n        let keys: Vec<_> = m.keys().cloned().collect();\n        assert_eq!(keys.join(\" \"), \"a b\");\n    }\n}\n"), ("sh", "cargo test --offline --no-run -q 2>/dev/null")], "for i in 1 2 3 4 5 6; do cargo test --offline -q --lib words_in_order; done", r"(?s)(test result: ok.*test result: FAILED|test result: FAILED.*test result: ok)", allow_zero=True)

    # ---------------- unknown
    r("unknown", "heck", "a build script exits 1 with its own message", [("write", "build.rs", "fn main() {\n    eprintln!(\"heck build: unexpected state, giving up\");\n    std::process::exit(1);\n}\n")], CB, r"unexpected state")

    # ---------------- batch "toolchains": assertions with the test's own
    # message (assert!(cond, "…"), a custom panic in a test), cargo test -q,
    # a crash in an expect(), and cargo missing from PATH.
    B = {"batch": "toolchains"}
    NB = base_env(RUST_BACKTRACE="0")
    r("test_assertion", "heck", "a new unit test asserts with its own message; the expected snake case is wrong",
      [("append", "src/lib.rs", "\n#[cfg(test)]\nmod snake_tests {\n    use crate::ToSnakeCase;\n\n    #[test]\n    fn snake_of_camel() {\n        let s = \"FooBar\".to_snake_case();\n        assert!(s == \"foobar\", \"snake case of FooBar, got {}\", s);\n    }\n}\n")],
      CT + " --lib", r"snake case of FooBar", env=NB, **B)
    r("test_assertion", "strsim", "levenshtein counts one edit too many; the test asserts with a message",
      [("sub", "src/lib.rs", "    generic_levenshtein(&StringWrapper(a), &StringWrapper(b))\n}", "    generic_levenshtein(&StringWrapper(a), &StringWrapper(b)) + 1\n}"),
       ("append", "tests/lib.rs", "\n#[test]\nfn kitten_is_three_edits() {\n    let d = strsim::levenshtein(\"kitten\", \"sitting\");\n    assert!(d == 3, \"kitten to sitting is three edits, got {}\", d);\n}\n")],
      CT + " --test lib", r"three edits", env=NB, **B)
    r("test_assertion", "shlex", "a space is no longer a word separator in the lexer (its first `' ' |` arm removed); cargo test -q",
      [("re", "src/lib.rs", r"' ' \|\s*", "")],
      CT + " -q", r"FAILED|panicked", env=NB, **B)
    r("test_assertion", "hex", "encode writes upper-case digits; cargo test -q --lib",
      [("sub", "src/lib.rs", "const HEX_CHARS_LOWER: &[u8; 16] = b\"0123456789abcdef\";", "const HEX_CHARS_LOWER: &[u8; 16] = b\"0123456789ABCDEF\";")],
      CT + " -q --lib", r"assertion", **B)
    r("test_assertion", "semver", "a new test panics with its own message when the requirement does not match",
      [("write", "tests/test_tilde.rs", "use semver::{Version, VersionReq};\n\n#[test]\nfn tilde_allows_next_minor() {\n    let req = VersionReq::parse(\"~1.2\").unwrap();\n    if !req.matches(&Version::parse(\"1.3.0\").unwrap()) {\n        panic!(\"~1.2 should match 1.3.0\");\n    }\n}\n")],
      CT + " --test test_tilde", r"should match 1.3.0", env=NB, **B)
    r("test_panic", "semver", "a test parses a version with expect() on a malformed string",
      [("write", "tests/test_parse.rs", "use semver::Version;\n\n#[test]\nfn parses_minor() {\n    let v = Version::parse(\"1.x.0\").expect(\"a valid version\");\n    assert_eq!(v.minor, 0);\n}\n")],
      CT + " --test test_parse", r"a valid version: Error", env=NB, **B)
    r("command_not_found", "hex", "no break: cargo is not on the PATH the command runs with",
      [], CT, r"cargo: command not found", env=base_env(PATH="/usr/local/bin:/usr/bin:/bin"), **B)

    C.write()


if __name__ == "__main__":
    main()
