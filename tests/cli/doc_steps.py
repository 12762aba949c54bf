#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Run a documentation example as written and compare its output.

usage: doc_steps.py DOCKET_BIN DOC NAME

In DOC, the example NAME is the first ```sh block after the line
`<!-- doc-test: NAME -->`, and its output the first ```text block after
that. The sh block runs with bash -e in a fresh directory that is also
HOME (so `docket init` and the default ledger stay there), with DOCKET_BIN's
directory first on PATH; stdout and stderr are merged. Times, uids and the
user's name differ between machines: both sides are masked the same way
(TIME, UID) before they are compared.
"""
import os
import re
import subprocess
import sys
import tempfile


def blocks(text, name):
    marker = "<!-- doc-test: %s -->" % name
    at = text.find(marker)
    if at < 0:
        sys.exit("no example %r in the document" % name)
    rest = text[at + len(marker):]
    sh = re.search(r"```sh\n(.*?)```", rest, re.S)
    out = re.search(r"```text\n(.*?)```", rest[sh.end():], re.S) if sh else None
    if not sh or not out:
        sys.exit("example %r needs a ```sh block and then a ```text block" % name)
    return sh.group(1), out.group(1)


def mask(s):
    s = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", "TIME", s)
    s = re.sub(r"uid \d+", "uid UID", s)
    s = re.sub(r'"uid":\d+', '"uid":UID', s)
    return s


def main():
    docket, doc, name = sys.argv[1:4]
    with open(doc, encoding="utf-8") as f:
        script, expected = blocks(f.read(), name)
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ)
        env.pop("DOCKET_LEDGER", None)
        env.update(HOME=d, LC_ALL="C", TZ="UTC", NO_COLOR="1",
                   PATH=os.path.dirname(os.path.abspath(docket)) + os.pathsep + env.get("PATH", ""))
        p = subprocess.run(["bash", "-e", "-c", script], cwd=d, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=120)
    got = p.stdout.decode("utf-8", "replace")
    if mask(got) != mask(expected) or p.returncode != 0:
        sys.stdout.write("%s: example %r, exit %d; expected:\n%s\ngot:\n%s\n" %
                         (doc, name, p.returncode, expected, got))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
