#!/usr/bin/env python3
"""JavaScript/TypeScript samples: real npm packages (ms 2.1.3, semver 7.6.3,
@fastify/error 4.0.0, tiny-invariant 1.3.3 with its TypeScript source, and a small
app on kleur/picocolors/chalk), unpacked with `npm pack`, given test suites
(node --test, Jest 29, Vitest 3), tsc 5.6, ESLint 9 and Prettier 3, then broken."""
import json
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import Corpus, SCRATCH, sh, base_env  # noqa: E402

SRC = os.path.join(SCRATCH, "src", "js")

MS_TEST = """const test = require('node:test');
const assert = require('node:assert');
const ms = require('..');

test('parses short strings', () => {
  assert.strictEqual(ms('1s'), 1000);
  assert.strictEqual(ms('2h'), 7200000);
});

test('parses long strings', () => {
  assert.strictEqual(ms('1 day'), 86400000);
  assert.strictEqual(ms('10 minutes'), 600000);
});

test('formats short', () => {
  assert.strictEqual(ms(60000), '1m');
  assert.strictEqual(ms(1500), '2s');
});

test('formats long', () => {
  assert.strictEqual(ms(2 * 60000, { long: true }), '2 minutes');
});

test('rejects empty strings', () => {
  assert.throws(() => ms(''), /val is not a non-empty string/);
});
"""
MS_ESLINT = """const js = require('@eslint/js');

module.exports = [
  js.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: 'commonjs',
      globals: { module: 'writable', require: 'readonly', process: 'readonly', console: 'readonly' },
    },
  },
];
"""
SEMVER_TEST = """const semver = require('..');

describe('semver', () => {
  test('valid', () => {
    expect(semver.valid('1.2.3')).toBe('1.2.3');
    expect(semver.valid('a.b.c')).toBeNull();
  });
  test('gt', () => {
    expect(semver.gt('1.2.3', '9.8.7')).toBe(false);
    expect(semver.gt('10.0.0', '9.8.7')).toBe(true);
  });
  test('satisfies', () => {
    expect(semver.satisfies('1.2.3', '1.x || >=2.5.0 || 5.0.0 - 7.2.3')).toBe(true);
    expect(semver.satisfies('3.0.0', '^2.0.0')).toBe(false);
  });
  test('inc', () => {
    expect(semver.inc('1.2.3', 'minor')).toBe('1.3.0');
    expect(semver.inc('1.2.3', 'premajor', 'beta')).toBe('2.0.0-beta.0');
  });
  test('coerce', () => {
    expect(semver.coerce('v2').version).toBe('2.0.0');
  });
  test('sort', () => {
    expect(semver.sort(['1.10.0', '1.2.0', '1.9.0'])).toEqual(['1.2.0', '1.9.0', '1.10.0']);
  });
  test('diff', () => {
    expect(semver.diff('1.2.3', '1.3.0')).toBe('minor');
  });
});
"""
FE_TEST = """import { describe, test, expect } from 'vitest'
import createError from '../index.js'

describe('createError', () => {
  test('zero parameters', () => {
    const NewError = createError('CODE', 'Not available')
    const err = new NewError()
    expect(err).toBeInstanceOf(Error)
    expect(err.name).toBe('FastifyError')
    expect(err.message).toBe('Not available')
    expect(err.code).toBe('CODE')
    expect(err.statusCode).toBe(500)
  })

  test('one parameter', () => {
    const NewError = createError('CODE', 'hey %s')
    expect(new NewError('alice').message).toBe('hey alice')
  })

  test('code is upper-cased', () => {
    const NewError = createError('fst_err', 'x')
    expect(new NewError().code).toBe('FST_ERR')
  })

  test('custom status code', () => {
    const NewError = createError('CODE', 'x', 404)
    expect(new NewError().statusCode).toBe(404)
  })

  test('toString', () => {
    const NewError = createError('CODE', 'boom')
    expect(new NewError().toString()).toBe('FastifyError [CODE]: boom')
  })

  test('cause', () => {
    const NewError = createError('CODE', 'wrapped %s')
    const cause = new Error('inner')
    const err = new NewError('x', { cause })
    expect(err.cause).toBe(cause)
    expect(err.message).toBe('wrapped x')
  })

  test('inherits from a custom base', () => {
    const NewError = createError('CODE', 'x', 500, TypeError)
    expect(new NewError()).toBeInstanceOf(TypeError)
  })
})
"""
TI_SETTINGS = """import invariant from './tiny-invariant';

export interface Settings {
  name: string;
  retries: number;
  tags: string[];
}

export function parseSettings(raw: unknown): Settings {
  invariant(typeof raw === 'object' && raw !== null, 'settings must be an object');
  const o = raw as Record<string, unknown>;
  invariant(typeof o.name === 'string', 'name must be a string');
  const retries = typeof o.retries === 'number' ? o.retries : 3;
  const tags = Array.isArray(o.tags) ? o.tags.map(String) : [];
  return { name: o.name, retries, tags };
}

export function describeSettings(s: Settings): string {
  return `${s.name} (${s.retries} retries, ${s.tags.length} tags)`;
}
"""
TI_INDEX = """export { default as invariant } from './tiny-invariant';
export { parseSettings, describeSettings } from './settings';
export type { Settings } from './settings';
"""
TI_TSCONFIG = json.dumps({"compilerOptions": {"strict": True, "target": "ES2020", "module": "commonjs",
                                               "noEmit": True, "skipLibCheck": True, "types": ["node"]},
                          "include": ["src/**/*.ts"]}, indent=2) + "\n"
CR_INDEX = """const kleur = require('kleur');
const pc = require('picocolors');
const chalk = require('chalk');

exports.status = (ok) => (ok ? kleur.green('PASS') : kleur.red('FAIL'));
exports.warn = (msg) => pc.yellow(`warning: ${msg}`);
exports.title = (t) => chalk.bold(t);
"""
CR_TEST = """const test = require('node:test');
const assert = require('node:assert');
const { status, warn, title } = require('..');

test('status is green when passing', () => {
  assert.strictEqual(status(true), '\\u001b[32mPASS\\u001b[39m');
});

test('warnings are yellow', () => {
  assert.strictEqual(warn('disk'), '\\u001b[33mwarning: disk\\u001b[39m');
});

test('titles are bold', () => {
  assert.strictEqual(title('Report'), '\\u001b[1mReport\\u001b[22m');
});
"""


