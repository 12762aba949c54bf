# SPDX-License-Identifier: Apache-2.0
"""man_test: `man docket-COMMAND` says what `docket help COMMAND` says.

    man_test.py DOCKET_BIN SOURCE_ROOT

For each page in man/: `docket help COMMAND` must equal `docket COMMAND
--help` (the text the page is generated from), and the page as man(1)
renders it must hold the same words in the same order, laid out as
scripts/gen-man.py promises: NAME (the command table's summary), SYNOPSIS
(the usage lines), DESCRIPTION, one upper-case section per "name:" block,
SEE ALSO. A tampered page must fail the same comparison. Exit 77 (skip)
when man(1) is not installed.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

ENV = dict(os.environ, NO_COLOR="1", LC_ALL="C", MANWIDTH="100", MAN_KEEP_FORMATTING="")


def run(*args):
    return subprocess.run(args, check=True, capture_output=True, text=True, env=ENV).stdout


def summaries(docket):
    """{command: summary} from the commands: block of `docket --help`."""
    out, on = {}, False
    for line in run(docket, "--help").split("\n"):
        if line == "commands:":
            on = True
        elif on and not line.strip():
            break
        elif on:
            name, text = line.split(None, 1)
            out[name] = text.strip()
    return out


def expected_words(name, summary, help_text, see_also):
    lines = help_text.rstrip("\n").split("\n")
    words = ["NAME", name, "-"] + summary.split() + ["SYNOPSIS"]
    words += lines[0].split()[1:]          # "usage:" is the SYNOPSIS heading
    i = 1
    while i < len(lines) and lines[i].startswith("       "):
        words += lines[i].split()
        i += 1
    words.append("DESCRIPTION")
    for line in lines[i:]:
        if re.match(r"^[a-z][a-z ]*:$", line):
            words += line[:-1].upper().split()
        else:
            words += line.split()
    if see_also:
        words += ["SEE", "ALSO"] + [f"{s}(1)," for s in see_also[:-1]] + [f"{see_also[-1]}(1)"]
    return words


def rendered_words(page):
    lines = [l for l in run("man", "-l", page).split("\n") if l.strip()]
    return " ".join(lines[1:-1]).split()   # without the header and footer lines


def compare(page, want):
    got = rendered_words(page)
    if got == want:
        return None
    n = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
    return (f"{os.path.basename(page)} differs from the help text at word {n}: "
            f"man has {' '.join(got[n:n + 6])!r}, help has {' '.join(want[n:n + 6])!r}")


def main():
    docket, src = sys.argv[1:3]
    if not shutil.which("man"):
        print("man_test: SKIP: man(1) is not installed")
        return 77
    table = summaries(docket)
    pages = sorted(p for p in os.listdir(os.path.join(src, "man")) if p.endswith(".1"))
    problems = []
    cmds = [p[len("docket-"):-2] for p in pages if p.startswith("docket-")]
    if sorted(cmds) != sorted(c for c in table if c != "help"):
        problems.append(f"man/ has pages for {sorted(cmds)}, docket --help lists {sorted(table)}")
    wants = {}
    for p in pages:
        if p == "docket.1":
            via_help, help_text = run(docket, "help"), run(docket, "--help")
            name = "docket"
            summary = help_text.split("\n\n")[1].split("\n")[0]
            see = [f"docket-{c}" for c in table if c != "help"]
        else:
            cmd = p[len("docket-"):-2]
            via_help, help_text = run(docket, "help", cmd), run(docket, cmd, "--help")
            name, summary, see = f"docket-{cmd}", table.get(cmd, "?"), ["docket"]
        if via_help != help_text:
            problems.append(f"`docket help {name}` differs from its --help")
        wants[p] = expected_words(name, summary, help_text, see)
        why = compare(os.path.join(src, "man", p), wants[p])
        if why:
            problems.append(why)
    # the comparison must be able to fail: one changed word in a copy
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(src, "man", "docket-init.1")) as f:
            text = f.read()
        bad = os.path.join(tmp, "docket-init.1")
        with open(bad, "w") as f:
            f.write(text.replace("create a ledger", "create a ledgr", 1))
        if compare(bad, wants["docket-init.1"]) is None:
            problems.append("a page with a changed word still compares equal")
    for p in problems:
        print("man_test: FAIL: " + p, file=sys.stderr)
    if problems:
        return 1
    print(f"man_test: ok: {len(pages)} pages say what docket help says")
    return 0


if __name__ == "__main__":
    sys.exit(main())
