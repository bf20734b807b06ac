#!/usr/bin/env python3
"""shell and git samples. shell: the greeter that zerg's demo scenario builds
(examples/demo: lib/greet.sh, lib/upper.sh, data/names.txt, bin/greet-all,
bin/shout, tests/run.sh), run with bash/dash/shellcheck 0.9.0. git: real merges,
fetches, pushes and commits in scratch repositories (git 2.39), including the Go
modules used for the go samples."""
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib import Corpus, SCRATCH, sh, base_env  # noqa: E402

SRC = os.path.join(SCRATCH, "src", "shell", "greeter")
FILES = {
    "data/names.txt": "Ada\nGrace\nLinus\n",
    "lib/greet.sh": "greet() {\n  printf 'Hello, %s!\\n' \"$1\"\n}\n",
    "lib/upper.sh": "upper() {\n  tr '[:lower:]' '[:upper:]'\n}\n",
    "bin/greet-all": "#!/bin/sh\n. ./lib/greet.sh\nwhile read -r name; do greet \"$name\"; done < data/names.txt\n",
    "bin/shout": "#!/bin/sh\n. ./lib/upper.sh\nupper < data/names.txt\n",
    "tests/run.sh": "#!/bin/sh\n# Checks both commands; exits non-zero on a mismatch.\nset -e\nexpected_greet='Hello, Ada!\nHello, Grace!\nHello, Linus!'\nexpected_shout='ADA\nGRACE\nLINUS'\n[ \"$(sh bin/greet-all)\" = \"$expected_greet\" ] || { echo \"greet-all: unexpected output\"; sh bin/greet-all | diff -u - <(printf '%s\\n' \"$expected_greet\") ; exit 1; }\n[ \"$(sh bin/shout)\" = \"$expected_shout\" ] || { echo 'shout: unexpected output'; exit 1; }\necho 'all tests passed'\n",
    "docs/usage.md": "# Usage\n\n- `sh bin/greet-all` greets every name in data/names.txt.\n- `sh bin/shout` prints them upper-cased.\n",
}
GREETER = "greeter (the shell project zerg's examples/demo scenario builds)"


def prepare():
    if os.path.exists(os.path.join(SRC, ".prepared")):
        return
    sh(f"rm -rf {SRC} && mkdir -p {SRC}")
    for p, c in FILES.items():
        os.makedirs(os.path.dirname(os.path.join(SRC, p)), exist_ok=True)
        open(os.path.join(SRC, p), "w").write(c)
    # tests/run.sh uses a process substitution only in its failure branch: run it with bash
    t = open(os.path.join(SRC, "tests/run.sh")).read().replace("#!/bin/sh", "#!/bin/bash")
    open(os.path.join(SRC, "tests/run.sh"), "w").write(t)
    sh("chmod +x bin/* tests/run.sh && ./tests/run.sh && git init -q -b main && git add -A && git -c user.name=corpus -c user.email=corpus@invalid commit -qm greeter", cwd=SRC)
    open(os.path.join(SRC, ".prepared"), "w").write("")