def w(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    open(path, "w").write(text)


# The packages and the tools their suites run, exact versions, from the npm
# registry: each package is unpacked from its tarball (npm pack), its own
# devDependencies replaced by these.
FETCH = {
    "ms": ("ms@2.1.3", ["eslint@9.14.0", "@eslint/js@9.14.0", "prettier@3.3.3"], {"test": "node --test"}),
    "semver": ("semver@7.6.3", ["jest@29.7.0"], {"test": "jest"}),
    "fastify-error": ("@fastify/error@4.0.0", ["vitest@3.2.4"], {"test": "vitest run"}),
    "tiny-invariant": ("tiny-invariant@1.3.3", ["typescript@5.6.3", "@types/node@20.16.10"], {"test": "tsc --noEmit"}),
}


def fetch():
    """Unpacks the packages and installs their tools (and color-report's
    dependencies), once."""
    env = base_env()
    for d, (pkg, tools, scripts) in FETCH.items():
        dest = f"{SRC}/{d}"
        if os.path.exists(f"{dest}/node_modules"):
            continue
        sh(f"rm -rf {dest} && mkdir -p {dest} && cd {dest} && npm pack --silent {pkg} >/dev/null && tar xzf *.tgz --strip-components=1 && rm -f *.tgz", env=env)
        manifest = json.load(open(f"{dest}/package.json"))
        manifest.pop("devDependencies", None)
        manifest["scripts"] = scripts
        json.dump(manifest, open(f"{dest}/package.json", "w"), indent=2)
        sh(f"npm install --no-audit --no-fund --loglevel=error --save-dev --save-exact {' '.join(tools)}", cwd=dest, env=env)
    dest = f"{SRC}/color-report"
    if not os.path.exists(f"{dest}/node_modules"):
        w(f"{dest}/package.json", json.dumps({"name": "color-report", "version": "1.0.0", "main": "index.js",
                                             "scripts": {"test": "node --test", "release": "np --no-tests"}}, indent=2) + "\n")
        sh("npm install --no-audit --no-fund --loglevel=error --save-exact kleur@4.1.5 picocolors@1.1.1 chalk@4.1.2", cwd=dest, env=env)


def prepare():
    fetch()
    marker = os.path.join(SRC, ".prepared")
    if os.path.exists(marker):
        return
    env = base_env(FORCE_COLOR="1")
    w(f"{SRC}/ms/test/ms.test.js", MS_TEST)
    w(f"{SRC}/ms/eslint.config.js", MS_ESLINT)
    w(f"{SRC}/ms/.prettierignore", "node_modules\npackage-lock.json\n")
    w(f"{SRC}/ms/.prettierrc.json", '{ "singleQuote": true }\n')
    sh("npx prettier --write . >/dev/null && node --test && npx eslint . && npx prettier --check .", cwd=f"{SRC}/ms", env=env)
    w(f"{SRC}/semver/test/semver.test.js", SEMVER_TEST)
    sh("npx jest", cwd=f"{SRC}/semver", env=env)
    sh("rm -rf test && mkdir test", cwd=f"{SRC}/fastify-error")
    w(f"{SRC}/fastify-error/test/error.test.mjs", FE_TEST)
    w(f"{SRC}/fastify-error/.prettierrc.json", '{ "semi": false, "singleQuote": true, "printWidth": 120 }\n')
    sh("npx vitest run", cwd=f"{SRC}/fastify-error", env=env)
    w(f"{SRC}/tiny-invariant/src/settings.ts", TI_SETTINGS)
    w(f"{SRC}/tiny-invariant/src/index.ts", TI_INDEX)
    w(f"{SRC}/tiny-invariant/tsconfig.json", TI_TSCONFIG)
    w(f"{SRC}/tiny-invariant/.prettierrc.json", '{ "singleQuote": true, "printWidth": 100 }\n')
    sh("npx tsc --noEmit && npx --yes prettier@3.3.3 --check src/settings.ts src/index.ts", cwd=f"{SRC}/tiny-invariant", env=env)
    w(f"{SRC}/color-report/index.js", CR_INDEX)
    w(f"{SRC}/color-report/test/report.test.js", CR_TEST)
    sh("FORCE_COLOR=1 node --test", cwd=f"{SRC}/color-report", env=env)
    for d in ("ms", "semver", "fastify-error", "tiny-invariant", "color-report"):
        w(f"{SRC}/{d}/.gitignore", "node_modules\n")
        sh("git init -q && git add -A && git -c user.name=corpus -c user.email=corpus@invalid commit -qm pristine", cwd=f"{SRC}/{d}")
    open(marker, "w").write("")


def main():
    prepare()
    C = Corpus("javascript")
    N = {"ms": "ms@2.1.3 (npm)", "semver": "semver@7.6.3 (npm)", "fe": "@fastify/error@4.0.0 (npm)",
         "ti": "tiny-invariant@1.3.3 (npm, TypeScript source) + a settings module",
         "cr": "color-report (small app on kleur@4.1.5, picocolors@1.1.1, chalk@4.1.2 from npm)"}
    D = {"ms": "ms", "semver": "semver", "fe": "fastify-error", "ti": "tiny-invariant", "cr": "color-report"}

    def r(pattern, proj, brk, ops, cmd, expect=None, copy_nm=False, **kw):
        src = os.path.join(SRC, D[proj])
        C.run(pattern, N[proj], src, brk, ops, cmd, expect,
              link=() if copy_nm else ("node_modules",), **kw)

    # ---------------- syntax_error
    r("syntax_error", "ms", "deleted the closing brace of parse() in index.js",
      [("sub", "index.js", "    default:\n      return undefined;\n  }\n}\n", "    default:\n      return undefined;\n  }\n\n")],
      "node --test", r"SyntaxError")
    r("syntax_error", "semver", "a stray `=>` in classes/semver.js",
      [("sub", "classes/semver.js", "  format () {", "  format () => {")], "npx jest", r"SyntaxError")
    r("syntax_error", "fe", "unbalanced parenthesis in createError (index.js)",
      [("sub", "index.js", "  code = code.toUpperCase()", "  code = code.toUpperCase(()")], "npx vitest run", r"SyntaxError|Expected|Unexpected|error")
    r("syntax_error", "ti", "missing `;` / `}` in an interface of src/settings.ts",
      [("sub", "src/settings.ts", "  tags: string[];\n}", "  tags: string[\n}")], "npx tsc --noEmit", r"error TS1\d\d\d")
    r("syntax_error", "ms", "an object literal with a missing comma in index.js; eslint",
      [("sub", "index.js", "module.exports = function (val, options) {", "var units = { s: 1000 m: 60000 };\n\nmodule.exports = function (val, options) {")],
      "npx eslint .", r"Parsing error")
    r("syntax_error", "fe", "an unterminated template literal in index.js; prettier --check",
      [("sub", "index.js", "  return `${this.name} [${this.code}]: ${this.message}`", "  return `${this.name} [${this.code}]: ${this.message}")],
      "npx --yes prettier@3.3.3 --check index.js", r"SyntaxError")
    r("syntax_error", "semver", "a trailing comma in package.json",
      [("sub", "package.json", '"test": "jest"', '"test": "jest",')], "npm test", r"JSON|EJSONPARSE")
    r("syntax_error", "cr", "`const` with no initializer in index.js; node --check",
      [("sub", "index.js", "const chalk = require('chalk');", "const chalk;")], "node --check index.js", r"SyntaxError")
    r("syntax_error", "ti", "an arrow function with a missing `)` in src/tiny-invariant.ts",
      [("sub", "src/tiny-invariant.ts", "typeof message === 'function' ? message() : message;", "typeof message === 'function' ? (message() : message;")],
      "npx tsc --noEmit -p .", r"error TS1\d\d\d")

    # ---------------- undefined_symbol
    r("undefined_symbol", "ms", "renamed fmtShort to formatShort, the caller still uses fmtShort",
      [("sub", "index.js", "function fmtShort(ms) {", "function formatShort(ms) {")], "node --test", r"fmtShort is not defined")
    r("undefined_symbol", "semver", "classes/range.js refers to `comparators` (the variable is comps)",
      [("re", "classes/range.js", r"(parseRange \(range\) \{[\s\S]*?)const rangeMap = new Map\(\)", r"\1void comparators\n    const rangeMap = new Map()")],
      "npx jest", r"comparators is not defined")
    r("undefined_symbol", "fe", "deleted the `format` import from node:util in index.js",
      [("sub", "index.js", "const { format } = require('node:util')\n", "")], "npx vitest run", r"ReferenceError: format is not defined")
    r("undefined_symbol", "ti", "src/tiny-invariant.ts uses `prefx` (typo of prefix)",
      [("sub", "src/tiny-invariant.ts", "    throw new Error(prefix);", "    throw new Error(prefx);")], "npx tsc --noEmit", r"Cannot find name 'prefx'")
    r("undefined_symbol", "ti", "settings.ts reads s.retry (the field is retries)",
      [("sub", "src/settings.ts", "${s.retries} retries", "${s.retry} retries")], "npx tsc --noEmit", r"Property 'retry' does not exist")
    r("undefined_symbol", "semver", "the test calls semver.satisfy (the export is satisfies)",
      [("sub", "test/semver.test.js", "expect(semver.satisfies('3.0.0', '^2.0.0'))", "expect(semver.satisfy('3.0.0', '^2.0.0'))")],
      "npx jest", r"semver.satisfy is not a function")
    r("undefined_symbol", "cr", "index.js calls kleur.grean",
      [("sub", "index.js", "kleur.green('PASS')", "kleur.grean('PASS')")], "FORCE_COLOR=1 node --test", r"kleur.grean is not a function")
    r("undefined_symbol", "ti", "index.ts re-exports parseSetting (no such export)",
      [("sub", "src/index.ts", "export { parseSettings, describeSettings }", "export { parseSetting, describeSettings }")], "npx tsc --noEmit", r"has no exported member named 'parseSetting'|has no exported member 'parseSetting'")
    r("undefined_symbol", "ms", "fmtLong uses an undefined `plural2` helper",
      [("sub", "index.js", "    return plural(ms, msAbs, m, 'minute');", "    return plural2(ms, msAbs, m, 'minute');")], "node --test --test-reporter=spec", r"plural2 is not defined")

    # ---------------- import_missing
    r("import_missing", "semver", "functions/satisfies.js requires ../classes/ranges (the file is range.js)",
      [("sub", "functions/satisfies.js", "require('../classes/range')", "require('../classes/ranges')")], "npx jest", r"Cannot find module '../classes/ranges'")
    r("import_missing", "semver", "deleted internal/identifiers.js, which classes/semver.js requires",
      [("rm", "internal/identifiers.js")], "node -e \"require('./')\"", r"Cannot find module '../internal/identifiers'")
    r("import_missing", "fe", "the test imports ../lib/index.js (moved file)",
      [("sub", "test/error.test.mjs", "from '../index.js'", "from '../lib/index.js'")], "npx vitest run", r"lib/index.js|Failed to load|Cannot find")
    r("import_missing", "ti", "settings.ts imports ./tiny-invarient (typo)",
      [("sub", "src/settings.ts", "from './tiny-invariant'", "from './tiny-invarient'")], "npx tsc --noEmit", r"Cannot find module './tiny-invarient'")
    r("import_missing", "cr", "index.js requires node:utils (the builtin is node:util)",
      [("sub", "index.js", "const kleur = require('kleur');", "const { format } = require('node:utils');\nconst kleur = require('kleur');")], "node --test", r"node:utils")
    r("import_missing", "ms", "an ESM wrapper imports ./index.mjs, which does not exist",
      [("write", "wrapper.mjs", "import ms from './index.mjs';\n\nconsole.log(ms('1h'));\n")], "node wrapper.mjs", r"ERR_MODULE_NOT_FOUND")
    r("import_missing", "semver", "index.js requires ./functions/cmp.js renamed to compare-ops.js",
      [("sh", "git mv functions/cmp.js functions/compare-ops.js")], "npm test", r"Cannot find module './functions/cmp'|Cannot find module")

    # ---------------- dependency_missing
    r("dependency_missing", "ms", "index.js now requires lodash (not a dependency)",
      [("sub", "index.js", "var s = 1000;", "var _ = require('lodash');\nvar s = 1000;")], "node --test", r"Cannot find module 'lodash'")
    r("dependency_missing", "semver", "internal/lrucache.js replaced by a require of mnemonist/lru-cache (not installed)",
      [("write", "internal/lrucache.js", "module.exports = require('mnemonist/lru-cache')\n")], "npx jest", r"Cannot find module 'mnemonist/lru-cache'")
    r("dependency_missing", "fe", "index.js imports dayjs (not installed)",
      [("sub", "index.js", "const { format } = require('node:util')", "const { format } = require('node:util')\nconst dayjs = require('dayjs')")], "npx vitest run", r"dayjs")
    r("dependency_missing", "ti", "settings.ts imports zod (not installed)",
      [("sub", "src/settings.ts", "import invariant from './tiny-invariant';", "import invariant from './tiny-invariant';\nimport { z } from 'zod';\n\nexport const schema = z.object({ name: z.string() });")],
      "npx tsc --noEmit", r"Cannot find module 'zod'")
    r("dependency_missing", "cr", "node_modules/picocolors deleted (the package is still in package.json)",
      [("rm", "node_modules/picocolors")], "node --test", r"Cannot find module 'picocolors'", copy_nm=True)
    r("dependency_missing", "cr", "node_modules/kleur deleted; npm ls",
      [("rm", "node_modules/kleur")], "npm ls", r"missing", copy_nm=True)
    r("dependency_missing", "ms", "eslint.config.js loads eslint-plugin-import (not installed)",
      [("sub", "eslint.config.js", "const js = require('@eslint/js');", "const js = require('@eslint/js');\nconst importPlugin = require('eslint-plugin-import');")],
      "npx eslint .", r"eslint-plugin-import")
    r("dependency_missing", "semver", "npm install of a version of ms that does not exist",
      [], "npm install --no-audit --no-fund ms@99.99.99", r"ETARGET|No matching version")

    # ---------------- type_error
    r("type_error", "ti", "retries assigned a string in parseSettings",
      [("sub", "src/settings.ts", "typeof o.retries === 'number' ? o.retries : 3", "typeof o.retries === 'number' ? o.retries : '3'")], "npx tsc --noEmit", r"TS2322")
    r("type_error", "ti", "describeSettings called with a string in a new file",
      [("write", "src/main.ts", "import { describeSettings } from './settings';\n\nconsole.log(describeSettings('prod'));\n")], "npx tsc --noEmit", r"TS2345")
    r("type_error", "ti", "parseSettings returns an object without tags",
      [("sub", "src/settings.ts", "return { name: o.name, retries, tags };", "return { name: o.name, retries };")], "npx tsc --noEmit", r"TS2741|TS2322")
    r("type_error", "ti", "invariant called with three arguments",
      [("sub", "src/settings.ts", "invariant(typeof o.name === 'string', 'name must be a string');", "invariant(typeof o.name === 'string', 'name must be a string', 400);")], "npx tsc --noEmit", r"TS2554")
    r("type_error", "ti", "comparing retries (number) with a string",
      [("sub", "src/settings.ts", "  return `${s.name}", "  if (s.retries === 'none') return s.name;\n  return `${s.name}")], "npx tsc --noEmit", r"TS2367")
    r("type_error", "ti", "a callback parameter without a type under strict (implicit any)",
      [("write", "src/tags.ts", "export function upper(tags) {\n  return tags.map((t) => t.toUpperCase());\n}\n")], "npx tsc --noEmit", r"TS7006")
    r("type_error", "ms", "tsc --checkJs on index.js after the JSDoc of parse says it returns a String",
      [("sub", "index.js", " * @param {String} str\n * @return {Number}", " * @param {String} str\n * @return {String}")],
      "npx --yes -p typescript@5.6.3 tsc --noEmit --allowJs --checkJs --target es2020 index.js", r"TS2322|error TS")
    r("type_error", "ti", "Settings.tags typed as a number array while strings are pushed",
      [("sub", "src/settings.ts", "  tags: string[];", "  tags: number[];")], "npx tsc --noEmit --pretty false", r"TS2322")

    # ---------------- test_assertion
    r("test_assertion", "ms", "the hour constant is 59 minutes", [("sub", "index.js", "var h = m * 60;", "var h = m * 59;")], "node --test", r"AssertionError|Expected values to be strictly equal")
    r("test_assertion", "ms", "fmtShort rounds with Math.floor", [("re", "index.js", r"(function fmtShort\(ms\) \{[\s\S]*?)return ms \+ 'ms';", r"\1return Math.floor(ms) + 'ms';"), ("re", "index.js", r"return Math\.round\(ms / s\) \+ 's';", "return Math.floor(ms / s) + 's';")], "node --test --test-reporter=spec", r"AssertionError|strictly equal")
    r("test_assertion", "ms", "plural() never adds the s", [("sub", "index.js", "(isPlural ? 's' : '')", "''")], "node --test --test-reporter=tap", r"not ok")
    r("test_assertion", "semver", "inc('minor') keeps the patch number",
      [("re", "classes/semver.js", r"(case 'minor':[\s\S]*?)this\.patch = 0", r"\1this.patch = this.patch")], "npx jest", r"Expected")
    r("test_assertion", "semver", "compareMain compares minor before major",
      [("sub", "classes/semver.js", "compareIdentifiers(this.major, other.major) ||\n      compareIdentifiers(this.minor, other.minor)", "compareIdentifiers(this.minor, other.minor) ||\n      compareIdentifiers(this.major, other.major)")], "npx jest --verbose", r"Expected")
    r("test_assertion", "semver", "sort() returns the list reversed", [("sub", "functions/sort.js", "list.sort((a, b) => compareBuild(a, b, loose))", "list.sort((a, b) => compareBuild(b, a, loose))")], "npx jest -t sort", r"Expected")
    r("test_assertion", "fe", "statusCode defaults to 400", [("sub", "index.js", "statusCode = 500, Base = Error", "statusCode = 400, Base = Error")], "npx vitest run", r"AssertionError|expected")
    r("test_assertion", "fe", "toString uses a dash instead of a colon", [("sub", "index.js", "return `${this.name} [${this.code}]: ${this.message}`", "return `${this.name} [${this.code}] - ${this.message}`")], "npx vitest run --reporter=verbose", r"expected")
    r("test_assertion", "fe", "code is lower-cased", [("sub", "index.js", "code = code.toUpperCase()", "code = code.toLowerCase()")], "npx vitest run", r"expected")
    r("test_assertion", "semver", "valid() returns the version with a v prefix",
      [("re", "functions/valid.js", r"return v \? v\.version : null", "return v ? 'v' + v.version : null")], "npx jest --ci", r"Expected")

    # ---------------- test_panic
    r("test_panic", "ms", "parse() calls toLowerCase on the unit group even when it is undefined",
      [("sub", "index.js", "var type = (match[2] || 'ms').toLowerCase();", "var type = match[2].toLowerCase();"), ("append", "test/ms.test.js", "\ntest('parses bare numbers', () => {\n  assert.strictEqual(ms('100'), 100);\n});\n")], "node --test", r"TypeError")
    r("test_panic", "semver", "SemVer constructor reads options.loose from undefined options",
      [("sub", "classes/semver.js", "options = parseOptions(options)", "options = undefined")], "npx jest", r"TypeError: Cannot read properties of undefined")
    r("test_panic", "fe", "FastifyError reads args[lastElement].cause without a guard",
      [("sub", "index.js", "if (lastElement !== -1 && args[lastElement] && typeof args[lastElement] === 'object' && 'cause' in args[lastElement]) {", "if ('cause' in args[lastElement]) {")], "npx vitest run", r"TypeError")
    r("test_panic", "semver", "compare() calls itself through a new helper (infinite recursion)",
      [("write", "functions/compare.js", "const SemVer = require('../classes/semver')\nconst compare = (a, b, loose) => compare(new SemVer(a, loose), b, loose)\nmodule.exports = compare\n")], "npx jest", r"RangeError: Maximum call stack size exceeded")
    r("test_panic", "ms", "fmtLong throws an Error for values over a day",
      [("sub", "index.js", "function fmtLong(ms) {", "function fmtLong(ms) {\n  if (ms > 1000) throw new Error('fmtLong: value out of range: ' + ms);")], "node --test", r"fmtLong: value out of range")
    r("test_panic", "fe", "createError calls a non-function Base",
      [("sub", "test/error.test.mjs", "createError('CODE', 'x', 500, TypeError)", "createError('CODE', 'x', 500, 'TypeError')")], "npx vitest run", r"TypeError")
    r("test_panic", "cr", "status() destructures an undefined options object",
      [("sub", "index.js", "exports.status = (ok) =>", "exports.status = (ok, { bold } = undefined) => bold ||"), ("sub", "index.js", "(ok ? kleur.green('PASS') : kleur.red('FAIL'))", "(ok ? kleur.green('PASS') : kleur.red('FAIL'))")], "FORCE_COLOR=1 node --test", r"TypeError")
    r("test_panic", "semver", "the test parses a version with new SemVer on null",
      [("append", "test/semver.test.js", "\ntest('parse null', () => {\n  const v = semver.parse(null)\n  expect(v.major).toBe(0)\n})\n")], "npx jest", r"TypeError: Cannot read properties of null")

    # ---------------- test_timeout
    r("test_timeout", "semver", "a new test awaits a promise that never resolves (jest default 5 s)",
      [("append", "test/semver.test.js", "\ntest('waits for the registry', async () => {\n  await new Promise(() => {})\n  expect(semver.valid('1.0.0')).toBe('1.0.0')\n})\n")], "npx jest", r"Exceeded timeout")
    r("test_timeout", "fe", "a test awaits a never-resolving promise, --testTimeout=1000",
      [("sub", "test/error.test.mjs", "  test('one parameter', () => {", "  test('waits for a late error', async () => {\n    await new Promise(() => {})\n  })\n\n  test('one parameter', () => {")], "npx vitest run --testTimeout=1000", r"timed out")
    r("test_timeout", "ms", "a test polls forever; node --test --test-timeout=1000",
      [("append", "test/ms.test.js", "\ntest('waits for ready', async () => {\n  await new Promise((resolve) => setInterval(() => {}, 100));\n});\n")], "node --test --test-timeout=1000", r"timed out|cancelled")
    r("test_timeout", "cr", "a busy loop in index.js; the test run is stopped by `timeout 5`",
      [("sub", "index.js", "exports.title = (t) => chalk.bold(t);", "exports.title = (t) => {\n  for (;;) {}\n};")], "timeout 5 node --test", r"")
    r("test_timeout", "semver", "jest.setTimeout(500) and a test with a 2 s timer",
      [("append", "test/semver.test.js", "\njest.setTimeout(500)\ntest('slow compare', (done) => {\n  setTimeout(() => { expect(semver.gt('2.0.0', '1.0.0')).toBe(true); done() }, 2000)\n})\n")], "npx jest -t 'slow compare'", r"Exceeded timeout")

    # ---------------- lint_failure
    r("lint_failure", "ms", "an unused variable in parse()", [("sub", "index.js", "  var n = parseFloat(match[1]);", "  var unused = match[0];\n  var n = parseFloat(match[1]);")], "npx eslint .", r"no-unused-vars")
    r("lint_failure", "ms", "an empty catch block in index.js", [("sub", "index.js", "module.exports = function (val, options) {", "try {\n  require('fs');\n} catch (e) {}\n\nmodule.exports = function (val, options) {")], "npx eslint index.js", r"no-empty|no-unused-vars")
    r("lint_failure", "ms", "duplicate object keys in a new units table", [("sub", "index.js", "var s = 1000;", "var UNITS = { s: 1, m: 60, s: 1000 };\nmodule.exports.UNITS = UNITS;\nvar s = 1000;")], "npx eslint .", r"no-dupe-keys")
    r("lint_failure", "ms", "unreachable code after return in fmtShort", [("re", "index.js", r"(function fmtShort\(ms\) \{[\s\S]*?return ms \+ 'ms';)", r"\1\n  console.log('done');")], "npx eslint .", r"no-unreachable")
    r("lint_failure", "ms", "a constant condition `if (true)` in parse()", [("sub", "index.js", "  str = String(str);", "  if (true) {\n    str = String(str);\n  }")], "npx eslint --max-warnings 0 .", r"no-constant-condition")
    r("lint_failure", "ms", "eslint with an extra rule eqeqeq; `==` used in plural()", [("sub", "index.js", "var isPlural = msAbs >= n * 1.5;", "var isPlural = msAbs >= n * 1.5 == true;")], "npx eslint --rule '{\"eqeqeq\": \"error\"}' index.js", r"eqeqeq")
    r("lint_failure", "ms", "a self-assignment and a useless escape in index.js", [("sub", "index.js", "  str = String(str);", "  str = str;\n  str = String(str).replace(/\\-/g, '-');")], "npx eslint .", r"no-self-assign|no-useless-escape")
    r("lint_failure", "ms", "a variable redeclared and a debugger statement in the tests", [("sub", "test/ms.test.js", "test('parses long strings', () => {", "test('parses long strings', () => {\n  debugger;")], "npx eslint test", r"no-debugger")

    # ---------------- format_failure
    r("format_failure", "ms", "index.js re-indented with 4 spaces and double quotes in one function", [("sub", "index.js", "  return Math.round(ms / n) + ' ' + name + (isPlural ? 's' : '');", '    return Math.round(ms/n) + " " + name + (isPlural ? "s" : "");')], "npx prettier --check .", r"Code style issues")
    r("format_failure", "fe", "index.js: semicolons added and a long line folded by hand", [("sub", "index.js", "  code = code.toUpperCase()", "  code = code.toUpperCase();")], "npx --yes prettier@3.3.3 --check index.js test", r"Code style issues")
    r("format_failure", "ti", "settings.ts: an object literal on one line with no spaces", [("sub", "src/settings.ts", "return { name: o.name, retries, tags };", "return {name:o.name,retries,tags};")], "npx --yes prettier@3.3.3 --check src/settings.ts", r"Code style issues")
    r("format_failure", "ms", "the test file lost its trailing semicolons", [("re", "test/ms.test.js", r"\);$", ")", 0)], "npx prettier --check test", r"Code style issues")
    r("format_failure", "cr", "index.js with tabs and a missing final newline", [("sub", "index.js", "exports.title = (t) => chalk.bold(t);\n", "exports.title = (t)=>chalk.bold(t)")], "npx --yes prettier@3.3.3 --check index.js", r"Code style issues")
    r("format_failure", "ms", "package.json indented with 4 spaces", [("sh", "node -e \"const f='package.json';const j=require('./'+f);require('fs').writeFileSync(f, JSON.stringify(j,null,4)+'\\n')\"")], "npx prettier --check package.json index.js", r"Code style issues")
    r("format_failure", "ti", "index.ts: double quotes in re-exports", [("sub", "src/index.ts", "from './settings';\nexport type", "from \"./settings\";\nexport type")], "npx --yes prettier@3.3.3 --list-different src", r"src/index.ts")

    # ---------------- network_unavailable
    r("network_unavailable", "ms", "npm install with the registry set to a host that does not resolve", [("write", ".npmrc", "registry=https://npm.corp.invalid/\nfetch-retries=0\n")], "npm install --no-audit --no-fund left-pad@1.3.0", r"ENOTFOUND")
    r("network_unavailable", "semver", "npm view against a registry mirror on a closed local port", [], "npm view ms@2.1.3 version --registry http://127.0.0.1:9/ --fetch-retries=0", r"ECONNREFUSED")
    r("network_unavailable", "fe", "git ls-remote of the upstream repository", [], "git ls-remote https://github.com/fastify/fastify-error.git", r"Could not resolve host")
    r("network_unavailable", "cr", "a script fetches a remote JSON file with fetch()", [("write", "update.js", "fetch('https://api.github.com/repos/chalk/chalk/releases/latest')\n  .then((r) => r.json())\n  .then((j) => console.log(j.tag_name));\n")], "node update.js", r"fetch failed|ENOTFOUND")

    # ---------------- offline_cache_miss
    r("offline_cache_miss", "cr", "npm ci --offline with an empty cache", [("rm", "node_modules"), ("write", ".npmrc", "registry=http://npm.internal.invalid/\n")], "npm ci --offline --cache ./empty-cache --no-audit --no-fund", r"ENOTCACHED", copy_nm=True)
    r("offline_cache_miss", "ms", "npm install --offline of a package not in the (empty) cache", [("write", ".npmrc", "registry=http://npm.internal.invalid/\n")], "npm install --offline --cache ./empty-cache --no-audit --no-fund left-pad@1.3.0", r"ENOTCACHED")
    r("offline_cache_miss", "semver", "npm install --offline of jest's new minor with an empty cache", [("write", ".npmrc", "registry=http://npm.internal.invalid/\n")], "npm install --offline --cache ./empty-cache --no-audit --no-fund -D jest@29.6.0", r"ENOTCACHED")

    # ---------------- permission_denied
    nob = "runuser -u nobody -- env HOME=/tmp/nobody-home npm_config_cache=/tmp/nobody-npm "
    r("permission_denied", "cr", "index.js unreadable (chmod 000), tests run as nobody", [("chmod", "index.js", 0o000)], nob + "node --test", r"EACCES|permission denied")
    r("permission_denied", "ms", "npm install -g as user nobody", [], nob + "npm install -g --offline --no-audit --no-fund .", r"EACCES")
    r("permission_denied", "fe", "a bin script without the execute bit", [("write", "bin/check.js", "#!/usr/bin/env node\nconsole.log(require('..')('A', 'b'))\n")], "./bin/check.js", r"Permission denied")
    r("permission_denied", "semver", "npm install as nobody into a root-owned project", [], nob + "npm install --offline --no-audit --no-fund", r"EACCES")

    # ---------------- disk_full
    small = os.path.join(SCRATCH, "small")

    def mount_small(work):
        sh(f"mkdir -p {small}; umount {small} 2>/dev/null; mount -t tmpfs -o size=2m tmpfs {small}")
    r("disk_full", "semver", "npm install with its cache on a 2 MiB tmpfs (node_modules removed)", [mount_small, ("rm", "node_modules")], f"npm install --cache {small}/npm-cache --no-audit --no-fund", r"ENOSPC", copy_nm=True)
    r("disk_full", "cr", "a report script writes 4 MB to a 2 MiB tmpfs", [mount_small, ("write", "dump.js", f"const fs = require('fs');\nconst {{ status }} = require('.');\nfs.writeFileSync('{small}/report.txt', status(true).repeat(1 << 20));\n")], "node dump.js", r"ENOSPC")

    # ---------------- out_of_memory
    r("out_of_memory", "semver", "sorting 5M parsed versions with --max-old-space-size=64", [("write", "stress.js", "const semver = require('./')\nconst all = []\nfor (let i = 0; i < 5e6; i++) all.push(semver.parse(`1.${i % 1000}.${i}`))\nconsole.log(semver.sort(all).length)\n")], "node --max-old-space-size=64 stress.js", r"heap out of memory")
    r("out_of_memory", "ms", "a test builds a huge string table, NODE_OPTIONS=--max-old-space-size=32", [("write", "test/big.test.js", "const test = require('node:test');\nconst ms = require('..');\n\ntest('formats a million values', () => {\n  const out = [];\n  for (let i = 0; i < 1e8; i++) out.push(ms(i, { long: true }));\n});\n")], "NODE_OPTIONS=--max-old-space-size=32 node --test test/big.test.js", r"heap out of memory")

    # ---------------- command_not_found
    r("command_not_found", "fe", "npm run build calls tsup, which is not installed", [("sh", "npm pkg set scripts.build='tsup index.js'")], "npm run build", r"not found")
    r("command_not_found", "semver", "the test runner is started with yarn, which is not installed", [], "yarn test", r"command not found")
    r("command_not_found", "cr", "a prepublish script runs np", [("sh", "npm pkg set scripts.release='np --no-tests'")], "npm run release", r"not found")

    # ---------------- toolchain_version
    r("toolchain_version", "semver", "engines.node raised to >=22 with engine-strict", [("sh", "npm pkg set engines.node='>=22.0.0'"), ("write", ".npmrc", "engine-strict=true\n")], "npm install --offline --no-audit --no-fund", r"EBADENGINE|Unsupported engine")
    r("toolchain_version", "fe", "engines.npm >=12 and engine-strict", [("sh", "npm pkg set engines.npm='>=12'")], "npm install --offline --engine-strict --no-audit --no-fund", r"EBADENGINE|Unsupported engine")
    r("toolchain_version", "ms", "a preflight script checks for Node >= 22 before the tests", [("write", "scripts/preflight.js", "const [major] = process.versions.node.split('.').map(Number);\nif (major < 22) {\n  console.error(`ms: Node.js >= 22 is required, this is ${process.version}`);\n  process.exit(1);\n}\n"), ("sh", "npm pkg set scripts.pretest='node scripts/preflight.js'")], "npm test", r"Node.js >= 22 is required")

    # ---------------- env_var_missing
    r("env_var_missing", "cr", "a publish script needs REPORT_WEBHOOK_URL", [("write", "publish.js", "const url = process.env.REPORT_WEBHOOK_URL;\nif (!url) {\n  throw new Error('REPORT_WEBHOOK_URL is not set');\n}\n")], "node publish.js", r"REPORT_WEBHOOK_URL is not set")
    r("env_var_missing", "semver", "a jest test reads process.env.TARGET_VERSION", [("append", "test/semver.test.js", "\ntest('target version from the environment', () => {\n  expect(semver.valid(process.env.TARGET_VERSION)).not.toBeNull()\n})\n")], "npx jest -t 'target version'", r"TARGET_VERSION")
    r("env_var_missing", "fe", "vitest setup file requires API_TOKEN", [("write", "vitest.config.mjs", "export default { test: { setupFiles: ['./test/setup.mjs'] } }\n"), ("write", "test/setup.mjs", "if (!process.env.API_TOKEN) {\n  throw new Error('Missing required environment variable: API_TOKEN')\n}\n")], "npx vitest run", r"API_TOKEN")

    # ---------------- terminal_dependent_output
    r("terminal_dependent_output", "cr", "no break: color tests run with TERM=dumb and no tty", [], "TERM=dumb node --test", r"\\u001b\[32mPASS|\[32mPASS")
    r("terminal_dependent_output", "cr", "no break: color tests run with NO_COLOR=1", [], "NO_COLOR=1 node --test", r"\[32mPASS|\[33mwarning")
    r("terminal_dependent_output", "cr", "no break: color tests run with FORCE_COLOR=0", [], "FORCE_COLOR=0 node --test --test-reporter=spec", r"\[32mPASS|\[33mwarning")
    r("terminal_dependent_output", "cr", "no break: color tests with NODE_DISABLE_COLORS=1 (kleur only)", [], "NODE_DISABLE_COLORS=1 node --test --test-name-pattern=status", r"\[32mPASS")
    r("terminal_dependent_output", "cr", "no break: color tests piped (not a tty) under TERM=xterm-256color", [], "node --test | cat", r"\[32mPASS|\[33mwarning", allow_zero=True)

    # ---------------- flaky_test
    r("flaky_test", "ms", "a test that checks a random duration is under 30 s, declared 8 times with the same name", [("append", "test/ms.test.js", "\nfor (let i = 0; i < 8; i++) {\n  test('random duration fits', () => {\n    const n = Math.floor(Math.random() * 60);\n    assert.ok(ms(`${n}s`) < 30000, `${n}s is too long`);\n  });\n}\n")], "node --test --test-reporter=spec", r"(?s)(✔ random duration fits.*✖ random duration fits|✖ random duration fits.*✔ random duration fits)")
    r("flaky_test", "semver", "jest.retryTimes(4) on a test whose prerelease tag differs on its first two runs (passes on the third)", [("append", "test/semver.test.js", "\njest.retryTimes(4, { logErrorsBeforeRetry: true })\nlet calls = 0\ntest('random prerelease', () => {\n  calls++\n  const v = semver.inc('1.0.0', 'prerelease', calls < 3 ? 'beta' : 'alpha')\n  expect(v).toBe('1.0.1-alpha.0')\n})\n")], "npx jest -t 'random prerelease'", r"RETRY 2", allow_zero=True)
    r("flaky_test", "fe", "a test declared 8 times that depends on Math.random", [("sub", "test/error.test.mjs", "  test('zero parameters', () => {", "  for (let i = 0; i < 8; i++) {\n    test('random status', () => {\n      const NewError = createError('CODE', 'x', Math.random() < 0.5 ? 500 : 503)\n      expect(new NewError().statusCode).toBe(500)\n    })\n  }\n\n  test('zero parameters', () => {")], "npx vitest run --reporter=verbose", r"(?s)(✓.*random status.*×.*random status|×.*random status.*✓.*random status)")
    r("flaky_test", "semver", "a jest test repeated 8 times that depends on timing", [("append", "test/semver.test.js", "\nfor (let i = 0; i < 8; i++) {\n  test('fast parse', () => {\n    const t = process.hrtime.bigint()\n    semver.parse('1.2.3')\n    expect(Number(process.hrtime.bigint() - t) % 2).toBe(0)\n  })\n}\n")], "npx jest --verbose -t 'fast parse'", r"(?s)(✓ fast parse.*✕ fast parse|✕ fast parse.*✓ fast parse)")

    # ---------------- no_tests_ran
    r("no_tests_ran", "semver", "no break: jest with a test path pattern that matches nothing", [], "npx jest test/range", r"No tests found")
    r("no_tests_ran", "fe", "no break: vitest with a file filter that matches nothing", [], "npx vitest run integration", r"No test files found")
    r("no_tests_ran", "ms", "test/ms.test.js moved to spec/ms-cases.js (node --test finds no files)", [("sh", "mkdir spec && git mv test/ms.test.js spec/ms-cases.js")], "node --test", r"tests 0|Could not find", allow_zero=True)
    r("no_tests_ran", "semver", "no break: jest --listTests after moving tests to __tests_disabled__ with --passWithNoTests off", [("sh", "git mv test __tests_disabled__ && npm pkg set jest.testPathIgnorePatterns[0]=__tests_disabled__")], "npx jest", r"No tests found")

    # ---------------- unknown
    r("unknown", "cr", "a release helper exits 1 with a vague message", [("write", "release.js", "console.log('release: checking changelog');\nconsole.error('Error: something went wrong');\nprocess.exit(1);\n")], "node release.js", r"something went wrong")
    r("unknown", "fe", "a custom check script exits with code 3 and its own code", [("write", "scripts/check.js", "console.error('check: inconsistent state (E_STATE_17)')\nprocess.exitCode = 3\n"), ("sh", "npm pkg set scripts.check='node scripts/check.js'")], "npm run check", r"E_STATE_17")

    # ---------------- batch "toolchains": node --test's TAP for suites
    # (describe/it, nested "not ok" blocks), an error thrown in a nested
    # test, and a package's program that is not in node_modules/.bin.
    B = {"batch": "toolchains"}
    MS_SUITE = ("write", "test/suite.test.js", "const { describe, it } = require('node:test');\nconst assert = require('node:assert');\nconst ms = require('..');\n\ndescribe('ms', () => {\n  describe('parse', () => {\n    it('reads hours', () => {\n      assert.strictEqual(ms('2h'), 7200000);\n    });\n    it('reads days', () => {\n      assert.strictEqual(ms('1d'), 86400000, 'one day in milliseconds');\n    });\n  });\n  describe('format', () => {\n    it('says minutes', () => {\n      assert.strictEqual(ms(120000, { long: true }), '2 minutes');\n    });\n  });\n});\n")
    r("test_assertion", "ms", "the day constant is 23 hours; a describe/it suite (TAP, nested)",
      [("sub", "index.js", "var d = h * 24;", "var d = h * 23;"), MS_SUITE], "node --test test/suite.test.js", r"not ok", **B)
    r("test_assertion", "ms", "plural() never adds the s; describe/it suite, --test-reporter=tap",
      [("sub", "index.js", "(isPlural ? 's' : '')", "''"), MS_SUITE], "node --test --test-reporter=tap", r"not ok", **B)
    r("test_assertion", "semver", "inc('patch') adds two; a node:test suite beside the Jest one",
      [("re", "classes/semver.js", r"(case 'patch':[\s\S]*?)this\.patch\+\+", r"\1this.patch += 2"),
       ("write", "test/node/inc.test.js", "const { describe, it } = require('node:test');\nconst assert = require('node:assert');\nconst semver = require('../..');\n\ndescribe('inc', () => {\n  it('bumps the patch', () => {\n    assert.equal(semver.inc('1.2.3', 'patch'), '1.2.4');\n  });\n  it('bumps the minor', () => {\n    assert.equal(semver.inc('1.2.3', 'minor'), '1.3.0');\n  });\n});\n")],
      "node --test test/node/", r"not ok", **B)
    r("test_panic", "ms", "parse() calls toLowerCase on an undefined unit, in a nested test",
      [("sub", "index.js", "var type = (match[2] || 'ms').toLowerCase();", "var type = match[2].toLowerCase();"),
       ("write", "test/suite.test.js", "const { describe, it } = require('node:test');\nconst assert = require('node:assert');\nconst ms = require('..');\n\ndescribe('parse', () => {\n  it('reads bare numbers', () => {\n    assert.strictEqual(ms('100'), 100);\n  });\n});\n")],
      "node --test test/suite.test.js", r"TypeError", **B)
    r("command_not_found", "semver", "no break: node_modules is not installed, so npm test finds no jest",
      [("rm", "node_modules")], "npm test", r"jest: not found", **B)
    r("command_not_found", "ti", "no break: node_modules is not installed; the tsc of the package's devDependencies is missing",
      [("rm", "node_modules")], "node_modules/.bin/tsc --noEmit", r"No such file or directory", **B)

    C.write()


if __name__ == "__main__":
    main()
