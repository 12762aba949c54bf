#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Pseudonyms hold: generated user names, placed where agents' transcripts
put them, are gone from every export format (jsonl, ocsf, otel, csv) and
from the report when --pseudonymize is given.

  pseudo_property.py DOCKET [SEED]

Each session gets a user name (a POSIX one, or a Windows one with a space)
and uses it in: the session's cwd and HOME/USER, shell commands and their
output (`ls -l` lines with the owner), a Claude Code encoded project folder
(-Users-NAME-code-x), a Windows path, and text that comes before the event
that names the home. The property: no name occurs in any output (a
substring search), and the same name always gets the same pseudonym.
"""
import hashlib
import hmac
import html
import json
import os
import random
import subprocess
import sys
import tempfile

SESSIONS = 24


def name(rng, spaced):
    letters = "bcdfghjklmnpqrstvwxz"
    vowels = "aeiou"
    def part(n):
        return "".join(rng.choice(letters) + rng.choice(vowels) for _ in range(n))
    first = part(rng.randint(3, 5))
    if spaced:
        return first.capitalize() + " " + part(rng.randint(2, 4)).upper()
    if rng.random() < 0.3:
        return first + "." + part(2)
    return first


def events(rng):
    out = [{"type": "runtime.started", "runtime": "prop/1", "time": "2026-01-01T00:00:00Z"}]
    names = []
    for i in range(SESSIONS):
        windows = i % 3 == 0
        user = name(rng, windows)
        names.append(user)
        sid = "s%02d" % i
        enc = "".join(c if c.isalnum() else "-" for c in user)
        if windows:
            home, platform = "C:\\Users\\%s" % user, "windows"
        else:
            home, platform = ("/Users/%s" if i % 2 else "/home/%s") % user, ("macos" if i % 2 else "linux")
        t = "2026-01-01T00:%02d:%02d.000Z"
        # a call before the session names its home: the name in text first
        out.append({"type": "session.opened", "session": sid, "runtime": "claude-code/2.1", "platform": platform,
                    "cwd": home + ("\\proj" if windows else "/proj"),
                    "env": {"HOME": home, "USER": user, "LOGNAME": user}, "time": t % (i, 0)})
        out.append({"type": "tool.intent", "session": sid, "invocation": "a", "tool": "shell",
                    "args": {"command": ["bash", "-c", "git log --author='%s'" % user]}, "time": t % (i, 1)})
        out.append({"type": "tool.dispatched", "session": sid, "invocation": "a", "time": t % (i, 2)})
        out.append({"type": "tool.completed", "session": sid, "invocation": "a", "status": "ok",
                    "output": "drwxr-xr-x  3 %s  staff  96 Jan 1 .\nsee ~/.claude/projects/-Users-%s-code-x/a.jsonl\n"
                              "and C:/Users/%s/.gitconfig" % (user, enc, user), "time": t % (i, 3)})
        out.append({"type": "tool.intent", "session": sid, "invocation": "b", "tool": "read_file",
                    "args": {"path": home + ("\\.ssh\\id_rsa" if windows else "/.ssh/id_rsa")}, "time": t % (i, 4)})
        out.append({"type": "tool.completed", "session": sid, "invocation": "b", "status": "denied",
                    "error": "denied: reads %s's keys" % user, "time": t % (i, 5)})
    return out, names


def run(args, **kw):
    return subprocess.run(args, check=True, capture_output=True, **kw)


def main():
    docket = os.path.realpath(sys.argv[1])
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else int(os.environ.get("PSEUDO_SEED", "29"))
    rng = random.Random(seed)
    evs, names = events(rng)
    with tempfile.TemporaryDirectory() as d:
        led = os.path.join(d, "L")
        with open(os.path.join(d, "in.jsonl"), "w") as f:
            f.write("".join(json.dumps(e) + "\n" for e in evs))
        with open(os.path.join(d, "k"), "w") as f:
            f.write("%064x\n" % rng.getrandbits(256))
        run([docket, "-L", led, "init"])
        run([docket, "-L", led, "record", os.path.join(d, "in.jsonl")])
        outputs = {}
        for fmt in ("jsonl", "ocsf", "otel", "csv"):
            outputs[fmt] = run([docket, "-L", led, "export", "-f", fmt, "--pseudonymize",
                                os.path.join(d, "k")]).stdout.decode()
        report = os.path.join(d, "r.html")
        run([docket, "-L", led, "report", "-o", report, "--pseudonymize", os.path.join(d, "k")])
        outputs["report"] = open(report, encoding="utf-8").read()
        # the control: without --pseudonymize every name is there
        plain = run([docket, "-L", led, "export", "-f", "jsonl"]).stdout.decode()
        missing = [n for n in names if n not in plain]
        if missing:
            print("FAIL: the control export lacks %s: the test does not test" % missing, file=sys.stderr)
            return 1
        leaks = []
        for fmt, text in outputs.items():
            text = html.unescape(text) if fmt == "report" else text
            for n in names:
                forms = {n, n.replace(" ", "-").replace(".", "-"), n.replace(" ", "\\u0020")}
                for form in forms:
                    if form in text:
                        at = text.index(form)
                        leaks.append("%s: %r left: ...%s..." % (fmt, form, text[max(0, at - 60):at + 40]))
        # one name, one pseudonym: HMAC-SHA-256(key, "user:" NAME), computed
        # here, is what every format shows for it
        key = bytes.fromhex(open(os.path.join(d, "k")).read().strip())
        for n in names:
            alias = "user-" + hmac.new(key, ("user:" + n).encode(), hashlib.sha256).hexdigest()[:16]
            for fmt in ("jsonl", "ocsf", "csv"):
                if alias not in outputs[fmt]:
                    leaks.append("%s: the pseudonym %s of %r is missing" % (fmt, alias, n))
        if leaks:
            print("FAIL (seed %d): %d leak(s)" % (seed, len(leaks)), file=sys.stderr)
            for l in leaks[:20]:
                print("  " + l, file=sys.stderr)
            return 1
        print("seed %d: %d names, 5 outputs, none left" % (seed, len(names)))
        return 0


if __name__ == "__main__":
    sys.exit(main())
