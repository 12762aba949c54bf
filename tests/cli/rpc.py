#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Drive `docket serve --stdio` with the JSON-RPC requests on stdin.

usage: rpc.py split|merged COMMAND...

split:  one request at a time, each after the previous reply (every request
        in a batch of its own);
merged: every request written at once (the server takes them as one batch,
        except where a barrier method ends it).
Prints one line per reply: the id, then "ok" with the result's seq,
revision, verdict, dispatched, attempt and duplicate, or "error" with the
JSON-RPC code and data.kind.
"""
import json
import select
import subprocess
import sys


def show(reply):
    rid = reply.get("id")
    if "error" in reply:
        e = reply["error"]
        kind = (e.get("data") or {}).get("kind", "-")
        return "id=%s error %s %s" % (rid, e.get("code"), kind)
    r = reply.get("result", {})
    keys = ["seq", "epoch", "revision", "verdict", "dispatched", "attempt", "duplicate"]
    parts = ["%s=%s" % (k, json.dumps(r[k])) for k in keys if k in r]
    return "id=%s ok %s" % (rid, " ".join(parts))


def main():
    mode, cmd = sys.argv[1], sys.argv[2:]
    lines = [l for l in sys.stdin.read().splitlines() if l.strip()]
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    out = []
    if mode == "merged":
        data, _ = p.communicate("".join(l + "\n" for l in lines), timeout=60)
        out = data.splitlines()
    else:
        for l in lines:
            p.stdin.write(l + "\n")
            p.stdin.flush()
            # a notification gets no reply: wait a little, then go on
            ready, _, _ = select.select([p.stdout], [], [], 0.5 if '"id"' not in l else 30)
            if ready:
                out.append(p.stdout.readline().rstrip("\n"))
        p.stdin.close()
        out += p.stdout.read().splitlines()
        p.wait(timeout=60)
    for o in out:
        print(show(json.loads(o)))
    return p.returncode


if __name__ == "__main__":
    sys.exit(main())
