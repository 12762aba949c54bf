#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Damaged data files never crash docket (issue 11).

Builds the demo ledger (the fixture sessions), then damages copies of its
data.mdb, one damage per copy:

  - every STEP-th byte XORed with 0xff (a sweep over the whole file),
  - truncations to 0, 8, 16, 40 KiB, to every 4 KiB boundary and to a few
    odd sizes.

On each copy it runs verify and the read commands (log, log --json, show,
sessions, stats, pending, replay, export) and requires:

  - no command ends by a signal (status >= 128 in a shell, < 0 here);
  - verify exits 0 (the damage hit bytes nothing reads), 1 (a finding) or 3;
    a truncated file is always exit 1 and says "the data file is corrupt";
  - every other command exits 0 or 3 (or 2 for `show`, whose session may
    be what the damage erased); exit 3 always comes with a "docket:" message.

usage: corrupt_sweep.py DOCKET SOURCE_ROOT STEP [OFFSET0]
Prints one summary line; exit 1 with the first offending cases listed.
"""
import collections
import os
import shutil
import subprocess
import sys
import tempfile

docket, root, step = sys.argv[1], sys.argv[2], int(sys.argv[3])
offset0 = int(sys.argv[4]) if len(sys.argv) > 4 else 0
fixtures = os.path.join(root, "fixtures")
policy = os.path.join(fixtures, "policies", "team.yaml")

COMMANDS = [
    ["verify"],
    ["log"],
    ["log", "--json"],
    ["show", "demo-basic"],
    ["sessions", "--json"],
    ["stats"],
    ["pending"],
    ["replay", "--policy", policy],
    ["export", "--format", "jsonl"],
]
env = dict(os.environ, NO_COLOR="1", LC_ALL="C", TZ="UTC")
# Under AddressSanitizer a crash ends in abort(): the checks are the same.
env.setdefault("ASAN_OPTIONS", "detect_leaks=0")


def run(ledger, args):
    return subprocess.run([docket, "-L", ledger] + args, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, env=env, timeout=120)


def main():
    work = tempfile.mkdtemp(prefix="docket-corrupt-")
    try:
        base = os.path.join(work, "base")
        if run(base, ["init"]).returncode != 0:
            sys.exit("corrupt_sweep: docket init failed")
        for f in ("sessions/demo-basic.jsonl", "sessions/open-pending.jsonl"):
            if run(base, ["record", os.path.join(fixtures, f)]).returncode != 0:
                sys.exit("corrupt_sweep: cannot record " + f)
        with open(os.path.join(base, "data.mdb"), "rb") as fh:
            orig = fh.read()
        if run(base, ["verify"]).returncode != 0:
            sys.exit("corrupt_sweep: the undamaged ledger does not verify")

        damages = [("flip", off) for off in range(offset0, len(orig), step)]
        cuts = sorted({0, 100, 4095, 8 << 10, 16 << 10, 40 << 10, len(orig) - 1} |
                      set(range(4096, len(orig), 4096)))
        damages += [("cut", n) for n in cuts if n < len(orig)]

        ledger = os.path.join(work, "l")
        counts = collections.Counter()
        bad = []
        for kind, n in damages:
            data = bytearray(orig)
            if kind == "flip":
                data[n] ^= 0xFF
            else:
                del data[n:]
            shutil.rmtree(ledger, ignore_errors=True)
            os.mkdir(ledger, 0o700)
            with open(os.path.join(ledger, "data.mdb"), "wb") as fh:
                fh.write(data)
            for args in COMMANDS:
                p = run(ledger, args)
                rc = p.returncode
                err = p.stderr.decode(errors="replace")
                counts[(args[0], rc)] += 1
                ok = rc >= 0
                if args[0] == "verify":
                    ok = ok and rc in (0, 1, 3)
                    if kind == "cut":
                        ok = ok and rc == 1
                else:
                    ok = ok and (rc in (0, 3) or (args[0] == "show" and rc == 2))
                if rc == 3 and "docket:" not in err:
                    ok = False
                if not ok:
                    bad.append("%s %d: docket %s -> %d %s" % (kind, n, " ".join(args), rc,
                                                              err.strip()[-300:]))
        summary = ", ".join("%s exit %d: %d" % (c, rc, k) for (c, rc), k in sorted(counts.items()))
        print("corrupt_sweep: %d damaged copies of a %d-byte data file (%d flips every %d bytes, "
              "%d truncations), %d commands: %s" % (len(damages), len(orig),
                                                    sum(1 for d in damages if d[0] == "flip"), step,
                                                    len(cuts), sum(counts.values()), summary))
        if bad:
            print("corrupt_sweep: FAIL: %d command(s) crashed or gave the wrong exit:" % len(bad))
            for line in bad[:20]:
                print("  " + line)
            sys.exit(1)
    finally:
        shutil.rmtree(work, ignore_errors=True)


main()
