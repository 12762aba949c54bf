#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# bench_fleet.sh DOCKET SOURCE_ROOT [--quick]: the fleet against a local
# PostgreSQL server (tests/fleet/pg.sh), each figure beside its baseline in
# the same run:
#   ship    events/s of `docket ship` (binary COPY + the chain check at
#           ingest) vs a plain binary COPY of the same rows into the same
#           table (psql \copy, no check): ship_vs_copy
#   replay  calls/s of `docket replay --from` vs the local replay of the same
#           ledger (the outputs must be equal but for each row's ledger and
#           host): fleet_vs_local
#   fleet   50 machines shipping at once: total events/s and the server's
#           CPU seconds (postmaster and its exited backends, /proc), and
#           per event; the server's CPU per event of the one ship too
# With BENCH_FLEET_BEFORE=PATH (another docket binary, e.g. one built from
# the commit before a change), ship and replay are also run with it, into a
# database of its own schema, in the same run: *_before figures, and three
# rounds of the local, this and the other binary's replays alternated
# (replay_alternating_s, ratios of the medians: alternating_*).
# One JSON line on stdout. --quick: small sizes, checks only that every event
# arrived and the replays agree (nothing about speed).
set -uo pipefail
docket=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$(cd "$2" && pwd)
quick=0
[ "${3:-}" = "--quick" ] && quick=1
. "$root/tests/fleet/pg.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/docket-bench-fleet.XXXXXX")
pg_start
trap 'pg_cleanup; rm -rf "$work"' EXIT
cd "$work" || exit 99
if [ $quick -eq 1 ]; then sessions=60; machines=3; per=10; else sessions=${BENCH_FLEET_SESSIONS:-12000}; machines=50; per=120; fi
failures=0
check() { [ "$1" = "$2" ] || { echo "bench_fleet: $3: got '$1', want '$2'" >&2; failures=$((failures + 1)); }; }
now() { date +%s.%N; }
cpu() { awk '{ print $14 + $15 + $16 + $17 }' "/proc/$(head -1 "$PG_DIR/data/postmaster.pid")/stat"; }
held() { pg_sql -c "SELECT count(*) FROM docket_events WHERE ledger_id = '$1'"; }
id_of() { "$docket" -L "$1" stats --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["ledger_id"])'; }

"$docket" fleet init --db "$PG_URL" >/dev/null || exit 99
before=${BENCH_FLEET_BEFORE:-}
before_url="postgresql:///before?host=$PG_DIR&user=docket_admin"
if [ -n "$before" ]; then
	pg_sql -c "CREATE DATABASE before" && "$before" fleet init --db "$before_url" >/dev/null || exit 99
fi
python3 "$root/tests/fleet/gen.py" big "$sessions" >big.jsonl
"$docket" -L big init >/dev/null && "$docket" -L big record big.jsonl >/dev/null || exit 99
n=$(wc -l <big.jsonl)
id=$(id_of big)

# ship, then the same rows again by plain COPY under another ledger id
# (the server's CPU of each: its backend has exited when cpu() reads it)
settle() { sleep 1; }
cs0=$(cpu)
t0=$(now)
"$docket" -L big ship --to "$PG_URL" --batch 5000 >/dev/null || exit 99
t1=$(now)
settle
cs1=$(cpu)
check "$(held "$id")" "$n" "events shipped"
tb0=$(now)
[ -z "$before" ] || "$before" -L big ship --to "$before_url" --batch 5000 >/dev/null || exit 99
tb1=$(now)
settle
cs2=$(cpu)
pg_sql -c "COPY (SELECT 'ffffffffffffffffffffffffffffffff', seq, time, type, session, invocation, tool, verdict,
	status, actor, policy_revision, event, payload, hash FROM docket_events WHERE ledger_id = '$id' ORDER BY seq)
	TO STDOUT (FORMAT binary)" >rows.bin
t2=$(now)
pg_sql -c "\\copy docket_events FROM 'rows.bin' (FORMAT binary)" || exit 99
t3=$(now)
check "$(held ffffffffffffffffffffffffffffffff)" "$n" "events copied"
pg_sql -c "DELETE FROM docket_events WHERE ledger_id = 'ffffffffffffffffffffffffffffffff'"

# replay: local, then from the database (one ledger: the outputs are equal)
policy=$root/fixtures/replay/strict.yaml
t4=$(now)
"$docket" -L big replay --policy "$policy" --format json >local.json
t5=$(now)
"$docket" replay --from "$PG_URL" --host "$(hostname)" --policy "$policy" --format json >fleet.json
t6=$(now)
python3 - local.json fleet.json "$id" "$(hostname)" <<'PY'
import json, sys
local, fleet = (json.load(open(x)) for x in sys.argv[1:3])
for part in ("changes", "undecided"):
    for c in local[part]:
        c["ledger"], c["host"] = sys.argv[3], sys.argv[4]
for s in local.get("sessions", []):   # the sessions the fleet names with their host
    s["host"] = sys.argv[4]
