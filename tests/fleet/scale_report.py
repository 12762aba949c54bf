#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# scale_report.py TIMES CLI RUNS EVENTS MACHINES TEMPLATES SHIPPED REPLAYED T0..T5 NAME...
# (run by case_scale in tests/fleet/cases.sh, in its directory): checks
# that the fleet replay (fleet.json) has the templates' local totals
# (local<i>.json) each counted once per machine replayed (the first
# REPLAYED machines; machine m is a copy of template m % TEMPLATES), prints
# the scale test's one JSON line: ship rate, copy time, sizes (psql), each
# query's p50/p95, replay rates. Exit 1 when the totals differ.
import json
import os
import re
import subprocess
import sys

a = sys.argv
times = [float(x) for x in open(a[1])]
runs, total, machines, templates, shipped, replayed = map(int, a[3:9])
t0, t1, t2, t3, t4, t5 = map(float, a[9:15])
names = a[15:]


def pct(xs, p):
    xs = sorted(xs)
    return round(xs[min(len(xs) - 1, int(p * len(xs)))], 1)


def sql(q):
    return subprocess.run(["psql", "-X", "-tA", "-c", q], check=True, capture_output=True, text=True).stdout.strip()


weights = [len(range(i, replayed, templates)) for i in range(templates)]
want, got = {}, {}
for i in range(templates):
    for k, v in json.load(open("local%d.json" % i))["totals"].items():
        if isinstance(v, int):
            want[k] = want.get(k, 0) + v * weights[i]
dec, text, ws = json.JSONDecoder(), open("fleet.json").read(), re.compile(r"\s*")
pos = ws.match(text, 0).end()
while pos < len(text):   # one object per replay command
    obj, pos = dec.raw_decode(text, pos)
    pos = ws.match(text, pos).end()
    for k, v in obj["totals"].items():
        if isinstance(v, int):
            got[k] = got.get(k, 0) + v
if got != want:
    print("fleet replay totals %s, the local replays' %s" % (got, want), file=sys.stderr)
    sys.exit(1)
local_calls = sum(json.load(open("local%d.json" % i))["totals"]["calls"] for i in range(templates))

parts = "SELECT c.oid FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'docket_events'::regclass"
size = int(sql("SELECT sum(pg_total_relation_size(oid)) FROM (%s) p" % parts))
isize = int(sql("SELECT sum(pg_indexes_size(oid)) FROM (%s) p" % parts))
indexes = sql("SELECT string_agg(x.n || ' ' || x.b, ', ') FROM (SELECT regexp_replace(ic.relname, '^docket_events_[0-9]+_', '') AS n,"
              " round(sum(pg_relation_size(ic.oid)) / %d) AS b FROM pg_inherits i JOIN pg_index ix ON ix.indrelid = i.inhrelid"
              " JOIN pg_class ic ON ic.oid = ix.indexrelid WHERE i.inhparent = 'docket_events'::regclass GROUP BY 1 ORDER BY 1) x" % total)
out = {"scale": "fleet", "events": total, "machines": machines, "replayed_machines": replayed, "templates_shipped_events": shipped,
       "ship_events_per_s": round(shipped / (t1 - t0)), "copy_s": round(t2 - t1, 1),
       "bytes_per_event": round(size / total), "index_bytes_per_event": round(isize / total),
       "index_bytes_per_event_each": indexes}
for i, name in enumerate(names):
    xs = times[i * runs:(i + 1) * runs]
    out[name + "_ms"] = {"p50": pct(xs, 0.5), "p95": pct(xs, 0.95)}
cli = {}
for line in open(a[2]):
    k, v = line.split()
    cli.setdefault(k, []).append(float(v))
for k, xs in cli.items():
    out["cli_fleet_%s_ms" % k] = {"p50": pct(xs, 0.5), "p95": pct(xs, 0.95)}
local = local_calls / (t4 - t3)
fleet = got["calls"] / (t5 - t4)
out.update({"replay_calls": got["calls"], "fleet_replay_calls_per_s": round(fleet),
            "local_replay_calls_per_s": round(local), "fleet_vs_local": round(fleet / local, 3)})
print(json.dumps(out))
