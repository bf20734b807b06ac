#!/usr/bin/env python3
"""Python samples: real pure-Python libraries from Debian 12 packages (idna, packaging,
toml, attrs, six), copied out of /usr/lib/python3/dist-packages next to small pytest
suites written for them, then broken. Tools: Debian's python3 3.11.2 with pytest 7.2.1,
mypy 1.0.1, flake8 5.0.4, pyflakes 2.5.0, black 23.1.0 (apt-get install python3-pytest
python3-mypy python3-flake8 python3-pyflakes black python3-idna python3-packaging
python3-toml python3-attr python3-six)."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import Corpus, SCRATCH, sh, base_env  # noqa: E402

SRC = os.path.join(SCRATCH, "src", "python")
DIST = "/usr/lib/python3/dist-packages"
PY = "/usr/bin/python3"

TESTS = {
    "idna": ("idna-3.3", ["idna"], '''import pytest

import idna


def test_encode_japanese():
    assert idna.encode("ドメイン.テスト") == b"xn--eckwd4c7c.xn--zckzah"


def test_decode_japanese():
    assert idna.decode(b"xn--eckwd4c7c.xn--zckzah") == "ドメイン.テスト"


def test_uts46_mapping():
    assert idna.encode("Königsgäßchen", uts46=True) == b"xn--knigsgchen-b4a3dun"


def test_alabel():
    assert idna.alabel("müller") == b"xn--mller-kva"


def test_ulabel():
    assert idna.ulabel(b"xn--mller-kva") == "müller"


def test_empty_label_rejected():
    with pytest.raises(idna.IDNAError):
        idna.encode("a..b")


def test_check_hyphen_ok():
    assert idna.check_hyphen_ok("abc-def")
'''),
    "packaging": ("packaging-23.0", ["packaging"], '''import pytest

from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version


def test_version_order():
    assert Version("1.10") > Version("1.9")


def test_prerelease():
    assert Version("2.0rc1").is_prerelease
    assert not Version("2.0").is_prerelease


def test_base_version():
    assert Version("1.2.3.post4").base_version == "1.2.3"


def test_specifier_contains():
    assert "1.4" in SpecifierSet(">=1.2,<2")
    assert "2.1" not in SpecifierSet(">=1.2,<2")


def test_requirement():
    r = Requirement('requests[security]>=2.8.1; python_version < "2.7"')
    assert r.name == "requests"
    assert r.extras == {"security"}
    assert str(r.specifier) == ">=2.8.1"


def test_marker():
    assert Marker('python_version >= "3"').evaluate()


def test_invalid_version():
    with pytest.raises(InvalidVersion):
        Version("not a version")
'''),
    "toml": ("toml-0.10.2", ["toml"], '''import pytest

import toml


def test_loads_table():
    assert toml.loads('a = 1\\n[b]\\nc = "x"\\n') == {"a": 1, "b": {"c": "x"}}


def test_dumps_simple():
    assert toml.dumps({"a": 1}) == "a = 1\\n"


def test_array():
    assert toml.loads("x = [1, 2, 3]")["x"] == [1, 2, 3]


def test_roundtrip():
    d = {"title": "T", "owner": {"name": "n", "age": 3}}
    assert toml.loads(toml.dumps(d)) == d


def test_bool_and_float():
    assert toml.loads("on = true\\npi = 3.5") == {"on": True, "pi": 3.5}


def test_decode_error():
    with pytest.raises(toml.TomlDecodeError):
        toml.loads("a = ")
'''),
    "attrs": ("attrs-22.2.0", ["attr"], '''import pytest

import attr


@attr.s
class Point:
    x = attr.ib()
    y = attr.ib(default=0)


@attr.s(frozen=True)
class Frozen:
    name = attr.ib(validator=attr.validators.instance_of(str))


def test_init_defaults():
    p = Point(1)
    assert (p.x, p.y) == (1, 0)


def test_eq():
    assert Point(1, 2) == Point(1, 2)
    assert Point(1, 2) != Point(2, 1)


def test_asdict():
    assert attr.asdict(Point(1, 2)) == {"x": 1, "y": 2}


def test_evolve():
    assert attr.evolve(Point(1, 2), y=3) == Point(1, 3)


def test_repr():
    assert repr(Point(1, 2)) == "Point(x=1, y=2)"


def test_validator():
    with pytest.raises(TypeError):
        Frozen(3)


def test_frozen():
    f = Frozen("a")
    with pytest.raises(attr.exceptions.FrozenInstanceError):
        f.name = "b"
'''),
    "six": ("six-1.16.0", ["six.py"], '''import six


def test_string_types():
    assert isinstance("x", six.string_types)


def test_iteritems():
    assert sorted(six.iteritems({"a": 1, "b": 2})) == [("a", 1), ("b", 2)]


def test_b_and_u():
    assert six.b("x") == b"x"
    assert six.u("x") == "x"


def test_ensure_text():
    assert six.ensure_text(b"abc") == "abc"
    assert six.ensure_binary("abc") == b"abc"


def test_moves_range():
    from six.moves import range
    assert list(range(3)) == [0, 1, 2]


def test_with_metaclass():
    class Meta(type):
        pass

    class C(six.with_metaclass(Meta, object)):
        pass

    assert type(C) is Meta
'''),
}

APP_CLI = '''"""settings: print the package versions a TOML settings file pins."""
import os
import sys

from packaging.version import Version

from settings import store


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    default = os.environ.get("SETTINGS_FILE", "settings.toml")
    path = argv[0] if argv else default
    data = store.load(path)
    for name, ver in sorted(data.get("pins", {}).items()):
        print(f"{name} {Version(ver)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''
APP_STORE = '''from typing import Any, Dict

import toml  # type: ignore[import]


def load(path: str) -> Dict[str, Any]:
    with open(path, encoding="utf-8") as f:
        return toml.load(f)


def pin_count(data: Dict[str, Any]) -> int:
    return len(data.get("pins", {}))
'''
APP_TEST = '''from settings import cli, store


def test_load(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text('[pins]\\nattrs = "22.2.0"\\n')
    assert store.pin_count(store.load(str(p))) == 1


def test_main(tmp_path, capsys):
    p = tmp_path / "s.toml"
    p.write_text('[pins]\\nidna = "3.3"\\n')
    assert cli.main([str(p)]) == 0
    assert capsys.readouterr().out == "idna 3.3\\n"
'''


def prepare():
    os.makedirs(SRC, exist_ok=True)
    for key, (dirname, items, test) in TESTS.items():
        d = os.path.join(SRC, dirname)
        if os.path.exists(os.path.join(d, ".prepared")):
            continue
        sh(f"rm -rf {d} && mkdir -p {d}/tests")
        for it in items:
            sh(f"cp -R {DIST}/{it} {d}/ && find {d} -name __pycache__ -prune -exec rm -rf {{}} +")
        open(os.path.join(d, "tests", f"test_{key}.py"), "w").write(test)
        sh(f"{PY} -m pytest -q -p no:cacheprovider", cwd=d)
        sh("git init -q && git add -A && git -c user.name=corpus -c user.email=corpus@invalid commit -qm pristine", cwd=d)
        open(os.path.join(d, ".prepared"), "w").write("")
    d = os.path.join(SRC, "settings-app")
    if not os.path.exists(os.path.join(d, ".prepared")):
        sh(f"rm -rf {d} && mkdir -p {d}/settings {d}/tests")
        open(f"{d}/settings/__init__.py", "w").write("")
        open(f"{d}/settings/cli.py", "w").write(APP_CLI)
        open(f"{d}/settings/store.py", "w").write(APP_STORE)
        open(f"{d}/tests/test_settings.py", "w").write(APP_TEST)
        open(f"{d}/settings.toml", "w").write('[pins]\nattrs = "22.2.0"\npackaging = "23.0"\n')
        open(f"{d}/pyproject.toml", "w").write('[project]\nname = "settings"\nversion = "0.1.0"\nrequires-python = ">=3.9"\ndependencies = ["toml", "packaging"]\n\n[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n')
        sh(f"{PY} -m pytest -q -p no:cacheprovider && {PY} -m flake8 settings tests && black --check -q settings tests", cwd=d)
        sh("git init -q && git add -A && git -c user.name=corpus -c user.email=corpus@invalid commit -qm pristine", cwd=d)
        open(os.path.join(d, ".prepared"), "w").write("")


def main():
    prepare()
    C = Corpus("python")
    run = C.run
    P = {k: os.path.join(SRC, v[0]) for k, v in TESTS.items()}
    P["app"] = os.path.join(SRC, "settings-app")
    N = {"idna": "idna 3.3 (Debian python3-idna)", "packaging": "packaging 23.0 (Debian python3-packaging)",
         "toml": "toml 0.10.2 (Debian python3-toml)", "attrs": "attrs 22.2.0 (Debian python3-attr)",
         "six": "six 1.16.0 (Debian python3-six)", "app": "settings-app (small CLI on toml + packaging, written for the corpus)"}
    PT = f"{PY} -m pytest -p no:cacheprovider"

    def r(pattern, proj, brk, ops, cmd, expect=None, **kw):
        run(pattern, N[proj], P[proj], brk, ops, cmd, expect, **kw)

    # ---------------- syntax_error
    r("syntax_error", "idna", "dropped the colon after `def check_bidi(...) -> bool` in idna/core.py",
      [("sub", "idna/core.py", "def check_bidi(label: str, check_ltr: bool = False) -> bool:", "def check_bidi(label: str, check_ltr: bool = False) -> bool")],
      f"{PT} -q", r"SyntaxError")
    r("syntax_error", "packaging", "unbalanced parenthesis in Version.__str__ (packaging/version.py)",
      [("sub", "packaging/version.py", 'parts.append(f"{self.epoch}!")', 'parts.append(f"{self.epoch}!"')],
      f"{PT} -q", r"SyntaxError|was never closed")
    r("syntax_error", "toml", "mis-indented a line inside TomlDecoder.load_line (toml/decoder.py)",
      [("sub", "toml/decoder.py", "        pair = line.split('=', i)\n", "          pair = line.split('=', i)\n")],
      f"{PY} -c 'import toml'", r"IndentationError|SyntaxError")
    r("syntax_error", "six", "a Python 2 print statement added to six.py",
      [("sub", "six.py", "def _add_doc(func, doc):", "print \"six loaded\"\n\n\ndef _add_doc(func, doc):")],
      f"{PT} -q tests", r"SyntaxError")
    r("syntax_error", "attrs", "an unterminated string in attr/_make.py",
      [("re", "attr/_make.py", r'_classvar_prefixes = \(\n    "typing\.ClassVar",', '_classvar_prefixes = (\n    "typing.ClassVar,')],
      f"{PY} -m compileall -q attr", r"SyntaxError|unterminated")
    r("syntax_error", "app", "`else if` instead of `elif` in settings/cli.py",
      [("sub", "settings/cli.py", "    for name, ver in sorted(", "    if not data:\n        return 1\n    else if len(data) > 10:\n        return 2\n    for name, ver in sorted(")],
      f"{PY} -m settings.cli settings.toml", r"SyntaxError")
    r("syntax_error", "app", "a stray `)` in the test file",
      [("sub", "tests/test_settings.py", "    assert cli.main([str(p)]) == 0\n", "    assert cli.main([str(p)])) == 0\n")],
      f"{PY} -m flake8 tests", r"E999|SyntaxError")
    r("syntax_error", "packaging", "an f-string with a missing closing brace in packaging/utils.py",
      [("sub", "packaging/utils.py", "def canonicalize_name(name: str) -> NormalizedName:\n", 'def canonicalize_name(name: str) -> NormalizedName:\n    _ = f"{name"\n')],
      f"{PT} -q -x", r"SyntaxError")
    r("syntax_error", "idna", "the settings of a dict literal in idna/codec.py lost a comma",
      [("sub", "idna/codec.py", "class Codec(codecs.Codec):", "_TABLE = {\n    'a': 1\n    'b': 2,\n}\n\n\nclass Codec(codecs.Codec):")],
      f"{PY} -m py_compile idna/codec.py", r"SyntaxError")

    # ---------------- undefined_symbol
    r("undefined_symbol", "idna", "alabel calls label_length_ok (the function is valid_label_length) in idna/core.py",
      [("re", "idna/core.py", r"(def alabel\(label: str\) -> bytes:\n[\s\S]*?)if not valid_label_length\(label_bytes\):", r"\1if not label_length_ok(label_bytes):", 2)],
      f"{PT} -q", r"NameError")
    r("undefined_symbol", "toml", "the test calls toml.load_string (does not exist)",
      [("sub", "tests/test_toml.py", "    assert toml.loads(\"x = [1, 2, 3]\")[\"x\"]", "    assert toml.load_string(\"x = [1, 2, 3]\")[\"x\"]")],
      f"{PT} -q", r"AttributeError: module 'toml' has no attribute 'load_string'")
    r("undefined_symbol", "packaging", "the test reads Version.base (the property is base_version)",
      [("sub", "tests/test_packaging.py", '.base_version == "1.2.3"', '.base == "1.2.3"')],
      f"{PT} -q", r"AttributeError: 'Version' object has no attribute 'base'")
    r("undefined_symbol", "attrs", "the test calls attr.as_dict (it is asdict)",
      [("sub", "tests/test_attrs.py", "attr.asdict(Point(1, 2))", "attr.as_dict(Point(1, 2))")],
      f"{PT} -q", r"AttributeError: module 'attr' has no attribute 'as_dict'")
    r("undefined_symbol", "six", "ensure_text refers to binary_typ (typo of binary_type) in six.py",
      [("re", "six.py", r"(def ensure_text\(s, encoding='utf-8', errors='strict'\):[\s\S]*?)if isinstance\(s, binary_type\):", r"\1if isinstance(s, binary_typ):")],
      f"{PT} -q", r"NameError: name 'binary_typ' is not defined")
    r("undefined_symbol", "app", "store.load calls toml.parse_file, which toml does not have",
      [("sub", "settings/store.py", "return toml.load(f)", "return toml.parse_file(f)")],
      f"{PY} -m settings.cli settings.toml", r"AttributeError: module 'toml' has no attribute 'parse_file'")
    r("undefined_symbol", "app", "cli.py uses Versoin (typo); mypy run",
      [("sub", "settings/cli.py", 'print(f"{name} {Version(ver)}")', 'print(f"{name} {Versoin(ver)}")')],
      f"{PY} -m mypy --check-untyped-defs settings", r'Name "Versoin" is not defined')
    r("undefined_symbol", "packaging", "Specifier._compare_greater_than_equal calls an undefined helper _coerce",
      [("sub", "packaging/specifiers.py", "    def _compare_greater_than_equal(self, prospective: Version, spec: str) -> bool:\n", "    def _compare_greater_than_equal(self, prospective: Version, spec: str) -> bool:\n        spec = _coerce(spec)\n")],
      f"{PT} -q", r"NameError: name '_coerce' is not defined")
    r("undefined_symbol", "toml", "TomlEncoder.dump_value looks up self.dump_func (the attribute is dump_funcs)",
      [("sub", "toml/encoder.py", "        dump_fn = self.dump_funcs.get(type(v))", "        dump_fn = self.dump_func.get(type(v))")],
      f"{PT} -q", r"AttributeError: 'TomlEncoder' object has no attribute 'dump_func'")

    # ---------------- import_missing
    r("import_missing", "idna", "idna/core.py imports .idnadata2 (the module is idnadata)",
      [("sub", "idna/core.py", "from . import idnadata", "from . import idnadata2 as idnadata")],
      f"{PT} -q", r"ImportError|ModuleNotFoundError")
    r("import_missing", "toml", "deleted toml/tz.py, which toml/decoder.py imports",
      [("rm", "toml/tz.py")], f"{PT} -q", r"ModuleNotFoundError: No module named 'toml.tz'")
    r("import_missing", "packaging", "packaging/requirements.py imports ._tokenize (renamed from _tokenizer)",
      [("sub", "packaging/requirements.py", "from ._tokenizer import", "from ._tokenize import")],
      f"{PT} -q", r"ModuleNotFoundError: No module named 'packaging._tokenize'")
    r("import_missing", "app", "cli.py imports settings.storage, the module is settings.store",
      [("sub", "settings/cli.py", "from settings import store", "from settings import storage as store")],
      f"{PY} -m settings.cli settings.toml", r"ImportError|ModuleNotFoundError")
    r("import_missing", "six", "a standard-library import misspelled (import colections) in the test",
      [("sub", "tests/test_six.py", "import six\n", "import colections\n\nimport six\n")],
      f"{PT} -q", r"ModuleNotFoundError: No module named 'colections'")
    r("import_missing", "attrs", "attr/__init__.py imports attr._funcs2 (moved module)",
      [("sub", "attr/__init__.py", "from ._funcs import", "from ._funcs2 import")],
      f"{PT} -q", r"No module named 'attr._funcs2'")
    r("import_missing", "app", "python -m settings.main: the module does not exist",
      [], f"{PY} -m settings.main settings.toml", r"No module named settings.main")
    r("import_missing", "packaging", "the test imports packaging.versions (the module is packaging.version)",
      [("sub", "tests/test_packaging.py", "from packaging.version import InvalidVersion, Version", "from packaging.versions import InvalidVersion, Version")],
      f"{PT} -q", r"ModuleNotFoundError: No module named 'packaging.versions'")

    # ---------------- dependency_missing
    r("dependency_missing", "app", "store.py now imports requests (not installed)",
      [("sub", "settings/store.py", "import toml  # type: ignore[import]\n", "import requests\nimport toml\n")],
      f"{PT} -q", r"No module named 'requests'")
    r("dependency_missing", "app", "cli.py imports typer for argument parsing (not installed)",
      [("sub", "settings/cli.py", "import sys\n", "import sys\n\nimport typer\n")],
      f"{PY} -m settings.cli settings.toml", r"No module named 'typer'")
    r("dependency_missing", "app", "removed the `# type: ignore[import]` on `import toml` (types-toml stubs are not installed)",
      [("sub", "settings/store.py", "import toml  # type: ignore[import]", "import toml")], f"{PY} -m mypy settings", r'Library stubs not installed for "toml"')
    r("dependency_missing", "toml", "a new test uses hypothesis (not installed)",
      [("write", "tests/test_props.py", "from hypothesis import given, strategies as st\n\nimport toml\n\n\n@given(st.integers())\ndef test_int_roundtrip(n):\n    assert toml.loads(toml.dumps({'n': n}))['n'] == n\n")],
      f"{PT} -q", r"No module named 'hypothesis'")
    r("dependency_missing", "packaging", "a new test imports numpy (not installed)",
      [("write", "tests/test_np.py", "import numpy as np\n\nfrom packaging.version import Version\n\n\ndef test_numpy_version():\n    assert Version(np.__version__) > Version('1.0')\n")],
      f"{PT} -q", r"No module named 'numpy'")
    r("dependency_missing", "app", "pkg_resources.require of the project's requirements with rich added",
      [], f"{PY} -c \"import pkg_resources; pkg_resources.require(['toml', 'packaging', 'rich>=13'])\"", r"DistributionNotFound")
    r("dependency_missing", "app", "store.py imports yaml's sibling ruamel.yaml (not installed); mypy run",
      [("sub", "settings/store.py", "import toml  # type: ignore[import]\n", "import toml\nfrom ruamel.yaml import YAML\n")],
      f"{PY} -m mypy settings", r'Cannot find implementation or library stub for module named "ruamel')
    r("dependency_missing", "attrs", "a new test uses the cattrs package (not installed)",
      [("write", "tests/test_cattrs.py", "import cattrs\n\nfrom tests.test_attrs import Point\n\n\ndef test_structure():\n    assert cattrs.structure({'x': 1, 'y': 2}, Point) == Point(1, 2)\n")],
      f"{PT} -q tests/test_cattrs.py", r"No module named 'cattrs'")
    r("command_not_found", "idna", "the run uses the pyenv interpreter, where idna's test dependency pytest is not installed",
      [], "python3 -m pytest -q", r"No module named pytest")

    # ---------------- type_error (mypy)
    r("type_error", "app", "cli passes the float 1.0 to Version",
      [("sub", "settings/cli.py", "    return 0\n", "    if Version(1.0) > Version(\"0.9\"):\n        print(\"new\")\n    return 0\n")],
      f"{PY} -m mypy --check-untyped-defs settings", r"incompatible type")
    r("type_error", "app", "pin_count declared to return str",
      [("sub", "settings/store.py", "def pin_count(data: Dict[str, Any]) -> int:", "def pin_count(data: Dict[str, Any]) -> str:")],
      f"{PY} -m mypy --ignore-missing-imports settings", r"Incompatible return value type")
    r("type_error", "packaging", "canonicalize_name returns len(value) instead of the NormalizedName",
      [("sub", "packaging/utils.py", "    return cast(NormalizedName, value)", "    return len(value)")],
      f"{PY} -m mypy --follow-imports=silent packaging/utils.py", r"Incompatible return value type")
    r("type_error", "packaging", "canonicalize_name gets an int argument in utils.py",
      [("append", "packaging/utils.py", "\n\n_DEFAULT = canonicalize_name(42)\n")],
      f"{PY} -m mypy --follow-imports=silent packaging/utils.py", r"incompatible type")
    r("type_error", "idna", "a typed helper passes bytes to idna.decode's str-returning result as int",
      [("write", "typed_use.py", "import idna\n\n\ndef host_len(host: bytes) -> int:\n    name: int = idna.decode(host)\n    return name\n")],
      f"{PY} -m mypy typed_use.py", r"Incompatible types in assignment")
    r("type_error", "attrs", "an attrs class with an int field is built with a str (mypy attrs plugin)",
      [("write", "typed_use.py", "import attr\n\n\n@attr.s(auto_attribs=True)\nclass Port:\n    number: int\n\n\nP = Port(\"8080\")\n")],
      f"{PY} -m mypy typed_use.py", r"incompatible type")
    r("type_error", "app", "store.load annotated to return a list",
      [("sub", "settings/store.py", "def load(path: str) -> Dict[str, Any]:", "def load(path: str) -> List[str]:"),
       ("sub", "settings/store.py", "from typing import Any, Dict\n", "from typing import Any, Dict, List\n")],
      f"{PY} -m mypy --strict settings/store.py", r"Incompatible return value type|error:")
    r("type_error", "packaging", "SpecifierSet.contains called with a list in a new typed module",
      [("write", "typed_use.py", "from packaging.specifiers import SpecifierSet\n\nOK: bool = SpecifierSet('>=1').contains(['1.0'])\n")],
      f"{PY} -m mypy --follow-imports=silent typed_use.py", r"incompatible type")

    # ---------------- test_assertion
    r("test_assertion", "idna", "alabel uses an upper-case ACE prefix XN-- for punycode labels",
      [("sub", "idna/core.py", "    label_bytes = _alabel_prefix + label_bytes\n", "    label_bytes = _alabel_prefix.upper() + label_bytes\n")],
      f"{PT} -q", r"AssertionError|assert ")
    r("test_assertion", "packaging", "Version.is_prerelease always returns False",
      [("re", "packaging/version.py", r"(def is_prerelease\(self\) -> bool:\n        \"\"\"[\s\S]*?\"\"\"\n)", r"\1        return False\n")],
      f"{PT} -q", r"assert")
    r("test_assertion", "toml", "dumps writes `key=value` without spaces",
      [("re", "toml/encoder.py", r'retstr \+= \(qsection \+ " = " \+', 'retstr += (qsection + "=" +')],
      f"{PT} -q", r"AssertionError|assert ")
    r("test_assertion", "attrs", "the generated __repr__ uses ': ' instead of '='",
      [("sub", "attr/_make.py", '"%s={%s!r}" % (name, accessor)', '"%s: {%s!r}" % (name, accessor)')],
      f"{PT} -q", r"AssertionError|assert ")
    r("test_assertion", "six", "six.b encodes to utf-16",
      [("re", "six.py", r'(    def b\(s\):\n        return s\.encode\()"latin-1"\)', r'\1"utf-16")')],
      f"{PT} -q", r"assert ")
    r("test_assertion", "app", "cli prints name=version instead of `name version`",
      [("sub", "settings/cli.py", 'print(f"{name} {Version(ver)}")', 'print(f"{name}={Version(ver)}")')],
      f"{PT} -q", r"AssertionError|assert ")
    r("test_assertion", "packaging", "SpecifierSet('<2') admits 2.1 after _compare_less_than always returns True",
      [("re", "packaging/specifiers.py", r"(    def _compare_less_than\(self, prospective: Version, spec_str: str\) -> bool:\n)", r"\1        return True\n")],
      f"{PT} -q -x", r"assert")
    r("test_assertion", "toml", "loads parses `true` as the string 'true' (test run with unittest-style -v)",
      [("re", "toml/decoder.py", r"if v == 'true':\n(\s+)return \(True, \"bool\"\)", r"if v == 'true':\n\1return ('true', 'bool')")],
      f"{PT} -v", r"assert")
    r("test_assertion", "attrs", "unittest-style run: asdict drops the last attribute",
      [("re", "attr/_funcs.py", r"(def asdict\([\s\S]*?attrs = fields\(inst\.__class__\))", r"\1[:-1]")],
      f"{PT} -q --tb=short", r"assert")
    r("test_assertion", "idna", "check_hyphen_ok rejects hyphens in position 4",
      [("re", "idna/core.py", r"(def check_hyphen_ok\(label[\s\S]*?)    return True", r"\1    return '-' not in label")],
      f"{PT} -q -k hyphen", r"assert")

    # ---------------- test_panic
    r("test_panic", "toml", "load_line reads pair[2] of a key/value split into two",
      [("sub", "toml/decoder.py", "        strictly_valid = _strictly_valid_num(pair[-1])", "        strictly_valid = _strictly_valid_num(pair[2])")],
      f"{PT} -q", r"IndexError")
    r("test_panic", "packaging", "Version.__init__ divides by the epoch (zero)",
      [("re", "packaging/version.py", r"(        match = self\._regex\.search\(version\)\n)", r"\1        _ = 1 / int(match.group('epoch') or 0) if match else 0\n")],
      f"{PT} -q", r"ZeroDivisionError")
    r("test_panic", "app", "store.load reads data['pins'] from a dict keyed 'pin'",
      [("sub", "settings/store.py", "    return len(data.get(\"pins\", {}))", "    return len(data[\"pin\"])")],
      f"{PT} -q", r"KeyError: 'pin'")
    r("test_panic", "six", "ensure_binary concatenates str and bytes",
      [("re", "six.py", r"(def ensure_binary\(s, encoding='utf-8', errors='strict'\):\n(?:.*\n)*?    )if isinstance\(s, binary_type\):", r"\1s = s + b''\n    if isinstance(s, binary_type):")],
      f"{PT} -q", r"TypeError")
    r("test_panic", "idna", "decode calls itself recursively",
      [("re", "idna/core.py", r"(def decode\(s[^\n]*\n)", r"\1    return decode(s)\n")],
      f"{PT} -q -k decode", r"RecursionError")
    r("test_panic", "attrs", "asdict decodes a value as UTF-8 bytes",
      [("re", "attr/_funcs.py", r"(def asdict\([^)]*\):\n(?:.*\n)*?    attrs = fields\(inst\.__class__\)\n)", r"\1    bytes([0xff]).decode('utf-8')\n")],
      f"{PT} -q", r"UnicodeDecodeError")
    r("test_panic", "packaging", "Marker.evaluate converts the environment value with int()",
      [("re", "packaging/markers.py", r"(    def evaluate\(self, environment[^\n]*\n(?:.*\n)*?        current_environment = default_environment\(\)\n)", r"\1        int(current_environment['python_version'])\n")],
      f"{PT} -q", r"ValueError: invalid literal for int")
    r("test_panic", "toml", "dumps raises a RuntimeError for integers",
      [("re", "toml/encoder.py", r"(    def dump_value\(self, v\):\n)", r"\1        if isinstance(v, int) and not isinstance(v, bool):\n            raise RuntimeError('integer encoding not implemented')\n")],
      f"{PT} -q", r"RuntimeError: integer encoding not implemented")

    # ---------------- test_timeout
    r("test_timeout", "toml", "load_line loops forever; pytest killed by `timeout 5` (SIGTERM)",
      [("re", "toml/decoder.py", r"(def load_line\(self, line, currentlevel, multikey, multibackslash\):\n)", r"\1        while line:\n            pass\n")],
      f"timeout 5 {PT} -v", r"test_toml")
    r("test_timeout", "packaging", "Version.__init__ busy-waits; `timeout -s INT 5` interrupts pytest",
      [("re", "packaging/version.py", r"(        match = self\._regex\.search\(version\)\n)", r"\1        while match:\n            pass\n")],
      f"timeout -s INT 5 {PT} -q", r"KeyboardInterrupt")
    r("test_timeout", "app", "a new test waits 60 s for a lock file that never appears; `timeout -s INT 4`",
      [("write", "tests/test_wait.py", "import os\nimport time\n\n\ndef test_waits_for_lock():\n    deadline = time.time() + 60\n    while not os.path.exists('settings.lock') and time.time() < deadline:\n        time.sleep(0.1)\n    assert os.path.exists('settings.lock')\n")],
      f"timeout -s INT 4 {PT} -q tests/test_wait.py", r"KeyboardInterrupt")
    r("test_timeout", "six", "a test that sleeps is stopped with faulthandler_timeout=3 and `timeout 6`",
      [("write", "tests/test_slow.py", "import time\n\nimport six\n\n\ndef test_slow_iter():\n    for _ in six.moves.range(100):\n        time.sleep(1)\n")],
      f"timeout 6 {PT} -q -o faulthandler_timeout=3 tests/test_slow.py", r"Timeout")

    # ---------------- lint_failure
    r("lint_failure", "app", "an unused import of os.path and a bare except in store.py",
      [("sub", "settings/store.py", "import toml  # type: ignore[import]\n", "import os.path\n\nimport toml\n"),
       ("sub", "settings/store.py", "    with open(path, encoding=\"utf-8\") as f:\n        return toml.load(f)",
        "    try:\n        with open(path, encoding=\"utf-8\") as f:\n            return toml.load(f)\n    except:\n        return {}")],
      f"{PY} -m flake8 settings", r"F401|E722")
    r("lint_failure", "app", "a line longer than 79 characters and a missing blank line in cli.py",
      [("sub", "settings/cli.py", "def main(argv=None):", "def usage():\n    return \"usage: settings [FILE]  (reads the TOML settings file FILE, or $SETTINGS_FILE, and prints every pin)\"\ndef main(argv=None):")],
      f"{PY} -m flake8 settings", r"E501|E302")
    r("lint_failure", "toml", "an unused local variable in toml/ordered.py",
      [("re", "toml/ordered.py", r"(class TomlOrderedDecoder\(TomlDecoder\):\n\n    def __init__\(self\):\n)", r"\1        unused = 1\n")],
      f"{PY} -m pyflakes toml/ordered.py", r"assigned to but never used")
    r("lint_failure", "six", "comparison to None with == and trailing whitespace in the test",
      [("sub", "tests/test_six.py", "def test_b_and_u():\n", "def test_b_and_u():\n    assert six.b('') != None   \n")],
      f"{PY} -m flake8 tests", r"E711|W291")
    r("lint_failure", "idna", "an unused import and a redefinition in idna/intranges.py",
      [("sub", "idna/intranges.py", "import bisect\n", "import bisect\nimport bisect\nimport sys\n")],
      f"{PY} -m flake8 --select=F idna/intranges.py", r"F401|F811")
    r("lint_failure", "attrs", "an f-string without placeholders in attr/validators.py",
      [("re", "attr/validators.py", r"(\ndef instance_of\(type\):\n)", r'\nMSG = f"instance check"\n\1')],
      f"{PY} -m pyflakes attr/validators.py", r"f-string is missing placeholders")
    r("lint_failure", "packaging", "a lambda assigned to a name and an ambiguous variable l in utils.py",
      [("append", "packaging/utils.py", "\n\nnormalize = lambda s: s.lower()\nl = normalize('X')\n")],
      f"{PY} -m flake8 --select=E7 packaging/utils.py", r"E731|E741")
    r("lint_failure", "app", "an unused variable and a shadowed import in the test file",
      [("sub", "tests/test_settings.py", "def test_load(tmp_path):\n", "def test_load(tmp_path):\n    result = None\n    store = None\n")],
      f"{PY} -m flake8 tests", r"F841|F811")

    # ---------------- format_failure
    r("format_failure", "app", "cli.py rewritten with single quotes and a long call on one line",
      [("sub", "settings/cli.py", '    default = os.environ.get("SETTINGS_FILE", "settings.toml")', "    default = os.environ.get('SETTINGS_FILE', 'settings.toml')")],
      "black --check settings tests", r"would reformat")
    r("format_failure", "app", "store.py: a dict literal squeezed onto one line without spaces",
      [("sub", "settings/store.py", "    return len(data.get(\"pins\", {}))", "    return len(data.get(\"pins\",{ }))")],
      "black --check --diff settings/store.py", r"would reformat")
    r("format_failure", "packaging", "an over-indented block in packaging/utils.py",
      [("append", "packaging/utils.py", "\n\ndef _noop( x ):\n        return x\n")],
      "black --check packaging/utils.py", r"would reformat")
    r("format_failure", "attrs", "extra blank lines and spaces inside brackets in attr/setters.py",
      [("append", "attr/setters.py", "\n\n\n\nNO_OPS = [ None , None ]\n")],
      "black --check -q attr/setters.py; black --check attr/setters.py", r"would reformat")
    r("format_failure", "app", "tests/test_settings.py: trailing commas and a backslash continuation",
      [("sub", "tests/test_settings.py", "    assert cli.main([str(p)]) == 0\n", "    assert cli.main([str(p),]) \\\n        == 0\n")],
      "black --check --diff tests", r"would reformat")
    r("format_failure", "toml", "ordered.py: a long def line with extra spaces",
      [("append", "toml/ordered.py", "\n\ndef _helper(a,b,c = 1, *args, **kwargs): return a+b+c\n")],
      "black --check --diff toml/ordered.py", r"would reformat")

    # ---------------- network_unavailable
    r("network_unavailable", "app", "pip install of a new dependency (httpx) with no network",
      [], "PIP_FIND_LINKS= python3 -m pip install --no-cache-dir --timeout 3 --retries 1 httpx==0.27.0",
      r"NewConnectionError|Failed to establish|Name or service not known|Temporary failure in name resolution")
    r("network_unavailable", "app", "a script downloads a settings file over HTTPS",
      [("write", "fetch.py", "import urllib.request\n\nwith urllib.request.urlopen('https://raw.githubusercontent.com/pypa/packaging/main/pyproject.toml', timeout=5) as r:\n    print(r.read()[:100])\n")],
      f"{PY} fetch.py", r"URLError|Name or service not known|Temporary failure")
    r("network_unavailable", "toml", "git clone of the upstream repository",
      [], "git clone https://github.com/uiri/toml.git upstream", r"Could not resolve host")
    r("network_unavailable", "attrs", "pip download of attrs from a package index host",
      [], "PIP_FIND_LINKS= /usr/bin/python3 -m pip download --no-cache-dir --timeout 3 --retries 1 attrs==23.1.0 -d /tmp/diagcorpus/dl-py",
      r"NewConnectionError|Failed to establish|Name or service not known|Temporary failure in name resolution")

    # ---------------- offline_cache_miss
    r("offline_cache_miss", "app", "pip install --no-index of httpx with only the local wheel folder",
      [("sh", "mkdir -p wheels")], "python3 -m pip install --no-index --find-links ./wheels httpx",
      r"Could not find a version that satisfies the requirement httpx")
    r("offline_cache_miss", "attrs", "pip install --no-index attrs==23.1.0 from a wheelhouse that lacks it",
      [("sh", "mkdir -p wheelhouse")], "python3 -m pip install --no-index --find-links wheelhouse attrs==23.1.0",
      r"Could not find a version that satisfies the requirement")
    r("offline_cache_miss", "packaging", "pip download --no-index for an offline mirror",
      [], "python3 -m pip download --no-index -d /tmp/diagcorpus/dl-py packaging==24.0",
      r"Could not find a version that satisfies the requirement|No matching distribution")

    # ---------------- permission_denied
    nob = "runuser -u nobody -- "
    r("permission_denied", "app", "settings.toml made unreadable (chmod 000), run as nobody",
      [("chmod", "settings.toml", 0o000)], nob + f"{PY} -m settings.cli settings.toml", r"PermissionError")
    r("permission_denied", "app", "a release helper script without the execute bit",
      [("write", "release.sh", "#!/bin/sh\necho releasing\n")], "./release.sh", r"Permission denied")
    r("permission_denied", "toml", "a test writes a fixture into a read-only tests/ (run as nobody)",
      [("write", "tests/test_write.py", "import toml\n\n\ndef test_dump_file():\n    with open('tests/out.toml', 'w') as f:\n        toml.dump({'a': 1}, f)\n"),
       ("sh", "chmod 755 tests && chmod 777 .")], nob + f"{PY} -m pytest -p no:cacheprovider -q tests/test_write.py", r"PermissionError")
    r("permission_denied", "six", "pip install --target into the system site-packages as user nobody",
      [], nob + f"env HOME=/tmp {PY} -m pip install --no-index --break-system-packages --no-deps --target /usr/lib/python3/dist-packages/settings_vendor /usr/share/python-wheels/pip-23.0.1-py3-none-any.whl",
      r"Permission denied|EnvironmentError|\[Errno 13\]")

    # ---------------- disk_full
    small = os.path.join(SCRATCH, "small")

    def mount_small(work):
        sh(f"mkdir -p {small}; umount {small} 2>/dev/null; mount -t tmpfs -o size=2m tmpfs {small}")
    r("disk_full", "toml", "pytest --basetemp on a 2 MiB tmpfs, a test writes a 3 MB TOML file",
      [mount_small, ("write", "tests/test_big.py", "import toml\n\n\ndef test_big_file(tmp_path):\n    p = tmp_path / 'big.toml'\n    with open(p, 'w') as f:\n        toml.dump({'k%d' % i: 'x' * 100 for i in range(30000)}, f)\n")],
      f"{PT} -q --basetemp={small}/pt tests/test_big.py", r"No space left on device")
    r("disk_full", "app", "the CLI's output redirected to a file on a full 2 MiB tmpfs",
      [mount_small, ("sh", f"dd if=/dev/zero of={small}/fill bs=1k count=2048 2>/dev/null; true")],
      f"{PY} -c \"import toml; open('{small}/out.toml','w').write(toml.dumps({{'a': 'x'*100000}}))\"", r"No space left on device")

    # ---------------- out_of_memory
    r("out_of_memory", "toml", "a test parses a 4 GB document, run under ulimit -v 1 GiB",
      [("write", "tests/test_huge.py", "import toml\n\n\ndef test_huge_string():\n    doc = 'a = \"' + 'x' * (4 * 1024 ** 3) + '\"'\n    assert toml.loads(doc)\n")],
      f"ulimit -v 1000000; {PT} -q tests/test_huge.py", r"MemoryError")
    r("out_of_memory", "packaging", "a script builds 50M Version objects under ulimit -v 500 MB",
      [("write", "stress.py", "from packaging.version import Version\n\nversions = [Version('1.%d' % (i % 100)) for i in range(50_000_000)]\nprint(len(versions))\n")],
      f"ulimit -v 500000; {PY} stress.py", r"MemoryError")

    # ---------------- command_not_found
    r("command_not_found", "app", "the Makefile's test target calls tox, which is not installed",
      [("write", "Makefile", "test:\n\ttox -e py311\n")], "make test", r"No such file or directory|not found")
    r("command_not_found", "idna", "the run uses `py.test-3.11`, which does not exist",
      [], "py.test-3.11 -q", r"command not found")
    r("command_not_found", "attrs", "a script calls nox to run the session",
      [("write", "ci.sh", "#!/bin/sh\nset -e\nnox -s tests\n"), ("chmod", "ci.sh", 0o755)], "./ci.sh", r"not found")

    # ---------------- toolchain_version
    r("toolchain_version", "app", "pyproject.toml requires-python >=3.13; pip install of the project",
      [("sub", "pyproject.toml", 'requires-python = ">=3.9"', 'requires-python = ">=3.13"')],
      "/usr/bin/python3 -m pip install --no-index --no-build-isolation --no-deps --break-system-packages .", r"requires a different Python")
    r("toolchain_version", "app", "the CLI refuses to run on Python older than 3.12",
      [("sub", "settings/cli.py", "import os\n", "import os\nimport sys as _sys\n\nif _sys.version_info < (3, 12):\n    raise SystemExit(\"settings requires Python >= 3.12 (found %d.%d)\" % _sys.version_info[:2])\n")],
      f"{PY} -m settings.cli settings.toml", r"requires Python >= 3.12")

    # ---------------- env_var_missing
    r("env_var_missing", "app", "cli reads os.environ['SETTINGS_FILE'] when no argument is given",
      [("sub", "settings/cli.py", 'os.environ.get("SETTINGS_FILE", "settings.toml")', 'os.environ["SETTINGS_FILE"]')],
      f"env -u SETTINGS_FILE {PY} -m settings.cli", r"KeyError: 'SETTINGS_FILE'")
    r("env_var_missing", "toml", "a test needs TOML_FIXTURES_DIR",
      [("write", "tests/test_fixtures.py", "import os\n\nimport toml\n\n\ndef test_fixture_dir():\n    root = os.environ['TOML_FIXTURES_DIR']\n    assert toml.load(os.path.join(root, 'a.toml'))\n")],
      f"{PT} -q tests/test_fixtures.py", r"KeyError: 'TOML_FIXTURES_DIR'")
    r("env_var_missing", "packaging", "a release check exits when PYPI_TOKEN is not set",
      [("write", "release_check.py", "import os\nimport sys\n\nfrom packaging.version import Version\n\nif not os.environ.get('PYPI_TOKEN'):\n    sys.exit('release_check: PYPI_TOKEN is not set')\nprint(Version('23.0'))\n")],
      f"{PY} release_check.py", r"PYPI_TOKEN is not set")

    # ---------------- flaky_test
    r("flaky_test", "six", "a new test passes when a random draw is even; run 4 times with --keep-duplicates",
      [("write", "tests/test_flaky.py", "import random\n\nimport six\n\n\ndef test_random_draw():\n    n = random.randint(0, 9)\n    assert six.text_type(n) in '02468', 'drew %d' % n\n")],
      f"{PT} -v --keep-duplicates tests/test_flaky.py tests/test_flaky.py tests/test_flaky.py tests/test_flaky.py tests/test_flaky.py tests/test_flaky.py",
      r"(?s)(PASSED.*FAILED|FAILED.*PASSED)")
    r("flaky_test", "toml", "a test checks a timing budget of 1 ms for dumps; run 5 times with --keep-duplicates",
      [("write", "tests/test_timing.py", "import time\n\nimport toml\n\n\ndef test_dumps_fast():\n    t = time.perf_counter()\n    toml.dumps({'k%d' % i: i for i in range(200)})\n    el = (time.perf_counter() - t) * 1e6\n    assert int(el) % 2 == 0, 'took %d us' % el\n")],
      f"{PT} -v --keep-duplicates " + " ".join(["tests/test_timing.py"] * 6), r"(?s)(PASSED.*FAILED|FAILED.*PASSED)")

    # ---------------- no_tests_ran
    r("no_tests_ran", "idna", "no break: -k filter matches no test", [], f"{PT} -q -k punycode", r"deselected|no tests ran")
    r("no_tests_ran", "app", "tests/ moved to test_old/ (pytest run on an empty tests/)",
      [("sh", "git mv tests test_old && mkdir tests")], f"{PT} tests", r"no tests ran")
    r("no_tests_ran", "attrs", "renamed tests/test_attrs.py to tests/attrs_checks.py (not collected)",
      [("sh", "git mv tests/test_attrs.py tests/attrs_checks.py")], f"{PT} -q", r"no tests ran")
    r("no_tests_ran", "six", "unittest discovery finds no unittest.TestCase", [], f"{PY} -m unittest discover -s tests -v", r"Ran 0 tests", allow_zero=True)

    # ---------------- unknown
    r("unknown", "app", "a deploy helper prints a generic failure and exits 1",
      [("write", "deploy.py", "import sys\n\nprint('deploy: uploading settings...')\nprint('error: something went wrong', file=sys.stderr)\nsys.exit(1)\n")],
      f"{PY} deploy.py", r"something went wrong")
    r("unknown", "toml", "a lint wrapper exits 2 with its own code and message",
      [("write", "check_toml.py", "import sys\n\nimport toml\n\ntoml.loads('a = 1')\nprint('check_toml: internal state E42, aborting', file=sys.stderr)\nsys.exit(2)\n")],
      f"{PY} check_toml.py", r"E42")

    # ---------------- batch "toolchains": a test runner missing from the
    # interpreter that runs it (a venv made without pytest, mypy or black;
    # pyenv's own Python 3.11.7, through its binary and through its shims),
    # and more pytest assertions.
    B = {"batch": "toolchains"}
    VENV = "/tmp/diag-venv-bare"
    sh(f"[ -x {VENV}/bin/python3 ] || {PY} -m venv --without-pip {VENV}")
    r("command_not_found", "toml", f"no break: the suite run by a venv's python3 without pytest ({VENV}, python3 -m venv --without-pip)",
      [], f"{VENV}/bin/python3 -m pytest -q", r"No module named pytest", **B)
    r("command_not_found", "app", "no break: mypy run by a venv's python3 that does not have it",
      [], f"{VENV}/bin/python3 -m mypy settings", r"No module named mypy", **B)
    r("command_not_found", "attrs", "no break: black run by a venv's python3 that does not have it",
      [], f"{VENV}/bin/python3 -m black --check .", r"No module named black", **B)
    PYENV = "/root/.pyenv"
    if os.path.isdir(f"{PYENV}/versions/3.11.7"):
        shims = base_env(PATH=f"{PYENV}/shims:{PYENV}/bin:/usr/local/bin:/usr/bin:/bin", PYENV_ROOT=PYENV, PYENV_VERSION="3.11.7")
        r("command_not_found", "idna", "no break: python3 on PATH is a pyenv shim (PYENV_VERSION=3.11.7) whose interpreter has no pytest",
          [], "python3 -m pytest -q", r"No module named pytest", env=shims, **B)
        r("command_not_found", "packaging", "no break: pyenv's python 3.11.7 (its binary) without pytest",
          [], f"{PYENV}/versions/3.11.7/bin/python3 -m pytest -q tests", r"No module named pytest", **B)
    r("test_assertion", "packaging", "base_version drops the last release segment",
      [("re", "packaging/version.py", r'(        parts\.append\("\."\.join\(str\(x\) for x in self\.release)(\)\)\n\n        return ""\.join\(parts\))', r'\1[:-1]\2')],
      f"{PT} -q", r"assert", **B)
    r("test_assertion", "toml", "dumps puts two spaces before the equals sign (-ra summary)",
      [("re", "toml/encoder.py", r'retstr \+= \(qsection \+ " = " \+', 'retstr += (qsection + "  = " +')],
      f"{PT} -q -ra", r"assert", **B)
    r("test_assertion", "attrs", "evolve ignores the changes it is given (--tb=short)",
      [("sub", "attr/_funcs.py", "        if init_name not in changes:\n            changes[init_name] = getattr(inst, attr_name)", "        changes[init_name] = getattr(inst, attr_name)")],
      f"{PT} -q --tb=short", r"assert", **B)
    r("test_assertion", "app", "a new test with a message: the pin count is off by one",
      [("append", "tests/test_settings.py", "\n\ndef test_pin_count(tmp_path):\n    p = tmp_path / \"s.toml\"\n    p.write_text('[pins]\\na = \"1\"\\nb = \"2\"\\n')\n    assert store.pin_count(store.load(str(p))) == 3, \"two pins and the default\"\n")],
      f"{PT} -q", r"two pins and the default", **B)

    C.write()


if __name__ == "__main__":
    main()
