#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The layering check must catch every planted violation (tests/layering/
planted: one of each kind), name the right file, and report nothing on the
planted tree's clean files."""
import subprocess
import sys

check, tree, build = sys.argv[1:4]
r = subprocess.run([sys.executable, check, "--tree", tree, "--build", build,
                    "--rules", f"{tree}/layers.txt"], capture_output=True, text=True)
lines = r.stdout.splitlines()
expected = [
    ("include:", "lib/low/low.c includes high/high.h"),
    ("include:", "lib/low/low2.c includes tool/tool.h"),
    ("private:", "lib/mid/mid.c includes high/high_internal.h"),
    ("symbol:", "low.c.o uses high_api of lib/high"),
    ("friend:", "mid.c.o calls high_private"),
    ("friend:", "mid2.c.o calls high_private"),
]
bad = 0
if r.returncode != 1:
    print(f"exit {r.returncode}, expected 1 (violations)\n{r.stdout}{r.stderr}")
    bad = 1
for kind, text in expected:
    if not any(l.startswith(kind) and text in l for l in lines):
        print(f"not caught: {kind} {text}")
        bad = 1
# nothing else: a line more would be a false report on a clean file
if len(lines) != len(expected):
    print(f"{len(lines)} lines reported, {len(expected)} expected:\n{r.stdout}")
    bad = 1
print("planted: every violation caught" if not bad else "planted: FAILED")
sys.exit(bad)
