#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Differential test of docket's Codex `.rules` engine against the real one.

    codex_diff.py --driver BUILD/tests/unit/codex_diff_driver [--cases N]
                  [--seed S] [--jobs J] [--write-fixture PATH --keep K]

Generates N cases (seeded, deterministic): rules files in the forms people
write (prefix_rule with alternatives, match/not_match examples, decision
values, justification, network_rule, host_executable, comments, keyword and
positional arguments, trailing commas, quoting styles, and invalid forms)
and a command for each. Every case runs through `codex execpolicy check
--rules F... -- CMD` (the real engine, from the @openai/codex npm package)
and through docket (the driver); any difference is printed and makes the
run fail. --write-fixture stores K decided cases with the real engine's
outcome for the default suite (`codex_diff_driver --check`).

The real engine is $CODEX_BIN, or @openai/codex installed with npm into
~/.cache/docket-npm; exit 77 (skipped) when it cannot be had.
"""
import argparse
import concurrent.futures
import glob
import json
import os
import random
import subprocess
import sys
import tempfile

CACHE = os.path.expanduser("~/.cache/docket-npm")
REGENERATE = ("python3 tests/realclient/codex_diff.py --driver build/tests/unit/codex_diff_driver "
              "--cases 3000 --write-fixture fixtures/policy/codex-diff.json --keep 300")

PROGRAMS = ["git", "ls", "rm", "npm", "cargo", "python3", "echo", "sed", "curl", "make", "make"]
WORDS = ["status", "push", "fetch", "-rf", "-f", "install", "--force", "origin", "main",
         "x", "a b", "-n", "test", "run", "build", "--", "*", "ü", "$HOME", "it's", "\"q\"",
         "back\\slash", "", "1p"]
# The real engine runs in CWD, and relative program paths resolve against it
CWD = "/var/tmp/docket-codex-diff/w"
PATHS = {"git": ["/usr/bin/git", "/usr/local/bin/git", "/opt/git/bin/git"],
         "ls": ["/bin/ls", "/usr/bin/ls"], "rm": ["/bin/rm"], "npm": ["/usr/bin/npm"],
         "python3": ["/usr/bin/python3"],
         "make": ["/usr/bin/make", CWD + "/make", CWD + "/bin/make", "/var/tmp/docket-codex-diff/make"]}
# relative spellings of a program (issue 33): Codex resolves them against the cwd
RELATIVE = ["./{}", "bin/{}", "../{}", "{}/", "./bin/../{}", "bin//{}", "./{}/", "../w/{}",
            "../../{}", "a/./{}", "/var/tmp/docket-codex-diff/w/{}", "{}/..", ".", "./", "..", "/"]
HOSTS = ["example.com", "API.github.com", "localhost:8080", "[::1]:443", "[::1]", "10.0.0.1",
         "a.example.com.", "*.example.com", "http://x.com", "x.com/path", "", " ", "a b.com",
         "host:port", "h:1:2", "x?y", "[::1", "[::1]x"]
PROTOCOLS = ["http", "https", "https_connect", "http-connect", "socks5_tcp", "socks5_udp", "ftp", "HTTPS"]


def find_codex(version=None):
    env = os.environ.get("CODEX_BIN")
    if env:
        return env
    cache = CACHE + ("-" + version if version else "")
    pattern = os.path.join(cache, "node_modules/@openai/codex-*/vendor/*/bin/codex")
    found = sorted(glob.glob(pattern))
    if not found:
        try:
            subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix", cache,
                            "@openai/codex" + ("@" + version if version else "")], check=True, timeout=600,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except (OSError, subprocess.SubprocessError):
            return None
        found = sorted(glob.glob(pattern))
    return found[0] if found else None


class Gen:
    """One case: rules files and a command, from a seeded random source."""

    def __init__(self, rnd):
        self.r = rnd
        self.rules = []      # (first alts, rest tokens) of the rules made
        self.hostexe = {}
        # two cases in five may hold invalid forms; the others are clean
        self.bad = rnd.random() < 0.4
        self.vars = {}       # NAME -> a string or a list of strings
        self.extras = set()  # Starlark forms docket does not evaluate

    def oops(self, p):
        return self.bad and self.r.random() < p

    def s(self, text):
        """A Starlark string literal of `text` in one of the quoting styles."""
        r = self.r
        k = r.random()
        plain = all(c not in text for c in "\\\n\"'") and text.isprintable()
        if k < 0.55 or not plain:
            return json.dumps(text, ensure_ascii=r.random() < 0.5)
        if k < 0.8:
            return "'" + text + "'"
        if k < 0.9:
            return 'r"' + text + '"'
        return '"""' + text + '"""'

    def word(self):
        r = self.r
        return r.choice(WORDS) if r.random() < 0.8 else r.choice(PROGRAMS)

    def token(self):
        """A pattern token: a string or a list of alternatives."""
        r = self.r
        strs = [k for k, v in self.vars.items() if isinstance(v, str)]
        if strs and r.random() < 0.3:
            name = r.choice(strs)
            return [self.vars[name]], name
        k = r.random()
        if k < 0.7:
            w = self.word()
            return [w], self.s(w)
        if not self.oops(0.08):
            alts = [self.word() for _ in range(r.randint(1, 3))]
            return alts, "[" + ", ".join(self.s(a) for a in alts) + "]"
        return None, r.choice(["[]", "None", "1", "[1]", "[[\"a\"]]"])

    def example(self, tokens, good):
        """A match (good) or not_match example for a pattern."""
        r = self.r
        if good:
            argv = [r.choice(t) for t in tokens] + [self.word() for _ in range(r.randint(0, 2))]
        else:
            argv = [r.choice(t) for t in tokens]
            if argv and r.random() < 0.6:
                argv[r.randrange(len(argv))] = self.word()
            elif argv:
                argv = argv[:r.randint(0, len(argv) - 1)] or [self.word()]
        if argv and argv[0] in PATHS and r.random() < 0.2:
            argv[0] = r.choice(PATHS[argv[0]])
        if r.random() < 0.5 and all(a and a.isprintable() for a in argv):
            import shlex
            return self.s(shlex.join(argv))
        if self.oops(0.05):
            return r.choice(['""', "[]", "1", "'unterminated \"quote'", "None"])
        return "[" + ", ".join(self.s(a) for a in argv) + "]"

    def prefix_rule(self):
        r = self.r
        n = r.randint(1, 4) if not self.oops(0.03) else 0
        toks, srcs = [], []
        for i in range(n):
            if i == 0 and r.random() < 0.8:
                alts = [r.choice(PROGRAMS)] if r.random() < 0.8 else \
                    [r.choice(PROGRAMS) for _ in range(r.randint(1, 3))]
                src = self.s(alts[0]) if len(alts) == 1 and r.random() < 0.7 else \
                    "[" + ", ".join(self.s(a) for a in alts) + "]"
                t = alts
            else:
                t, src = self.token()
            toks.append(t)
            srcs.append(src)
        lists = [k for k, v in self.vars.items() if isinstance(v, list)]
        pattern = "[" + ", ".join(srcs) + ("," if r.random() < 0.1 else "") + "]"
        if lists and r.random() < 0.5:
            name = r.choice(lists)
            toks = [[w] for w in self.vars[name]] + toks
            pattern = name if n == 0 else name + " + " + pattern
            n = len(toks)
        valid = all(t is not None for t in toks) and n > 0
        if valid:
            self.rules.append(toks)
        args = [("pattern", pattern)]
        k = r.random()
        if k < 0.75:
            args.append(("decision", self.s(r.choice(["allow", "prompt", "forbidden"]))))
        elif self.oops(0.3):
            args.append(("decision", r.choice(['"deny"', '"Allow"', '""', "None", "1", '"ask"'])))
        if r.random() < 0.3:
            bad = ['""', '"  "', "None", "1"] if self.oops(0.5) else []
            args.append(("justification", r.choice([self.s("touches the network"), self.s("ok"),
                                                    self.s("line\nbreak")] + bad)))
        if valid and r.random() < 0.35:
            ex = [self.example(toks, not self.oops(0.2)) for _ in range(r.randint(0, 2))]
            args.append(("match", "[" + ", ".join(ex) + "]"))
        if valid and r.random() < 0.25:
            ex = [self.example(toks, self.oops(0.2)) for _ in range(r.randint(0, 2))]
            args.append(("not_match", "[" + ", ".join(ex) + "]"))
        if self.oops(0.02):
            args.append(("reviewer", '"user"'))
        return "prefix_rule" + self.call(args, ["pattern", "decision", "match", "not_match",
                                                "justification"])

    def call(self, args, order):
        """Argument list: keywords in any order, or a positional prefix."""
        r = self.r
        r.shuffle(args)
        if r.random() < 0.2:
            args.sort(key=lambda a: order.index(a[0]) if a[0] in order else 99)
            names = [a[0] for a in args]
            npos = 0
            while npos < len(args) and npos < len(order) and names[npos] == order[npos]:
                npos += 1
            npos = r.randint(0, npos)
            parts = [v for _, v in args[:npos]] + [f"{k}={v}" for k, v in args[npos:]]
        else:
            parts = [f"{k}={v}" for k, v in args]
        sep = ",\n    " if r.random() < 0.2 else ", "
        tail = "," if r.random() < 0.1 else ""
        return "(" + sep.join(parts) + tail + ")"

    def network_rule(self):
        r = self.r
        bad = self.oops(0.5)
        args = [("host", self.s(r.choice(HOSTS if bad else HOSTS[:7]))),
                ("protocol", self.s(r.choice(PROTOCOLS if bad else PROTOCOLS[:6]))),
                ("decision", self.s(r.choice(["allow", "deny", "prompt", "forbidden"] +
                                             (["block"] if bad else []))))]
        if r.random() < 0.2:
            args.append(("justification", self.s(r.choice(["why", "", " "] if bad else ["why"]))))
        if self.oops(0.05):
            args.pop(r.randrange(len(args)))
        return "network_rule" + self.call(args, ["host", "protocol", "decision", "justification"])

    def host_executable(self):
        r = self.r
        name = r.choice(list(PATHS))
        k = r.random()
        if not self.oops(0.3):
            paths = r.sample(PATHS[name], r.randint(0, len(PATHS[name])))
            if paths and r.random() < 0.2:
                paths.append(paths[0])
            self.hostexe[name] = paths
        elif k < 0.5:
            paths = ["bin/" + name] if r.random() < 0.5 else ["/usr/bin/other"]
        else:
            name = r.choice(["", "a/b", ".", ".."])
            paths = []
        args = [("name", self.s(name)), ("paths", "[" + ", ".join(self.s(p) for p in paths) + "]")]
        return "host_executable" + self.call(args, ["name", "paths"])

    def assignment(self):
        r = self.r
        name = r.choice(["GIT", "SAFE", "NPM_RUN", "prog", "_X"])
        if r.random() < 0.5:
            value = self.word() if r.random() < 0.5 else r.choice(PROGRAMS)
            self.vars[name] = value
            return name + " = " + self.s(value)
        parts = [[r.choice(PROGRAMS)]] + [[self.word()] for _ in range(r.randint(0, 1))]
        value = [w for p in parts for w in p]
        src = " + ".join("[" + ", ".join(self.s(w) for w in p) + "]" for p in parts)
        if name in self.vars and isinstance(self.vars[name], list) and r.random() < 0.5:
            extra = [self.word()]
            self.vars[name] = self.vars[name] + extra
            return name + " += [" + self.s(extra[0]) + "]"
        self.vars[name] = value
        return name + " = " + src

    def starlark_extra(self):
        """Loops and functions: real Starlark that docket's loader refuses."""
        r = self.r
        progs = r.sample(PROGRAMS, 2)
        if r.random() < 0.5:
            self.extras.add("for")
            return ("for p in [" + ", ".join(self.s(x) for x in progs) + "]:\n"
                    "    prefix_rule(pattern=[p, " + self.s(self.word()) + "], decision=\"prompt\")")
        self.extras.add("def")
        return ("def deny(p):\n    prefix_rule(pattern=[p], decision=\"forbidden\")\n"
                "deny(" + self.s(progs[0]) + ")")

    def statement(self):
        r = self.r
        if r.random() < 0.12:
            return self.assignment()
        if r.random() < 0.01:
            return self.starlark_extra()
        k = r.random()
        if k < 0.7:
            return self.prefix_rule()
        if k < 0.82:
            return self.network_rule()
        if k < 0.94:
            return self.host_executable()
        if not self.oops(0.3):
            return "# " + r.choice(["a comment", "prefix_rule(pattern=['x'])", "ü"])
        return r.choice(["unknown_rule(pattern=[\"x\"])", "prefix_rule(", "prefix_rule pattern",
                         "prefix_rule(pattern=[\"a\"]) prefix_rule(pattern=[\"b\"])",
                         "prefix_rule(pattern=[\"a\"], pattern=[\"b\"])",
                         "prefix_rule(pattern=[\"a\"]); prefix_rule(pattern=[\"b\"])",
                         "prefix_rule(\"a\")", "prefix_rule()", "  "])

    def file(self):
        lines = [self.statement() for _ in range(self.r.randint(0, 6))]
        if self.r.random() < 0.1:
            lines.insert(0, "# execpolicy rules\n")
        return "\n".join(lines) + ("\n" if self.r.random() < 0.8 else "")

    def command(self):
        r = self.r
        if self.rules and r.random() < 0.75:
            toks = r.choice(self.rules)
            argv = [r.choice(t) for t in toks]
            if r.random() < 0.3:
                argv = argv[:r.randint(1, len(argv))]
            if r.random() < 0.25:
                argv[r.randrange(len(argv))] = self.word()
            argv += [self.word() for _ in range(r.randint(0, 2))]
        else:
            argv = [r.choice(PROGRAMS)] + [self.word() for _ in range(r.randint(0, 3))]
        if argv[0] in PATHS and r.random() < 0.35:
            argv[0] = r.choice(PATHS[argv[0]] + ["/somewhere/" + argv[0]])
        elif r.random() < 0.25:
            argv[0] = r.choice(RELATIVE).format(argv[0])
        return argv

    def case(self):
        files = []
        for _ in range(1 if self.r.random() < 0.85 else 2):
            self.vars = {}
            files.append(self.file())
        c = {"files": files, "argv": self.command(), "resolve": self.r.random() < 0.5, "cwd": CWD}
        if self.extras:
            c["starlark"] = sorted(self.extras)
        return c