class AuthHandler(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="git"')
        self.send_header("Content-Length", "0")
        self.end_headers()
    do_POST = do_GET

    def log_message(self, *a):
        pass


def main():
    prepare()
    S = Corpus("shell")
    r = lambda pattern, brk, ops, cmd, expect, **kw: S.run(pattern, GREETER, SRC, brk, ops, cmd, expect, **kw)
    nob = "runuser -u nobody -- "

    r("command_not_found", "bin/greet-all calls greeet (typo)", [("sub", "bin/greet-all", 'do greet "$name"', 'do greeet "$name"')], "sh bin/greet-all", r"not found")
    r("command_not_found", "lib/upper.sh uses `toupper` instead of tr", [("sub", "lib/upper.sh", "  tr '[:lower:]' '[:upper:]'", "  toupper")], "bash bin/shout", r"command not found|not found")
    r("command_not_found", "running greet-all without ./ (bin is not on PATH)", [], "greet-all", r"command not found")
    r("command_not_found", "tests/run.sh calls shellspec, not installed", [("write", "tests/spec.sh", "#!/bin/sh\nshellspec --format documentation\n"), ("chmod", "tests/spec.sh", 0o755)], "./tests/spec.sh", r"not found")

    r("permission_denied", "bin/shout lost its execute bit", [("chmod", "bin/shout", 0o644)], "./bin/shout", r"Permission denied")
    r("permission_denied", "data/names.txt unreadable (chmod 000), run as nobody", [("chmod", "data/names.txt", 0o000), ("sh", "chmod o+rx . bin lib data")], nob + "sh bin/greet-all", r"Permission denied|cannot open")
    r("permission_denied", "greet-all writes its output into a root-owned out/ as nobody", [("write", "bin/greet-file", "#!/bin/sh\n. ./lib/greet.sh\ngreet Ada > out/greeting.txt\n"), ("sh", "mkdir -p out && chmod 755 out && chmod o+rx . bin lib && chmod 755 bin/greet-file")], nob + "sh bin/greet-file", r"Permission denied|cannot create")
    r("permission_denied", "tests/run.sh sources a lib that is not readable for nobody", [("chmod", "lib/greet.sh", 0o600), ("sh", "chmod o+rx . bin lib data tests")], nob + "bash tests/run.sh", r"Permission denied|can't open")

    r("syntax_error", "a missing `fi` in a new check script", [("write", "bin/check", "#!/bin/sh\nif [ -f data/names.txt ]; then\n  echo ok\n"), ("chmod", "bin/check", 0o755)], "sh -n bin/check", r"Syntax error|syntax error")
    r("syntax_error", "`done` removed from the while loop in bin/greet-all", [("sub", "bin/greet-all", '; done < data/names.txt', ' < data/names.txt')], "sh bin/greet-all", r"Syntax error|syntax error")
    r("syntax_error", "unterminated quote in lib/greet.sh", [("sub", "lib/greet.sh", "printf 'Hello, %s!\\n'", "printf 'Hello, %s!\\n")], "bash -n lib/greet.sh", r"unexpected EOF|syntax error")
    r("syntax_error", "a stray `(` in bin/shout", [("sub", "bin/shout", "upper < data/names.txt", "upper ( < data/names.txt")], "sh bin/shout", r"Syntax error|syntax error")
    r("syntax_error", "a bash [[ ]] test with a missing ]] in tests/run.sh", [("sub", "tests/run.sh", "set -e\n", "set -e\n[[ -f data/names.txt || exit 1\n")], "bash tests/run.sh", r"syntax error|unexpected")

    r("env_var_missing", "bin/greet-all reads NAMES_FILE under set -u", [("write", "bin/greet-all", "#!/bin/sh\nset -u\n. ./lib/greet.sh\nwhile read -r name; do greet \"$name\"; done < \"$NAMES_FILE\"\n")], "sh bin/greet-all", r"parameter not set|unbound variable")
    r("env_var_missing", "bin/shout requires SHOUT_PREFIX with ${VAR:?}", [("sub", "bin/shout", "upper < data/names.txt", ': "${SHOUT_PREFIX:?SHOUT_PREFIX must be set}"\nupper < data/names.txt')], "sh bin/shout", r"SHOUT_PREFIX must be set")
    r("env_var_missing", "a deploy script checks DEPLOY_HOST and exits", [("write", "bin/deploy", "#!/bin/bash\nif [ -z \"${DEPLOY_HOST:-}\" ]; then\n  echo \"deploy: DEPLOY_HOST is not set\" >&2\n  exit 2\nfi\nscp -r bin lib \"$DEPLOY_HOST:/srv/greeter\"\n"), ("chmod", "bin/deploy", 0o755)], "./bin/deploy", r"DEPLOY_HOST is not set")
    r("env_var_missing", "tests/run.sh uses $GREETER_LANG under bash set -u", [("sub", "tests/run.sh", "set -e\n", "set -eu\necho \"language: $GREETER_LANG\"\n")], "bash tests/run.sh", r"unbound variable")

    r("lint_failure", "unquoted variable in bin/greet-all (SC2086)", [("sub", "bin/greet-all", 'do greet "$name"', 'do greet $name')], "shellcheck bin/greet-all", r"SC2086")
    r("lint_failure", "`read` without -r and cd without || exit (SC2162, SC2164)", [("write", "bin/each", "#!/bin/bash\ncd data\nwhile read name; do echo \"$name\"; done < names.txt\n"), ("chmod", "bin/each", 0o755)], "shellcheck bin/each", r"SC2162|SC2164")
    r("lint_failure", "an unused variable and backticks (SC2034, SC2006)", [("sub", "bin/shout", ". ./lib/upper.sh\n", ". ./lib/upper.sh\ncount=`wc -l < data/names.txt`\n")], "shellcheck -s sh bin/shout", r"SC2034|SC2006")
    r("lint_failure", "shellcheck of tests/run.sh after comparing with == in [ ] under sh", [("sub", "tests/run.sh", "#!/bin/bash", "#!/bin/sh"), ("sub", "tests/run.sh", '[ "$(sh bin/shout)" = "$expected_shout" ]', '[ "$(sh bin/shout)" == "$expected_shout" ]')], "shellcheck tests/run.sh", r"SC\d+")

    r("test_assertion", "lib/greet.sh prints `Hi, NAME!`", [("sub", "lib/greet.sh", "Hello, %s!", "Hi, %s!")], "bash tests/run.sh", r"unexpected output")
    r("test_assertion", "data/names.txt lost Linus", [("write", "data/names.txt", "Ada\nGrace\n")], "bash tests/run.sh", r"unexpected output")
    r("test_assertion", "upper lower-cases instead", [("sub", "lib/upper.sh", "tr '[:lower:]' '[:upper:]'", "tr '[:upper:]' '[:lower:]'")], "bash tests/run.sh", r"shout: unexpected output")

    r("test_timeout", "greet-all loops on the same name forever; `timeout 3 bash tests/run.sh`", [("sub", "bin/greet-all", 'while read -r name; do greet "$name"; done < data/names.txt', 'while true; do greet Ada >/dev/null; done')], "timeout 3 bash tests/run.sh; echo \"exit status $?\"; exit 124", r"exit status 124")

    r("out_of_memory", "a loop doubles a string under ulimit -v 100 MB", [("write", "bin/grow", "#!/bin/bash\ns=$(cat data/names.txt)\nwhile true; do s=\"$s$s\"; done\n"), ("chmod", "bin/grow", 0o755)], "ulimit -v 100000; ./bin/grow", r"cannot allocate|xmalloc|memory")
    small = os.path.join(SCRATCH, "small")

    def mount_small(work):
        sh(f"mkdir -p {small}; umount {small} 2>/dev/null; mount -t tmpfs -o size=2m tmpfs {small}")

    r("unknown", "a release script fails with a vague message", [("write", "bin/release", "#!/bin/sh\necho 'release: packaging greeter'\necho 'release: something went wrong' >&2\nexit 1\n"), ("chmod", "bin/release", 0o755)], "./bin/release", r"something went wrong")
    r("unknown", "a check script exits 3 with its own error code", [("write", "bin/selfcheck", "#!/bin/sh\necho 'selfcheck: state E_GREETER_42, aborting' >&2\nexit 3\n"), ("chmod", "bin/selfcheck", 0o755)], "./bin/selfcheck", r"E_GREETER_42")
    r("unknown", "a make target fails in a custom tool's own words", [("write", "Makefile", "package:\n\t@echo 'packager: manifest checksum mismatch (run 7f3a)'; exit 4\n")], "make package", r"checksum mismatch")
    S.write()

    # ------------------------------------------------------------------ git
    G = Corpus("git")
    gsrc = os.path.join(SCRATCH, "src", "go")
    cast = os.path.join(gsrc, "github.com/spf13/cast")
    uuid = os.path.join(gsrc, "github.com/google/uuid")
    pflag = os.path.join(gsrc, "github.com/spf13/pflag")
    toml = os.path.join(SCRATCH, "src", "python", "toml-0.10.2")
    ms = os.path.join(SCRATCH, "src", "js", "ms")
    gc = "git -c user.name=corpus -c user.email=corpus@invalid"

    def branches(file, old, ours, theirs):
        return ("sh", f"git checkout -qb feature && python3 - <<'EOF'\np='{file}';s=open(p).read();assert {old!r} in s;open(p,'w').write(s.replace({old!r},{theirs!r},1))\nEOF\n{gc} commit -qam 'feature: change' && git checkout -q main 2>/dev/null || git checkout -q master; python3 - <<'EOF'\np='{file}';s=open(p).read();open(p,'w').write(s.replace({old!r},{ours!r},1))\nEOF\n{gc} commit -qam 'main: change'")
    g = lambda pattern, proj, src, brk, ops, cmd, expect, **kw: G.run(pattern, proj, src, brk, ops, cmd, expect, **kw)
    g("merge_conflict", "github.com/spf13/cast@v1.7.1", cast, "both branches changed ToBool's body in cast.go", [branches("cast.go", "\tv, _ := ToBoolE(i)\n\treturn v", "\tv, err := ToBoolE(i)\n\t_ = err\n\treturn v", "\tb, _ := ToBoolE(i)\n\treturn b")], f"{gc} merge feature", r"CONFLICT \(content\)")
    g("merge_conflict", "github.com/google/uuid@v1.6.0", uuid, "rebase of a branch that changed Must's panic message onto one that changed it differently", [branches("uuid.go", "\t\tpanic(err)", "\t\tpanic(\"uuid: \" + err.Error())", "\t\tpanic(fmt.Sprint(err))"), ("sh", "git checkout -q feature")], f"{gc} rebase master", r"CONFLICT \(content\)")
    g("merge_conflict", "toml 0.10.2 (Debian python3-toml)", toml, "cherry-pick of a commit touching the same line of toml/__init__.py", [branches("toml/__init__.py", "__version__ = \"0.10.2\"", "__version__ = \"0.10.3\"", "__version__ = \"0.11.0\"")], f"{gc} cherry-pick feature", r"CONFLICT \(content\)")
    g("merge_conflict", "ms@2.1.3 (npm)", ms, "git pull from a clone where the same line of index.js changed", [("sh", f"rm -rf ../ms-upstream && git clone -q . ../ms-upstream && cd ../ms-upstream && sed -i 's/var w = d \\* 7;/var w = d * 7; \\/\\/ week/' index.js && {gc} commit -qam upstream"), ("sh", f"sed -i 's/var w = d \\* 7;/var w = 7 * d;/' index.js && {gc} commit -qam local && git remote add upstream ../ms-upstream")], f"{gc} pull --no-rebase upstream master", r"CONFLICT \(content\)")
    g("merge_conflict", "github.com/spf13/pflag@v1.0.5", pflag, "git stash pop onto a commit that changed the same lines of count.go", [("sh", f"sed -i 's/return \"count\"/return \"counter\"/' count.go && git stash -q && sed -i 's/return \"count\"/return \"cnt\"/' count.go && {gc} commit -qam rename")], "git stash pop", r"CONFLICT \(content\)")
    g("merge_conflict", "greeter (zerg demo)", SRC, "merge of two branches that both rewrote data/names.txt", [branches("data/names.txt", "Ada\nGrace\nLinus\n", "Ada\nGrace\nLinus\nMargaret\n", "Ada\nGrace\nLinus\nBarbara\n")], f"{gc} merge --no-edit feature", r"CONFLICT \(content\)")
    g("merge_conflict", "github.com/spf13/cast@v1.7.1", cast, "add/add conflict: both branches created NOTES.md", [("sh", f"git checkout -qb feature && printf 'feature notes\\n' > NOTES.md && git add NOTES.md && {gc} commit -qm notes && git checkout -q master 2>/dev/null || git checkout -q main; printf 'main notes\\n' > NOTES.md && git add NOTES.md && {gc} commit -qm notes")], f"{gc} merge feature", r"CONFLICT \(add/add\)")

    g("network_unavailable", "github.com/spf13/cast@v1.7.1", cast, "git clone over HTTPS with no network", [], "git clone https://github.com/spf13/cast.git cast-upstream", r"Could not resolve host")
    g("network_unavailable", "ms@2.1.3 (npm)", ms, "git push to an SSH remote whose host does not resolve", [("sh", "git remote add origin git@git.corp.invalid:tools/ms.git")], "GIT_SSH_COMMAND='ssh -o BatchMode=yes -o ConnectTimeout=5' git push origin master", r"Could not resolve hostname|Name or service not known")
    g("network_unavailable", "toml 0.10.2 (Debian python3-toml)", toml, "git fetch from a remote on a closed local port", [("sh", "git remote add mirror http://127.0.0.1:9/toml.git")], "git fetch mirror", r"Failed to connect|Connection refused|Couldn't connect")

    srv = HTTPServer(("127.0.0.1", 0), AuthHandler)
    port = srv.server_address[1]
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    g("auth_failed", "github.com/google/uuid@v1.6.0", uuid, "push to an HTTP remote that answers 401, credentials in the URL are wrong", [("sh", f"git remote add origin http://ci-bot:wrong-token@127.0.0.1:{port}/uuid.git")], "GIT_TERMINAL_PROMPT=0 git push origin HEAD", r"Authentication failed|401")
    g("auth_failed", "ms@2.1.3 (npm)", ms, "fetch from an HTTP remote that answers 401, no credentials and no terminal", [("sh", f"git remote add origin http://127.0.0.1:{port}/ms.git")], "GIT_TERMINAL_PROMPT=0 git fetch origin", r"could not read Username|Authentication failed")
    g("auth_failed", "greeter (zerg demo)", SRC, "clone from an HTTP remote that answers 401 with a token that is rejected", [], f"GIT_TERMINAL_PROMPT=0 git clone http://x-access-token:expired@127.0.0.1:{port}/greeter.git copy", r"Authentication failed|401")
    g("auth_failed", "toml 0.10.2 (Debian python3-toml)", toml, "ls-remote with a credential helper that returns a wrong password", [("sh", f"git config credential.helper '!f() {{ echo username=bot; echo password=nope; }}; f'")], f"GIT_TERMINAL_PROMPT=0 git ls-remote http://127.0.0.1:{port}/toml.git", r"Authentication failed|401")

    g("permission_denied", "github.com/spf13/cast@v1.7.1", cast, "git commit as nobody in a repository owned by root", [("sh", "chmod -R o+rX . && printf '\\n' >> README.md && chmod o+w README.md")], "runuser -u nobody -- git -c safe.directory='*' -c user.name=n -c user.email=n@invalid commit -am wip", r"Permission denied|insufficient permission|Unable to create")
    g("permission_denied", "greeter (zerg demo)", SRC, "git push as nobody to a root-owned bare repository", [("sh", "git clone -q --bare . /tmp/diagcorpus/greeter-bare.git && chmod -R o+rX /tmp/diagcorpus/greeter-bare.git . && git remote add bare /tmp/diagcorpus/greeter-bare.git && printf 'Margaret\\n' >> data/names.txt && git -c user.name=c -c user.email=c@i commit -qam more")], "runuser -u nobody -- git -c safe.directory='*' push bare HEAD:main", r"Permission denied|insufficient permission|unable to")
    g("permission_denied", "ms@2.1.3 (npm)", ms, ".git/index made read-only and git add run as nobody", [("sh", "chmod -R o+rX . && printf 'x\\n' > NOTE && chmod o+r NOTE")], "runuser -u nobody -- git -c safe.directory='*' add NOTE", r"Permission denied|Unable to create")

    def mount_small(work):
        sh(f"mkdir -p {small}; umount {small} 2>/dev/null; mount -t tmpfs -o size=2m tmpfs {small}")
    g("disk_full", "github.com/spf13/pflag@v1.0.5", pflag, "git clone into a 2 MiB tmpfs", [mount_small, ("sh", f"dd if=/dev/zero of={small}/fill bs=1k count=1900 2>/dev/null; true")], f"git clone -q --no-hardlinks . {small}/pflag", r"No space left on device")
    g("unknown", "greeter (zerg demo)", SRC, "a pre-commit hook exits 1 with its own message", [("sh", "printf '#!/bin/sh\\necho \"pre-commit: policy check failed (rule GR-7)\"\\nexit 1\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit && printf 'x\\n' >> docs/usage.md")], f"{gc} commit -am docs", r"GR-7")
    srv.shutdown()
    G.write()


if __name__ == "__main__":
    main()