sys.exit(0 if local == fleet else 1)
PY
check $? 0 "fleet replay is the local replay (its rows plus ledger and host)"
tb2=$(now)
if [ -n "$before" ]; then
	"$before" replay --from "$before_url" --host "$(hostname)" --policy "$policy" --format json >before.json
	cmp -s before.json fleet.json
	check $? 0 "the replays before and after are the same"
fi
tb3=$(now)
# with a second binary: local, after and before replays alternated, three
# rounds (the load drifts between one-after-the-other runs)
: >rounds
if [ -n "$before" ] && [ $quick -eq 0 ]; then
	for _ in 1 2 3; do
		s=$(now); "$docket" -L big replay --policy "$policy" --format json >/dev/null; echo "local $s $(now)" >>rounds
		s=$(now); "$docket" replay --from "$PG_URL" --host "$(hostname)" --policy "$policy" --format json >/dev/null
		echo "after $s $(now)" >>rounds
		s=$(now); "$before" replay --from "$before_url" --host "$(hostname)" --policy "$policy" --format json >/dev/null
		echo "before $s $(now)" >>rounds
	done
fi
calls=$(python3 -c 'import json; print(json.load(open("local.json"))["totals"]["calls"])')

# many machines at once
for m in $(seq 1 "$machines"); do
	python3 "$root/tests/fleet/gen.py" "m$m" "$per" >"m$m.jsonl"
	"$docket" -L "m$m" init >/dev/null && "$docket" -L "m$m" record "m$m.jsonl" >/dev/null || exit 99
done
total=$(cat m*.jsonl | wc -l)
c0=$(cpu)
t7=$(now)
for m in $(seq 1 "$machines"); do
	"$docket" -L "m$m" ship --to "$PG_URL" --host "m$m" --batch 1000 >/dev/null &
done
wait
t8=$(now)
c1=$(cpu)
check "$(pg_sql -c "SELECT count(*) FROM docket_events e JOIN docket_ledgers l USING (ledger_id) WHERE l.host LIKE 'm%'")" \
	"$total" "events of $machines machines"

python3 - "$n" "$calls" "$total" "$machines" "$t0" "$t1" "$t2" "$t3" "$t4" "$t5" "$t6" "$t7" "$t8" "$c0" "$c1" \
	"$failures" "$quick" "$tb0" "$tb1" "$tb2" "$tb3" "$before" "$cs0" "$cs1" "$cs2" <<'PY'
import json, os, sys
n, calls, total, machines = map(int, sys.argv[1:5])
t = list(map(float, sys.argv[5:14]))
c0, c1 = float(sys.argv[14]), float(sys.argv[15])
failures, quick = int(sys.argv[16]), sys.argv[17] == "1"
tb = list(map(float, sys.argv[18:22]))
cs = list(map(float, sys.argv[23:26]))
ship, copy = n / (t[1] - t[0]), n / (t[3] - t[2])
local, fleet = calls / (t[5] - t[4]), calls / (t[6] - t[5])
hz = os.sysconf("SC_CLK_TCK")
out = {"bench": "fleet", "quick": quick, "events": n,
       "ship_events_per_s": round(ship), "copy_events_per_s": round(copy), "ship_vs_copy": round(ship / copy, 3),
       "replay_calls": calls, "local_replay_calls_per_s": round(local), "fleet_replay_calls_per_s": round(fleet),
       "fleet_vs_local": round(fleet / local, 3),
       "ship_server_cpu_us_per_event": round((cs[1] - cs[0]) / hz / n * 1e6, 1),
       "machines": machines, "machines_events": total, "machines_events_per_s": round(total / (t[8] - t[7])),
       "server_cpu_s": round((c1 - c0) / hz, 2), "wall_s": round(t[8] - t[7], 2),
       "server_cpu_us_per_event": round((c1 - c0) / hz / total * 1e6, 1),
       "checks_ok": failures == 0}
if sys.argv[22]:
    ship_b, fleet_b = n / (tb[1] - tb[0]), calls / (tb[3] - tb[2])
    out.update({"before": sys.argv[22], "ship_before_events_per_s": round(ship_b),
                "ship_before_vs_copy": round(ship_b / copy, 3), "ship_vs_before": round(ship / ship_b, 3),
                "ship_before_server_cpu_us_per_event": round((cs[2] - cs[1]) / hz / n * 1e6, 1),
                "fleet_before_replay_calls_per_s": round(fleet_b), "fleet_before_vs_local": round(fleet_b / local, 3),
                "fleet_replay_vs_before": round(fleet / fleet_b, 3)})
rounds = {}
for line in open("rounds"):
    k, a, b = line.split()
    rounds.setdefault(k, []).append(float(b) - float(a))
if rounds:
    med = {k: sorted(v)[len(v) // 2] for k, v in rounds.items()}
    out["replay_alternating_s"] = {k: [round(x, 2) for x in v] for k, v in rounds.items()}
    out.update({"alternating_fleet_vs_local": round(med["local"] / med["after"], 3),
                "alternating_before_vs_local": round(med["local"] / med["before"], 3),
                "alternating_after_vs_before": round(med["before"] / med["after"], 3)})
print(json.dumps(out))
sys.exit(0 if failures == 0 else 1)
PY