def run_codex(codex, case, tmp):
    args = [codex, "execpolicy", "check"]
    if case["resolve"]:
        args.append("--resolve-host-executables")
    for i, text in enumerate(case["files"]):
        path = os.path.join(tmp, f"f{i}.rules")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        args += ["--rules", path]
    os.makedirs(CWD, exist_ok=True)
    p = subprocess.run(args + ["--"] + case["argv"], capture_output=True, timeout=60, cwd=CWD,
                       env={"PATH": "/usr/bin:/bin", "HOME": tmp, "CODEX_HOME": tmp})
    if p.returncode != 0:
        return {"error": True}
    return json.loads(p.stdout)


def codex_outcomes(codex, cases, jobs):
    def one(item):
        with tempfile.TemporaryDirectory() as tmp:
            return run_codex(codex, item, tmp)
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(one, cases, chunksize=16))


def docket_outcomes(driver, cases):
    text = "".join(json.dumps(c) + "\n" for c in cases)
    p = subprocess.run([driver], input=text.encode(), capture_output=True, check=True)
    return [json.loads(line) for line in p.stdout.decode().splitlines()]


def cli_version(version):
    return version.split()[-1] if version else ""


def shell_main(a, codex, version):
    """--family shell: bash -lc scripts through the real runtime (codex_diff_shell.py)."""
    import collections
    import codex_diff_shell as sh
    cases = sh.cases(a.seed, a.cases)
    decided = sh.real_outcomes(codex, cases, jobs=a.jobs)
    cli = cli_version(version)
    for c in decided:
        c["cli"] = cli
    ours = sh.docket_outcomes(a.driver, decided)
    per = collections.defaultdict(lambda: [0, 0])
    differ = unknown = 0
    kept, seen = [], set()
    for i, (c, got) in enumerate(zip(decided, ours)):
        if c["codex"].startswith("unknown") or c["codex"] == "missing":
            unknown += 1
            print("UNDECIDED", json.dumps(c))
            continue
        per[c["family"]][1] += 1
        if got == c["codex"]:
            per[c["family"]][0] += 1
        else:
            differ += 1
            print("DIFF", c["family"], json.dumps(c["script"]), "codex", c["codex"], "docket", got)
        if a.write_fixture and c["script"] not in seen and len(kept) < a.keep:
            seen.add(c["script"])
            kept.append({k: c[k] for k in ("family", "script", "sandbox", "codex")})
    total = sum(t for _, t in per.values())
    for fam, (ok, t) in sorted(per.items()):
        print(f"  {fam}: {ok}/{t} agree ({100.0 * ok / max(t, 1):.2f}%)")
    print(f"{version}: {total} shell cases (seed {a.seed}), {differ} differ, {unknown} undecided")
    if a.write_fixture:
        with open(a.write_fixture, "w", encoding="utf-8") as f:
            # one case a line: the fixture stays readable and diffs stay small
            head = json.dumps({"engine": version, "cli": cli, "seed": a.seed, "rules": sh.RULES,
                               "regenerate": REGENERATE_SHELL}, ensure_ascii=False)
            f.write(head[:-1] + ', "cases": [\n')
            f.write(",\n".join(json.dumps(c, ensure_ascii=False) for c in kept))
            f.write("\n]}\n")
    return 1 if differ or unknown else 0


REGENERATE_SHELL = ("python3 tests/realclient/codex_diff.py --family shell --driver build/tests/unit/codex_diff_driver "
                    "--cases 3000 --seed 3301 --write-fixture fixtures/policy/codex-shell-VERSION.json --keep 4000 "
                    "[--codex-version 0.169.0]")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--driver", required=True)
    ap.add_argument("--family", choices=["argv", "shell"], default="argv")
    ap.add_argument("--codex-version", help="install and use @openai/codex@VERSION (default: newest)")
    ap.add_argument("--cases", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=18)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--batch", type=int, default=5000)
    ap.add_argument("--write-fixture")
    ap.add_argument("--keep", type=int, default=300)
    a = ap.parse_args()
    codex = find_codex(a.codex_version)
    if not codex:
        print("the real engine (@openai/codex) is not available: skipped")
        return 77
    version = subprocess.run([codex, "--version"], capture_output=True, text=True).stdout.strip()
    if a.family == "shell":
        return shell_main(a, codex, version)
    rnd = random.Random(a.seed)
    total = differ = errors = matched = documented = 0
    relative = [0, 0]
    kept = []
    for start in range(0, a.cases, a.batch):
        cases = [Gen(rnd).case() for _ in range(min(a.batch, a.cases - start))]
        real = codex_outcomes(codex, cases, a.jobs)
        ours = docket_outcomes(a.driver, cases)
        for c, want, got in zip(cases, real, ours):
            total += 1
            rel = "/" in c["argv"][0] and not c["argv"][0].startswith("/")
            relative[1] += rel and "starlark" not in c
            relative[0] += rel and "starlark" not in c and want == got
            errors += "error" in want
            matched += bool(want.get("matchedRules"))
            if want != got and "starlark" in c and "error" in got:
                documented += 1
            elif want != got:
                differ += 1
                if differ <= 20:
                    print("DIFF", json.dumps(c), "\n  codex ", json.dumps(want),
                          "\n  docket", json.dumps(got))
            elif a.write_fixture and len(kept) < a.keep and (total % 3 == 0 or want.get("matchedRules")):
                kept.append(dict(c, codex=want))
        print(f"{total} cases, {differ} differ", file=sys.stderr, flush=True)
    print(f"{version}: {total} cases (seed {a.seed}; {errors} load errors, {matched} with matches), "
          f"{differ} differ; {documented} use Starlark loops or functions, which docket refuses "
          "to load (docs/policy.md)")
    print(f"  relative program paths: {relative[0]}/{relative[1]} agree (files without for/def)")
    if a.write_fixture:
        with open(a.write_fixture, "w", encoding="utf-8") as f:
            json.dump({"engine": version, "seed": a.seed,
                       "regenerate": REGENERATE,
                       "cases": kept}, f, indent=1, ensure_ascii=False)
            f.write("\n")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
