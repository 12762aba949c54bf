# SPDX-License-Identifier: Apache-2.0
# The fleet test cases (sourced by run.sh, which provides docket, pg_sql,
# expect_exit, ledger, shipper_role, url_as, events_held, ledger_id).

# ship from empty; again (nothing new); the chain recomputed independently
# (Python's hashlib over the stored payloads) equals the local hashes;
# fleet log --json is the local log plus ledger and host; fleet verify ok
case_ship_empty() {
	ledger A "$FIXTURES/sessions/demo-basic.jsonl"
	local id
	id=$(ledger_id A)
	expect_exit 0 docket -L A ship --to "$PG_URL" --host m1
	grep -q "shipped 24 events" out || fail "first ship: $(cat out)"
	[ "$(events_held "$id")" = "24 24 24" ] || fail "held: $(events_held "$id")"
	expect_exit 0 docket -L A ship --to "$PG_URL" --host m1 --json
	grep -q '"shipped":0,"high_seq":24' out || fail "second ship: $(cat out)"
	docket -L A log --json >local.jsonl
	pg_sql -c "SELECT seq || ' ' || encode(payload, 'hex') FROM docket_events WHERE ledger_id = '$id' ORDER BY seq" >payloads
	python3 - local.jsonl payloads <<'PY' || fail "chain recomputed from the stored payloads differs"
import hashlib, json, sys
local = [json.loads(l)["hash"] for l in open(sys.argv[1])]
h = bytes(32)
for i, line in enumerate(open(sys.argv[2])):
    seq, hexp = line.split()
    h = hashlib.sha256(h + int(seq).to_bytes(8, "big") + bytes.fromhex(hexp)).digest()
    assert h.hex() == local[i], (seq, h.hex(), local[i])
assert i + 1 == len(local)
PY
	expect_exit 0 docket fleet log --db "$PG_URL" --json
	python3 - local.jsonl out "$id" <<'PY' || fail "fleet log --json is not the local log plus ledger and host"
import sys
local = open(sys.argv[1]).read().splitlines()
fleet = open(sys.argv[2]).read().splitlines()
tail = ',"ledger":"%s","host":"m1"}' % sys.argv[3]
assert len(local) == len(fleet), (len(local), len(fleet))
for a, b in zip(local, fleet):
    assert b == a[:-1] + tail, (a, b)
PY
	# the table is the local one with a HOST column first ("HOST" + 2 spaces)
	docket -L A log >local.txt
	expect_exit 0 docket fleet log --db "$PG_URL"
	diff <(cut -c7- out) local.txt >&2 || fail "fleet log is not the local log with a host column"
	[ "$(cut -c1-6 out | sort -u | tr '\n' ,)" = "HOST  ,m1    ," ] || fail "host column: $(head -3 out)"
	expect_exit 0 docket fleet verify --db "$PG_URL"
	grep -q "ok $id (m1): 24 events" out || fail "verify: $(cat out)"
	# an empty ledger ships nothing and registers nothing
	ledger E
	expect_exit 0 docket -L E ship --to "$PG_URL"
	[ "$(pg_sql -c 'SELECT count(*) FROM docket_ledgers')" = 1 ] || fail "empty ledger registered"
}

# SIGKILL of ship at random points, then resume: no gap, no duplicate
case_kill_resume() {
	python3 "$GEN" k 30 >k.jsonl
	ledger A k.jsonl
	local id n trials=${FLEET_TRIALS:-2} t k kills=0 pid rc
	id=$(ledger_id A)
	n=$(docket -L A stats --json | jq -r .events)
	for t in $(seq 1 "$trials"); do
		pg_sql -c "DELETE FROM docket_events WHERE ledger_id = '$id'; DELETE FROM docket_ledgers WHERE ledger_id = '$id'; DELETE FROM docket_calls WHERE ledger_id = '$id'"
		# up to 4 kills at random points, then a run that may finish
		for k in 1 2 3 4 5; do
			"$docket_bin" -L A ship --to "$PG_URL" --batch 23 >/dev/null 2>err &
			pid=$!
			if [ $k -lt 5 ]; then
				sleep "0.$(printf '%03d' $((RANDOM % 400)))"
				kill -9 "$pid" 2>/dev/null && kills=$((kills + 1))
			fi
			wait "$pid"
			rc=$?
			[ $rc -eq 0 ] && break
			[ $rc -eq 137 ] || { cat err >&2; fail "ship exited $rc"; }
			# each partial state is a prefix: 1..high without gaps
			read -r c d m <<<"$(events_held "$id")"
			[ "$c" = "$d" ] && [ "$d" = "$m" ] || fail "after a kill: held $c rows, $d seqs, max $m"
		done
		[ $rc -eq 0 ] || fail "trial $t: the last ship exited $rc"
		[ "$(events_held "$id")" = "$n $n $n" ] || fail "trial $t: held $(events_held "$id"), want $n"
	done
	expect_exit 0 docket fleet verify --db "$PG_URL"
	echo "kill_resume: $trials trials, $kills kills, $n events each"
}

# a ledger rewritten after it was shipped is refused at ingest: exit 1, an
# incident, nothing merged (both a longer and a same-length rewrite)
case_rewritten() {
	ledger A "$FIXTURES/sessions/demo-basic.jsonl"
	cp -a A B
	cp -a A C
	local id
	id=$(ledger_id A)
	docket -L A record "$FIXTURES/replay/sessions.jsonl" >/dev/null || exit 99
	expect_exit 0 docket -L A ship --to "$PG_URL" --host m1
	python3 "$GEN" r 3 >r.jsonl
	docket -L B record r.jsonl >/dev/null || exit 99
	expect_exit 1 docket -L B ship --to "$PG_URL" --host m1
	grep -q "REFUSED" out || fail "no refusal: $(cat out)"
	[ "$(events_held "$id")" = "66 66 66" ] || fail "merged: $(events_held "$id")"
	[ "$(pg_sql -c "SELECT kind || ' ' || seq FROM docket_incidents WHERE ledger_id = '$id'")" = "rewritten 66" ] ||
		fail "incident: $(pg_sql -c 'SELECT * FROM docket_incidents')"
	# same length, other content: caught by the anchor
	printf '%s\n' '{"type":"session.opened","session":"x","cwd":"/a","time":"2025-03-14T10:00:00Z"}' >x1.jsonl
	printf '%s\n' '{"type":"session.opened","session":"x","cwd":"/b","time":"2025-03-14T10:00:00Z"}' >x2.jsonl
	cp -a C D
	docket -L C record x1.jsonl >/dev/null && docket -L D record x2.jsonl >/dev/null || exit 99
	pg_sql -c "DELETE FROM docket_events WHERE ledger_id = '$id'; DELETE FROM docket_ledgers WHERE ledger_id = '$id'; DELETE FROM docket_calls WHERE ledger_id = '$id'"
	expect_exit 0 docket -L C ship --to "$PG_URL"
	expect_exit 1 docket -L D ship --to "$PG_URL"
	grep -q "rewritten" out || fail "same-length rewrite: $(cat out)"
	[ "$(events_held "$id")" = "25 25 25" ] || fail "merged: $(events_held "$id")"
	# a ledger behind the server (restored from an old copy) is refused too
	expect_exit 1 docket -L B ship --to "$PG_URL"
}

# the shipping role may ship its own ledgers only and change nothing
case_forged() {
	shipper_role ma pwa
	shipper_role mb pwb
	ledger A "$FIXTURES/sessions/demo-basic.jsonl"
	cp -a A B
	local id
	id=$(ledger_id A)
	expect_exit 0 docket -L A ship --to "$(url_as ma pwa)" --host a
	docket -L B record "$FIXTURES/replay/sessions.jsonl" >/dev/null || exit 99
	expect_exit 1 docket -L B ship --to "$(url_as mb pwb)" --host b
	grep -q "may not ship ledger" out || fail "forged batch: $(cat out)"
	[ "$(events_held "$id")" = "24 24 24" ] || fail "merged: $(events_held "$id")"
	[ "$(pg_sql -c "SELECT kind || ' ' || role FROM docket_incidents")" = "foreign_ledger mb" ] ||
		fail "incident: $(pg_sql -c 'SELECT * FROM docket_incidents')"
	local sql
	for sql in "INSERT INTO docket_events (ledger_id, seq, time, type, event, payload, hash) VALUES ('$id', 25, now(), 'x', '{}', '', '')" \
		"UPDATE docket_ledgers SET high_seq = 0" "DELETE FROM docket_events" "UPDATE docket_events SET type = 'x'" \
		"DELETE FROM docket_incidents" "INSERT INTO docket_incidents (ledger_id, kind, detail) VALUES ('$id', 'x', 'y')" \
		"SELECT docket_partition_for(now())" "SELECT * FROM docket_calls" "UPDATE docket_calls SET requests = 0" \
		"INSERT INTO docket_calls (ledger_id, session, invocation, requests, dispatched, for_session) VALUES ('$id', 's', 'c', 9, true, false)"; do
		PGPASSWORD=pwb pg_sql -U mb -c "$sql" >out 2>err && fail "mb could run: $sql"
		grep -q "permission denied" err || fail "$sql: $(cat err)"
	done
	# the batch table cannot be a view that would run mb's code with the
	# ingest function's rights
	PGPASSWORD=pwb pg_sql -U mb -c "CREATE TEMP VIEW docket_batch AS SELECT (NULL::docket_batch_row).*;
		SELECT * FROM docket_ingest('$id', 'b', 1)" >out 2>err && fail "ingest read a view"
	grep -q "must be a temporary table OF docket_batch_row" err || fail "view as batch: $(cat err)"
	[ "$(PGPASSWORD=pwb pg_sql -U mb -c 'SELECT count(*) FROM docket_ledgers')" = 0 ] || fail "mb sees ledgers of ma"
	[ "$(PGPASSWORD=pwa pg_sql -U ma -c 'SELECT count(*) FROM docket_ledgers')" = 1 ] || fail "ma cannot see its ledger"
	# checkpoints of someone else's ledger are refused by the role too
	docket keygen --output k >/dev/null 2>&1 && docket -L B checkpoint --key k >/dev/null || exit 99
	expect_exit 1 docket -L B ship --to "$(url_as mb pwb)"
}

# two machines at once
case_two_machines() {
	python3 "$GEN" a 40 >a.jsonl
	python3 "$GEN" b 40 2025-06-01 >b.jsonl
	ledger A a.jsonl
	ledger B b.jsonl
	"$docket_bin" -L A ship --to "$PG_URL" --host a --batch 50 >a.out 2>&1 &
	local pa=$! pb
	"$docket_bin" -L B ship --to "$PG_URL" --host b --batch 50 >b.out 2>&1 &
	pb=$!
	wait $pa || { cat a.out; fail "ship a"; }
	wait $pb || { cat b.out; fail "ship b"; }
	local n
	n=$(wc -l <a.jsonl)
	[ "$(events_held "$(ledger_id A)")" = "$n $n $n" ] || fail "a: $(events_held "$(ledger_id A)")"
	n=$(wc -l <b.jsonl)
	[ "$(events_held "$(ledger_id B)")" = "$n $n $n" ] || fail "b: $(events_held "$(ledger_id B)")"
	[ "$(pg_sql -c "SELECT count(*) FROM pg_tables WHERE tablename LIKE 'docket_events_2025%'")" = 2 ] ||
		fail "partitions: $(pg_sql -c "SELECT tablename FROM pg_tables WHERE tablename LIKE 'docket_events_%'")"
	expect_exit 0 docket fleet verify --db "$PG_URL" --host b
	[ "$(grep -c '^ok' out)" = 1 ] || fail "verify --host b: $(cat out)"
}

# bad connection strings, unreachable servers, wrong passwords, no schema
case_bad_connections() {
	ledger A "$FIXTURES/sessions/demo-basic.jsonl"
	shipper_role ma pwa
	expect_exit 2 docket -L A ship --to "host=/tmp port"
	grep -q "bad connection string" err || fail "$(cat err)"
	expect_exit 2 docket -L A ship --to "postgresql://%zz"
	grep -q "bad connection string" err || fail "$(cat err)"
	expect_exit 2 docket fleet verify --db "nonsense"
	expect_exit 2 docket replay --policy "$FIXTURES/replay/base.yaml" --from "a=b=c d"
	expect_exit 3 docket -L A ship --to "$(url_as ma wrong)"
	grep -q "password authentication failed" err || fail "$(cat err)"
	expect_exit 3 docket -L A ship --to "postgresql:///postgres?host=$PWD/nowhere"
	grep -q "cannot connect to the fleet database" err || fail "$(cat err)"
	pg_sql -c "CREATE DATABASE bare"
	expect_exit 3 docket -L A ship --to "postgresql:///bare?host=$PG_DIR&user=docket_admin"
	grep -q "no docket schema" err || fail "$(cat err)"
	expect_exit 2 docket replay --policy "$FIXTURES/replay/base.yaml" --host x
}

# ship --follow: ships as the ledger grows, survives a server restart
case_follow_restart() {
	ledger A "$FIXTURES/sessions/demo-basic.jsonl"
	local id pid n rc
	id=$(ledger_id A)
	"$docket_bin" -L A ship --follow --to "$PG_URL" >follow.out 2>follow.err &
	pid=$!
	wait_held "$id" 24
	docket -L A record "$FIXTURES/replay/sessions.jsonl" >/dev/null || exit 99
	wait_held "$id" 66
	pg_restart
	python3 "$GEN" f 5 >f.jsonl
	docket -L A record f.jsonl >/dev/null || exit 99
	n=$((66 + $(wc -l <f.jsonl)))
	wait_held "$id" "$n"
	kill -TERM $pid
	wait $pid
	rc=$?
	[ $rc -eq 0 ] || { cat follow.out follow.err; fail "follow exited $rc"; }
	[ "$(events_held "$id")" = "$n $n $n" ] || fail "held $(events_held "$id")"
	grep -q "retrying" follow.err || fail "no reconnect seen: $(cat follow.err)"
}

wait_held() {
	local i=0
	while [ "$(pg_sql -c "SELECT coalesce(max(high_seq), 0) FROM docket_ledgers WHERE ledger_id = '$1'" 2>/dev/null)" != "$2" ]; do
		i=$((i + 1))
		[ $i -gt 300 ] && fail "the server did not reach seq $2"
		sleep 0.1
	done
}

# fleet verify catches a payload changed on the server; checkpoints ship
case_verify_tamper() {
	ledger A "$FIXTURES/sessions/demo-basic.jsonl"
	docket keygen --output k >/dev/null 2>&1 && docket -L A checkpoint --key k >/dev/null || exit 99
	expect_exit 0 docket -L A ship --to "$PG_URL"
	grep -q "and 1 checkpoint" out || fail "$(cat out)"
	expect_exit 0 docket fleet verify --db "$PG_URL" --json
	grep -q '"checkpoints_checked":1' out || fail "$(cat out)"
	expect_exit 0 docket fleet verify --db "$PG_URL" --pubkey k.pub
	docket keygen --output other >/dev/null 2>&1 || exit 99
	expect_exit 1 docket fleet verify --db "$PG_URL" --pubkey other.pub
	grep -q "checkpoint 1 is signed by another key" out || fail "$(cat out)"
	expect_exit 2 docket fleet verify --db "$PG_URL" --pubkey nowhere.pub
	pg_sql -c "UPDATE docket_checkpoints SET record = jsonb_set(record, '{signature}', to_jsonb(repeat('0', 128)))"
	expect_exit 1 docket fleet verify --db "$PG_URL" --pubkey k.pub
	grep -q "checkpoint 1: its record does not parse\|signature does not verify" out || fail "$(cat out)"
	pg_sql -c "UPDATE docket_events SET payload = payload || '\\x00'::bytea WHERE seq = 5"
	expect_exit 1 docket fleet verify --db "$PG_URL"
	grep -q "at seq 5: event 5: the chain recomputed" out || fail "$(cat out)"
	pg_sql -c "UPDATE docket_events SET payload = substring(payload from 1 for length(payload) - 1) WHERE seq = 5"
	expect_exit 0 docket fleet verify --db "$PG_URL"
	pg_sql -c "UPDATE docket_events SET session = 'other' WHERE seq = 5"
	expect_exit 1 docket fleet verify --db "$PG_URL"
	grep -q "event 5: column session is not what its payload says" out || fail "$(cat out)"
}

# fleet replay equals the union of the machines' local replays
case_replay_union() {
	python3 "$GEN" u 3 >u.jsonl
	ledger A "$FIXTURES/replay/sessions.jsonl"
	ledger B "$FIXTURES/sessions/demo-basic.jsonl" u.jsonl
	expect_exit 0 docket -L A ship --to "$PG_URL" --host a
	expect_exit 0 docket -L B ship --to "$PG_URL" --host b
	local p rc_a rc_b rc_f ida idb
	ida=$(ledger_id A)
	idb=$(ledger_id B)
	for p in strict.yaml loose.yaml base.yaml; do
		docket -L A replay --policy "$FIXTURES/replay/$p" --format json --fail-on loosened >a.json; rc_a=$?
		docket -L B replay --policy "$FIXTURES/replay/$p" --format json --fail-on loosened >b.json; rc_b=$?
		docket replay --from "$PG_URL" --policy "$FIXTURES/replay/$p" --format json --fail-on loosened >f.json; rc_f=$?
		[ $rc_f -eq $(( rc_a > rc_b ? rc_a : rc_b )) ] || fail "$p: exit $rc_f, local $rc_a and $rc_b"
		python3 - a.json b.json f.json "$ida" "$idb" <<'PY' || fail "$p: fleet replay is not the union of the local ones"
import json, sys
a, b, f = (json.load(open(x)) for x in sys.argv[1:4])
# the fleet's rows are the local ones plus the ledger id and the host
for rows, ledger, host in ((a, sys.argv[4], "a"), (b, sys.argv[5], "b")):
    for part in ("changes", "undecided"):
        for c in rows[part]:
            assert "ledger" not in c and "host" not in c, c
            c["ledger"], c["host"] = ledger, host
for k in f["totals"]:
    assert f["totals"][k] == a["totals"][k] + b["totals"][k], k
def tr(r):
    return {(t["was"], t["now"], t["class"]): t["calls"] for t in r["transitions"]}
ta, tb = tr(a), tr(b)
union = {k: ta.get(k, 0) + tb.get(k, 0) for k in set(ta) | set(tb)}
assert tr(f) == union, (tr(f), union)
key = lambda c: json.dumps(c, sort_keys=True)
for part in ("changes", "undecided"):
    assert sorted(map(key, f[part])) == sorted(map(key, a[part] + b[part])), part
assert f["totals"]["calls"] > 0
assert f["changes"] or f["undecided"]
PY
	done
	# one session: what its calls' records and events give is the local replay of that session
	local s
	for s in s-codex s-import s-win; do
		docket -L A replay --session "$s" --policy "$FIXTURES/replay/strict.yaml" --format json >s.json
		expect_exit 0 docket replay --from "$PG_URL" --host a --session "$s" --policy "$FIXTURES/replay/strict.yaml" \
			--format json
		python3 - s.json out "$ida" <<'PY' || fail "session $s: fleet replay is not the local one: $(cat out)"
import json, sys
a, f = (json.load(open(x)) for x in sys.argv[1:3])
for part in ("changes", "undecided"):
    for c in a[part]:
        c["ledger"], c["host"] = sys.argv[3], "a"
for x in a.get("sessions", []):
    x["host"] = "a"
assert a["totals"]["calls"] > 0 and a == f, (a, f)
PY
	done
	# the table names each call's session host/session
	docket -L A replay --policy "$FIXTURES/replay/strict.yaml" >a.txt
	expect_exit 0 docket replay --from "$PG_URL" --host a --policy "$FIXTURES/replay/strict.yaml"
	grep -q "^a/" out || fail "no host/session in the table: $(cat out)"
	diff <(sed 's|^a/||' out | tr -s ' ') <(tr -s ' ' <a.txt) >&2 ||
		fail "the fleet table is not the local one with host/ before the sessions"
	# the same formats: a table and junit come out too; filters select
	expect_exit 0 docket replay --from "$PG_URL" --policy "$FIXTURES/replay/base.yaml" --host a --format json
	python3 -c 'import json,sys; t=json.load(open("out"))["totals"]; a=json.load(open("a.json"))["totals"]; assert t==a, (t,a)' ||
		fail "--host a is not machine a's replay"
	expect_exit 0 docket replay --from "$PG_URL" --policy "$FIXTURES/replay/base.yaml" --format junit
}

# fleet sessions and pending: the local rows plus ledger and host, machine
# by machine (differential: the local projections against the central
# aggregates), with the filters
case_sessions_pending() {
	ledger A "$FIXTURES/sessions/open-pending.jsonl" "$FIXTURES/replay/sessions.jsonl"
	ledger B "$FIXTURES/sessions/demo-basic.jsonl"
	python3 "$GEN" p 2 | head -n 20 >p.jsonl
	docket -L B record p.jsonl >/dev/null || exit 99
	expect_exit 0 docket -L A ship --to "$PG_URL" --host a
	expect_exit 0 docket -L B ship --to "$PG_URL" --host b
	local what m id n ida idb
	ida=$(ledger_id A)
	idb=$(ledger_id B)
	for what in sessions pending; do
		# the local rows plus ledger and host (jq -S: keys sorted, both sides),
		# without what only the local listing reads from the events (the
		# sessions' cwd, mode and incidents, the pending call and decision)
		local only='del(.cwd, .mode, .risky_mode, .imported, .incidents, .call, .decision)'
		{
			docket -L A $what --json | jq -cS --arg l "$ida" ". + {ledger: \$l, host: \"a\"} | $only"
			docket -L B $what --json | jq -cS --arg l "$idb" ". + {ledger: \$l, host: \"b\"} | $only"
		} | sort >local.jsonl
		expect_exit 0 docket fleet $what --db "$PG_URL" --json
		jq -cS . out | sort >fleet.sorted
		n=$(wc -l <local.jsonl)
		[ "$n" -gt 0 ] || fail "$what: no rows"
		diff local.jsonl fleet.sorted >&2 || fail "fleet $what differs from the local ones"
	done
	expect_exit 0 docket fleet pending --db "$PG_URL" --host a
	grep -q "^a  *build-42  *toolu_02 .*awaiting_approval" out || fail "pending table: $(cat out)"
	expect_exit 0 docket fleet sessions --db "$PG_URL" --ledger-id "$idb" --json
	[ "$(grep -c '"host": *"b"' out)" = "$(docket -L B sessions --json | wc -l)" ] || fail "--ledger-id: $(cat out)"
	expect_exit 0 docket fleet sessions --db "$PG_URL" --host nobody
	grep -q "no sessions" out || fail "$(cat out)"
	# show: the local timeline, the local object plus ledger and host
	docket -L B show demo-basic >local.txt
	expect_exit 0 docket fleet show --db "$PG_URL" demo-basic
	diff <(tail -n +2 out) local.txt >&2 || fail "fleet show differs from show"
	docket -L A show --json build-42 >local.json
	expect_exit 0 docket fleet show --db "$PG_URL" --json build-42
	python3 - local.json out "$(ledger_id A)" <<'PY' || fail "fleet show --json is not the local object plus ledger and host"
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert b.pop("ledger") == sys.argv[3] and b.pop("host") == "a"
assert a == b
PY
	expect_exit 2 docket fleet show --db "$PG_URL" nope
	grep -q "no session 'nope'" err || fail "$(cat err)"
	# the same session id on two machines is ambiguous until filtered
	ledger C "$FIXTURES/sessions/demo-basic.jsonl"
	expect_exit 0 docket -L C ship --to "$PG_URL" --host c
	expect_exit 2 docket fleet show --db "$PG_URL" demo-basic
	grep -q "is on 2 ledgers" err || fail "$(cat err)"
	expect_exit 0 docket fleet show --db "$PG_URL" --host c demo-basic
}

# report --from: one page for the fleet, machines as a dimension
case_report() {
	ledger A "$FIXTURES/sessions/demo-basic.jsonl"
	ledger B "$FIXTURES/sessions/demo-basic.jsonl" "$FIXTURES/replay/sessions.jsonl"
	expect_exit 0 docket -L A ship --to "$PG_URL" --host alpha
	expect_exit 0 docket -L B ship --to "$PG_URL" --host beta
	expect_exit 0 docket report --from "$PG_URL" -o fleet.html
	python3 - fleet.html "$FIXTURES/sessions/demo-basic.jsonl" "$FIXTURES/replay/sessions.jsonl" <<'PY' || fail "fleet report"
import json, re, sys
html = open(sys.argv[1]).read()
def counts(*files):
    evs = [json.loads(l) for f in files for l in open(f)]
    return [len(evs), sum(e["type"] == "session.opened" for e in evs), sum(e["type"] == "tool.intent" for e in evs),
            sum(e["type"] == "approval.settled" for e in evs),
            sum(e["type"] == "tool.completed" and e["status"] in ("denied", "unsupported") for e in evs)]
assert "docket fleet audit report" in html
assert "2 machines" in html
m = re.search(r"<h2>Machines</h2>(.*?)</table>", html, re.S)
assert m, "no Machines table"
rows = re.findall(r"<tr><td class=\"call\">([^<]*)</td><td>[0-9a-f]{32}</td>((?:<td class=\"num\">\d+</td>)+)</tr>", m.group(1))
got = {h: [int(x) for x in re.findall(r">(\d+)<", nums)] for h, nums in rows}
# events, sessions, calls, approvals, denials, counted from the fixtures
assert got["alpha"] == counts(sys.argv[2]), got
assert got["beta"] == counts(sys.argv[2], sys.argv[3]), got
# the same session id on both machines stays apart
assert "alpha/demo-basic" in html and "beta/demo-basic" in html
PY
	expect_exit 0 docket report --from "$PG_URL" --host alpha -o alpha.html
	grep -q "1 machine " alpha.html || fail "--host alpha"
	expect_exit 2 docket report -o x.html --host alpha
}

# ingest_as ROLE PASSWORD LEDGER HOST LOCAL_HEAD TSV: one batch through the
# shipping protocol (a temp table OF docket_batch_row, COPY, docket_ingest)
# as that role, from a file in COPY text format; prints "status high_seq
# kind" (or "ok high_seq N new events")
ingest_as() {
	PGPASSWORD=$2 pg_sql -U "$1" -c "CREATE TEMP TABLE docket_batch OF docket_batch_row;
		DO \$\$ BEGIN EXECUTE format('GRANT SELECT ON pg_temp.docket_batch TO %I',
		(SELECT p.proowner::regrole::text FROM pg_proc p WHERE p.oid = 'docket_ingest(text, text, bigint)'::regprocedure)); END \$\$" \
		-c "\\copy docket_batch FROM '$6'" \
		-c "SELECT status || ' ' || high_seq || ' ' || split_part(detail, ':', 1) FROM docket_ingest('$3', '$4', $5)"
}

# batches crafted by hand (not by docket ship) against the ingest check, as
# the shipping role: each must be refused with its kind, nothing merged; the
# chain hashes are computed here (Python), not by the code under test
case_crafted_batches() {
	shipper_role mc pwc
	local id=cccccccccccccccccccccccccccccccc
	python3 - <<'PY'
import os, sys
sys.path.insert(0, os.environ["FLEET_HERE"])
from craft import session_closed, event_json, chain, row
session_of = {}  # payload -> its session, to write the columns that go with it
def t(seq):
    return "2025-05-01T00:00:%02dZ" % (seq % 60)
def ev(seq, tag=""):
    payload = session_closed(t(seq), "s" + tag)
    session_of[payload] = "s" + tag
    return (seq, payload)
def write(name, rows):
    with open(name, "w") as f:
        for seq, payload, h in rows:
            s = session_of.get(payload, "s")
            f.write(row(seq, t(seq), "session.closed", s, None, None, None, None, None, None,
                        event_json(seq, t(seq), s, h), payload, h))
good = chain([ev(i) for i in range(1, 6)])
write("ok.tsv", good)
# 1..3 then 5: a gap, the chain itself consistent
write("gap.tsv", chain([ev(1), ev(2), ev(3), ev(5)]))
# 2 twice, each consistent with its predecessor, 3 missing: duplicate
write("dup.tsv", chain([ev(1), ev(2), ev(2, "b2"), ev(4)]))
# a hash that does not follow from its payload, in the middle: chain_break
# (rewritten is for the first new event)
bad = chain([ev(i, "x") for i in range(1, 5)])
bad[2] = (bad[2][0], ev(3, "changed")[1], bad[2][2])
write("hash.tsv", bad)
# a payload missing
nul = chain([ev(1), ev(2)])
write("null.tsv", [nul[0], (2, None, nul[1][2])])
# after ok.tsv (1..5 held): the anchor 5 with another hash, then 6
alt = chain([ev(i) for i in range(1, 5)] + [ev(5, "other"), ev(6)])
write("anchor.tsv", alt[4:])
# after ok.tsv: 5 (the true anchor), then 6, 7 chained from it
more = chain([ev(i) for i in range(1, 8)])
write("more.tsv", more[4:])
open("head7", "w").write(more[6][2].hex() + "\n")
PY
	local f want got
	ingest_as_mc() { ingest_as mc pwc "$id" c "$2" "$1"; }
	for f in gap:gap dup:gap hash:chain_break null:chain_break; do
		want="refused 0 ${f#*:}"
		got=$(ingest_as_mc "${f%%:*}.tsv" 10) || fail "${f%%:*}: $got"
		[ "$got" = "$want" ] || fail "${f%%:*}.tsv: got '$got', want '$want'"
		[ "$(events_held "$id")" = "0 0 0" ] || fail "${f%%:*}.tsv merged: $(events_held "$id")"
	done
	[ "$(ingest_as_mc ok.tsv 5)" = "ok 5 5 new events" ] || fail "ok.tsv: $(ingest_as_mc ok.tsv 5)"
	[ "$(events_held "$id")" = "5 5 5" ] || fail "ok.tsv: $(events_held "$id")"
	[ "$(ingest_as_mc anchor.tsv 6)" = "refused 5 rewritten" ] || fail "anchor.tsv"
	# a machine holding fewer events than were shipped: truncated
	[ "$(ingest_as_mc more.tsv 4)" = "refused 5 truncated" ] || fail "truncated"
	[ "$(ingest_as_mc more.tsv 7)" = "ok 7 2 new events" ] || fail "more.tsv: $(ingest_as_mc more.tsv 7)"
	[ "$(events_held "$id")" = "7 7 7" ] || fail "more.tsv: $(events_held "$id")"
	[ "$(pg_sql -c "SELECT string_agg(kind, ' ' ORDER BY id) FROM docket_incidents WHERE ledger_id = '$id'")" = \
		"gap gap chain_break chain_break rewritten truncated" ] || fail "incidents: $(pg_sql -c 'SELECT kind, seq, detail FROM docket_incidents')"
	[ "$(pg_sql -c "SELECT encode(head, 'hex') FROM docket_ledgers WHERE ledger_id = '$id'")" = "$(cat head7)" ] ||
		fail "head after more.tsv"
}

# verify_finds TABLE PREFIX SUFFIX <<<"WHAT|SQL" lines: after each SQL (an
# edit of TABLE in the database), fleet verify fails saying PREFIX WHAT
# SUFFIX; TABLE is restored after each
verify_finds() {
	local what sql
	pg_sql -c "CREATE TABLE saved_$1 AS SELECT * FROM $1"
	while IFS='|' read -r what sql; do
		pg_sql -c "$sql" || fail "cannot forge $what"
		expect_exit 1 docket fleet verify --db "$PG_URL"
		grep -q "$2$what$3" out || fail "verify does not say '$2$what$3': $(cat out)"
		pg_sql -c "DELETE FROM $1; INSERT INTO $1 SELECT * FROM saved_$1"
	done
}

# A forging shipper (issue 28): genuine payloads and chain hashes, with one
# decoded column changed, sent through the shipping protocol as the
# shipping role. The genuine rows are built here: payloads and hashes as an
# honest `docket ship` stored them in another database (their chain is
# recomputed here), columns and event JSON from the machine's own `docket
# log --json`, read as docs/fleet.md says. Each forgery is refused at ingest
# as `forged`, naming the column; nothing is stored and no partition made.
# Then the same columns forged in the database, as a superuser would:
# `fleet verify` names each one.
case_forged_columns() {
	shipper_role mf pwf
	ledger A "$FIXTURES/sessions/demo-basic.jsonl" "$FIXTURES/replay/sessions.jsonl"
	local id n col got honest=h_$PGDATABASE
	id=$(ledger_id A)
	n=$(docket -L A stats --json | jq -r .events)
	pg_sql -d postgres -c "CREATE DATABASE $honest"
	docket fleet init --db "postgresql:///$honest?host=$PG_DIR&user=docket_admin" >/dev/null || exit 99
	expect_exit 0 docket -L A ship --to "postgresql:///$honest?host=$PG_DIR&user=docket_admin" --host f
	pg_sql -d "$honest" -c "SELECT seq || ' ' || encode(payload, 'hex') || ' ' || encode(hash, 'hex') FROM docket_events ORDER BY seq" >stored
	docket -L A log --json >local.jsonl
	python3 - local.jsonl stored <<'PY' || fail "cannot build the forged batches"
import hashlib, json, os, sys
sys.path.insert(0, os.environ["FLEET_HERE"])
from craft import row
log = [json.loads(l) for l in open(sys.argv[1])]
stored = [l.split() for l in open(sys.argv[2])]
assert len(log) == len(stored), (len(log), len(stored))
h = bytes(32)
rows = []
for ev, (seq, payload, hh) in zip(log, stored):
    payload, hh = bytes.fromhex(payload), bytes.fromhex(hh)
    h = hashlib.sha256(h + int(seq).to_bytes(8, "big") + payload).digest()
    assert h == hh and h.hex() == ev["hash"] and int(seq) == ev["seq"], seq
    d = ev.get("decision") or {}
    rev = ev.get("revision", d.get("policy_revision"))
    rows.append(dict(seq=ev["seq"], time=ev["time"], type=ev["type"], session=ev.get("session"),
                     invocation=ev.get("invocation"), tool=ev.get("tool"), verdict=d.get("verdict"),
                     status=ev.get("status"), actor=ev.get("actor"), policy_revision=rev, event=ev,
                     payload=payload, hash=hh))
def write(name, rows):
    with open(name, "w") as f:
        for r in rows:
            f.write(row(r["seq"], r["time"], r["type"], r["session"], r["invocation"], r["tool"], r["verdict"],
                        r["status"], r["actor"], r["policy_revision"], r["event"], r["payload"], r["hash"]))
write("genuine.tsv", rows)
def first(pred):
    return next(i for i, r in enumerate(rows) if pred(r))
settled = first(lambda r: r["type"] == "approval.settled" and r["actor"])
intent = first(lambda r: r["type"] == "tool.intent" and r["verdict"] == "denied")
done = first(lambda r: r["type"] == "tool.completed" and r["status"])
policy = first(lambda r: r["type"] == "policy.revised")
flip = {"denied": "allowed", "allowed": "denied", "ok": "denied"}
def forge(name, i, **cols):
    forged = [dict(r) for r in rows]
    forged[i].update(cols)
    write("forged_%s.tsv" % name, forged)
forge("actor", settled, actor="user:ceo")
forge("event", settled, event=dict(rows[settled]["event"], actor="user:ceo", result="approved"))
forge("verdict", intent, verdict="allowed")
forge("tool", intent, tool="read_file")
forge("invocation", intent, invocation="call_x")
forge("status", done, status=flip.get(rows[done]["status"], "ok"))
forge("time", done, time="2020-01-01T00:00:00Z")
forge("type", intent, type="session.closed")
forge("session", intent, session="other")
forge("policy_revision", policy, policy_revision=rows[policy]["policy_revision"] + 1)
# the review's forgery: a denied `git push --force` shown as `read_file
# README` approved by user:ceo in 2020, every column and the JSON agreeing
ceo = [dict(r) for r in rows]
ceo[intent].update(tool="read_file", time="2020-01-01T00:00:00Z",
                   event=dict(rows[intent]["event"], tool="read_file", args={"path": "README"},
                              time="2020-01-01T00:00:00Z"))
write("forged_ceo.tsv", ceo)
with open("rows", "w") as f:
    f.write("%d %d %d %d\n" % (rows[settled]["seq"], rows[intent]["seq"], rows[done]["seq"], rows[policy]["seq"]))
PY
	for col in actor event verdict tool invocation status time type session policy_revision ceo; do
		got=$(ingest_as mf pwf "$id" f "$n" "forged_$col.tsv") || fail "$col: $got"
		[ "$got" = "refused 0 forged" ] || fail "forged $col: got '$got', want 'refused 0 forged'"
		[ "$(events_held "$id")" = "0 0 0" ] || fail "forged $col stored: $(events_held "$id")"
		[ "$col" = ceo ] && col=event
		pg_sql -c "SELECT detail FROM docket_incidents WHERE kind = 'forged' ORDER BY id DESC LIMIT 1" |
			grep -q "column $col " || fail "the incident does not name column $col: $(pg_sql -c 'SELECT detail FROM docket_incidents ORDER BY id DESC LIMIT 1')"
	done
	[ "$(pg_sql -c "SELECT count(*) FROM docket_incidents WHERE kind = 'forged' AND role = 'mf'")" = 11 ] ||
		fail "incidents: $(pg_sql -c 'SELECT kind, role, detail FROM docket_incidents')"
	[ "$(pg_sql -c "SELECT count(*) FROM pg_tables WHERE tablename LIKE 'docket_events_%'")" = 0 ] ||
		fail "a refused batch made partitions: $(pg_sql -c "SELECT tablename FROM pg_tables WHERE tablename LIKE 'docket_events_%'")"
	[ "$(pg_sql -c "SELECT count(*) FROM docket_calls")" = 0 ] || fail "a refused batch left call records"
	# the genuine rows, the same way: accepted, and fleet verify agrees
	got=$(ingest_as mf pwf "$id" f "$n" genuine.tsv)
	[ "$got" = "ok $n $n new events" ] || fail "genuine batch: $got"
	expect_exit 0 docket fleet verify --db "$PG_URL"
	# each call's record is what the ledger's own log says (computed here)
	pg_sql -c "SELECT session, invocation, requests, coalesce(result, '-'), coalesce(outcome, '-'), dispatched,
		coalesce(intent_seq, 0), for_session FROM docket_calls ORDER BY 1, 2" >calls || fail "docket_calls"
	python3 - local.jsonl calls <<'PY' || fail "docket_calls is not what the log says: $(cat calls)"
import json, sys
calls = {}
for ev in map(json.loads, open(sys.argv[1])):
    if not ev.get("session") or not ev.get("invocation") or ev["type"] not in (
            "tool.intent", "approval.requested", "approval.settled", "recovery.action", "tool.dispatched",
            "tool.completed"):
        continue
    c = calls.setdefault((ev["session"], ev["invocation"]), dict(req=0, res="-", out=None, disp="f", intent=0,
                                                                 fs="f"))
    t = ev["type"]
    if t == "approval.requested":
        c["req"] += 1
    elif t == "approval.settled":
        c["res"] = ev.get("result", "-")
        c["fs"] = "t" if ev.get("result") == "approved_for_session" or c["fs"] == "t" else "f"
    elif t == "tool.completed" and c["out"] is None:
        c["out"] = ev.get("status", "-")
    elif t == "tool.dispatched":
        c["disp"] = "t"
    elif t == "tool.intent" and not c["intent"]:
        c["intent"] = ev["seq"]
want = ["%s|%s|%d|%s|%s|%s|%d|%s" % (s, i, c["req"], c["res"], c["out"] or "-", c["disp"], c["intent"], c["fs"])
        for (s, i), c in sorted(calls.items())]
got = open(sys.argv[2]).read().split()
assert got == want and any(c["req"] for c in calls.values()), (got, want)
PY
	# a call's record edited, added or removed in the database: fleet verify says so
	verify_finds docket_calls "docket_calls: call .* " "" <<SQL
is not what its events say|UPDATE docket_calls SET requests = requests + 1 WHERE ctid = (SELECT min(ctid) FROM docket_calls)
is not what its events say|UPDATE docket_calls SET dispatched = NOT dispatched WHERE ctid = (SELECT max(ctid) FROM docket_calls)
has no record|DELETE FROM docket_calls WHERE ctid = (SELECT min(ctid) FROM docket_calls)
has a record but no event|INSERT INTO docket_calls (ledger_id, session, invocation, requests, dispatched, for_session) VALUES ('$id', 'zz', 'forged', 1, true, false)
SQL
	expect_exit 0 docket fleet verify --db "$PG_URL"
	# what the views show is what the ledger says
	[ "$(pg_sql -c "SELECT string_agg(actor || ' ' || result, ',' ORDER BY seq) FROM docket_approvals")" = \
		"$(jq -r 'select(.type == "approval.settled") | .actor + " " + .result' local.jsonl | paste -sd,)" ] ||
		fail "docket_approvals: $(pg_sql -c 'SELECT * FROM docket_approvals')"
	# forged in the database: fleet verify names the column
	local settled intent done policy
	read -r settled intent done policy <rows
	verify_finds docket_events "column " " " <<SQL
actor|UPDATE docket_events SET actor = 'user:ceo' WHERE seq = $settled
event|UPDATE docket_events SET event = jsonb_set(event, '{actor}', '"user:ceo"') WHERE seq = $settled
verdict|UPDATE docket_events SET verdict = 'allowed' WHERE seq = $intent
tool|UPDATE docket_events SET tool = 'read_file' WHERE seq = $intent
invocation|UPDATE docket_events SET invocation = 'call_x' WHERE seq = $intent
status|UPDATE docket_events SET status = CASE WHEN status = 'ok' THEN 'denied' ELSE 'ok' END WHERE seq = $done
time|UPDATE docket_events SET time = time + interval '1 minute' WHERE seq = $done
type|UPDATE docket_events SET type = 'session.closed' WHERE seq = $intent
session|UPDATE docket_events SET session = 'other' WHERE seq = $intent
policy_revision|UPDATE docket_events SET policy_revision = policy_revision + 1 WHERE seq = $policy
SQL
	expect_exit 0 docket fleet verify --db "$PG_URL"
	pg_sql -c "UPDATE docket_ledgers SET host = 'elsewhere'"
	expect_exit 1 docket fleet verify --db "$PG_URL"
	grep -q "column host: host elsewhere is not registered" out || fail "verify, host: $(cat out)"
	pg_sql -d postgres -c "DROP DATABASE $honest WITH (FORCE)"
}

# Frames (migration 6): `docket ship` sends each event's seq, time, payload
# and hash only, and the server derives the rest. A frame's time is
# compared with the payload's (the partitions are made from it), and a row
# that leaves the event out but sends any other column is compared in full:
# each refused as `forged`, naming the column, nothing stored. Genuine
# frames are accepted with the columns their payloads give (written here,
# not read back from the code under test).
case_frames() {
	shipper_role mq pwq
	local id=eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee f got
	python3 - <<'PY'
import os, sys
sys.path.insert(0, os.environ["FLEET_HERE"])
from craft import closed_rows, write_rows
rows = closed_rows([(i, "2025-06-0%dT10:00:00Z" % i, "s%d" % i) for i in range(1, 4)])
def frames(rows):
    return [dict(seq=r["seq"], time=r["time"], type=None, session=None, event=None, payload=r["payload"],
                 hash=r["hash"]) for r in rows]
def variant(name, i, **cols):
    fr = frames(rows)
    fr[i].update(cols)
    write_rows(name, fr)
write_rows("frames.tsv", frames(rows))
variant("frame_time.tsv", 1, time="2025-07-02T10:00:00Z")
variant("frame_notime.tsv", 1, time=None)
variant("frame_session.tsv", 2, session="other")
variant("frame_genuine_session.tsv", 2, session="s3")
PY
	for f in frame_time:time frame_notime:time frame_session:event frame_genuine_session:event; do
		got=$(ingest_as mq pwq "$id" q 3 "${f%%:*}.tsv") || fail "${f%%:*}: $got"
		[ "$got" = "refused 0 forged" ] || fail "${f%%:*}: got '$got', want 'refused 0 forged'"
		pg_sql -c "SELECT detail FROM docket_incidents ORDER BY id DESC LIMIT 1" | grep -q "column ${f#*:} " ||
			fail "${f%%:*}: the incident does not name column ${f#*:}: $(pg_sql -c 'SELECT detail FROM docket_incidents ORDER BY id DESC LIMIT 1')"
		[ "$(events_held "$id")" = "0 0 0" ] || fail "${f%%:*} stored: $(events_held "$id")"
	done
	[ "$(pg_sql -c "SELECT count(*) FROM pg_tables WHERE tablename LIKE 'docket_events_%'")" = 0 ] ||
		fail "a refused frame made partitions"
	got=$(ingest_as mq pwq "$id" q 3 frames.tsv)
	[ "$got" = "ok 3 3 new events" ] || fail "frames: $got"
	[ "$(pg_sql -c "SELECT string_agg(seq || ' ' || type || ' ' || session || ' ' || to_char(time AT TIME ZONE 'UTC',
		'YYYY-MM-DD HH24') || ' ' || (event ->> 'session'), ',' ORDER BY seq) FROM docket_events")" = \
		"1 session.closed s1 2025-06-01 10 s1,2 session.closed s2 2025-06-02 10 s2,3 session.closed s3 2025-06-03 10 s3" ] ||
		fail "the frames' columns: $(pg_sql -c 'SELECT seq, type, session, time, event FROM docket_events')"
	expect_exit 0 docket fleet verify --db "$PG_URL"
}

# Partitions are made only for an accepted batch, at most 12 new ones per
# batch (issue 28): batches of genuine events over 30 months, crafted here,
# refused for a forged column, a broken chain or too many months make no
# table; 12 months are accepted; `docket ship` of a ledger over 30 months
# cuts its batches to fit and ships everything.
case_partitions() {
	shipper_role mp pwp
	local id=dddddddddddddddddddddddddddddddd
	python3 - <<'PY'
import os, sys
sys.path.insert(0, os.environ["FLEET_HERE"])
from craft import closed_rows, write_rows
months = [(2019 + m // 12, m % 12 + 1) for m in range(30)]
rows = closed_rows([(i + 1, "%04d-%02d-15T12:00:00Z" % ym, "p%d" % i) for i, ym in enumerate(months)])
write_rows("months30.tsv", rows)
write_rows("months12.tsv", rows[:12])
forged = [dict(r) for r in rows]
forged[-1]["session"] = "forged"
write_rows("forged30.tsv", forged)
broken = [dict(r) for r in rows]
broken[-1]["hash"] = bytes(32)
write_rows("broken30.tsv", broken)
PY
	partitions() { pg_sql -c "SELECT count(*) FROM pg_tables WHERE tablename LIKE 'docket_events_%'"; }
	local f want got
	for f in forged30:forged broken30:chain_break months30:partitions; do
		want="refused 0 ${f#*:}"
		got=$(ingest_as mp pwp "$id" p 30 "${f%%:*}.tsv") || fail "${f%%:*}: $got"
		[ "$got" = "$want" ] || fail "${f%%:*}.tsv: got '$got', want '$want'"
		[ "$(partitions)" = 0 ] || fail "${f%%:*}.tsv (refused) made $(partitions) partitions"
		[ "$(events_held "$id")" = "0 0 0" ] || fail "${f%%:*}.tsv stored: $(events_held "$id")"
	done
	pg_sql -c "SELECT detail FROM docket_incidents WHERE kind = 'partitions'" |
		grep -q "needs 30 new month partitions, at most 12" || fail "$(pg_sql -c 'SELECT kind, detail FROM docket_incidents')"
	got=$(ingest_as mp pwp "$id" p 12 months12.tsv)
	[ "$got" = "ok 12 12 new events" ] || fail "months12.tsv: $got"
	[ "$(partitions)" = 12 ] || fail "12 months made $(partitions) partitions"
	# a real ledger over 30 months (2022-01..2024-06) ships in batches of at most 12 months
	local m
	docket -L A init >/dev/null || exit 99
	for m in $(seq 0 29); do
		python3 "$GEN" "m$m" 1 "$(printf '%04d-%02d-03' $((2022 + m / 12)) $((m % 12 + 1)))" >m.jsonl
		docket -L A record m.jsonl >/dev/null || exit 99
	done
	local n
	n=$(docket -L A stats --json | jq -r .events)
	expect_exit 0 docket -L A ship --to "$(url_as mp pwp)" --host p
	[ "$(events_held "$(ledger_id A)")" = "$n $n $n" ] || fail "30 months: held $(events_held "$(ledger_id A)"), want $n"
	[ "$(partitions)" = 42 ] || fail "partitions: $(partitions), want 12 + 30"
	[ "$(pg_sql -c "SELECT count(*) FROM docket_incidents WHERE ledger_id = '$(ledger_id A)'")" = 0 ] || fail "incidents for A"
	expect_exit 0 docket fleet verify --db "$PG_URL"
}

# A host name is bound to the role that first shipped as it (issue 28):
# role mb shipping as laptop-a (ma's) is an incident, not data; an operator
# can pin a name to a role before its first ship; fleet verify checks the
# binding of every ledger's host.
case_host_binding() {
	shipper_role ma pwa
	shipper_role mb pwb
	ledger A "$FIXTURES/sessions/demo-basic.jsonl"
	ledger B "$FIXTURES/replay/sessions.jsonl"
	ledger C "$FIXTURES/sessions/open-pending.jsonl"
	local ida idb idc
	ida=$(ledger_id A)
	idb=$(ledger_id B)
	idc=$(ledger_id C)
	expect_exit 0 docket -L A ship --to "$(url_as ma pwa)" --host laptop-a
	expect_exit 1 docket -L B ship --to "$(url_as mb pwb)" --host laptop-a
	grep -q "REFUSED.*host: role mb may not ship as host laptop-a: the host belongs to role ma" out ||
		fail "no host refusal: $(cat out err)"
	[ "$(events_held "$idb")" = "0 0 0" ] || fail "B stored: $(events_held "$idb")"
	[ "$(pg_sql -c "SELECT count(*) FROM docket_ledgers WHERE ledger_id = '$idb'")" = 0 ] || fail "B registered"
	[ "$(pg_sql -c "SELECT kind || ' ' || role || ' ' || host FROM docket_incidents")" = "host mb laptop-a" ] ||
		fail "incident: $(pg_sql -c 'SELECT * FROM docket_incidents')"
	# laptop-a's sessions are A's only
	expect_exit 0 docket fleet sessions --db "$PG_URL" --host laptop-a --json
	[ "$(wc -l <out)" = "$(docket -L A sessions --json | wc -l)" ] && ! grep -q "$idb" out ||
		fail "laptop-a shows other sessions: $(cat out)"
	# mb ships as its own host; then as ma's again: refused, nothing added
	expect_exit 0 docket -L B ship --to "$(url_as mb pwb)" --host laptop-b
	python3 "$GEN" h 1 >h.jsonl
	docket -L B record h.jsonl >/dev/null || exit 99
	local held
	held=$(events_held "$idb")
	expect_exit 1 docket -L B ship --to "$(url_as mb pwb)" --host laptop-a
	[ "$(events_held "$idb")" = "$held" ] || fail "B grew as laptop-a"
	[ "$(pg_sql -c "SELECT host FROM docket_ledgers WHERE ledger_id = '$idb'")" = laptop-b ] || fail "B's host moved"
	# a crafted batch as mb under ma's host is refused the same way
	printf '' >empty.tsv
	[ "$(ingest_as mb pwb "$idb" laptop-a 0 empty.tsv)" = "refused $(events_held "$idb" | cut -d' ' -f3) host" ] ||
		fail "crafted as laptop-a: $(ingest_as mb pwb "$idb" laptop-a 0 empty.tsv)"
	# pinned by the operator before its first ship
	pg_sql -c "INSERT INTO docket_hosts (host, owner) VALUES ('laptop-c', 'ma')"
	expect_exit 1 docket -L C ship --to "$(url_as mb pwb)" --host laptop-c
	grep -q "host laptop-c: the host belongs to role ma" out || fail "pinned host: $(cat out)"
	expect_exit 0 docket -L C ship --to "$(url_as ma pwa)" --host laptop-c
	[ "$(pg_sql -c "SELECT string_agg(host || '=' || owner, ' ' ORDER BY host) FROM docket_hosts")" = \
		"laptop-a=ma laptop-b=mb laptop-c=ma" ] || fail "hosts: $(pg_sql -c 'SELECT * FROM docket_hosts')"
	expect_exit 0 docket fleet verify --db "$PG_URL"
	# a superuser moves B under laptop-a: fleet verify sees the binding broken
	pg_sql -c "UPDATE docket_ledgers SET host = 'laptop-a' WHERE ledger_id = '$idb'"
	expect_exit 1 docket fleet verify --db "$PG_URL"
	grep -q "FAILED $idb (laptop-a): column host: host laptop-a is bound to role ma, the ledger belongs to role mb" out ||
		fail "verify, host: $(cat out)"
	[ "$(grep -c '^ok' out)" = 2 ] || fail "verify: $(cat out)"
	: "$ida $idc"
}

# The server's decoder (docket_pb_json, plpgsql) against docket's own codec
# (fleet verify, C), on hostile payloads: genuine payloads of every event
# kind, mutated (bytes flipped, inserted, dropped, cut; fields repeated,
# unknown fields added; enumeration values out of range), each shipped as
# the one event of a ledger of its own with its columns as the server
# derives them. Property: whatever the server accepts, fleet verify (which
# decodes with docket's codec and compares every column) accepts too; a
# payload the server cannot decode is refused as `forged`.
case_decoder_differential() {
	ledger A "$FIXTURES/sessions/demo-basic.jsonl" "$FIXTURES/replay/sessions.jsonl" "$FIXTURES/sessions/open-pending.jsonl"
	local honest=h_$PGDATABASE
	pg_sql -d postgres -c "CREATE DATABASE $honest"
	docket fleet init --db "postgresql:///$honest?host=$PG_DIR&user=docket_admin" >/dev/null || exit 99
	expect_exit 0 docket -L A ship --to "postgresql:///$honest?host=$PG_DIR&user=docket_admin" --host d
	pg_sql -d "$honest" -c "SELECT encode(payload, 'hex') FROM docket_events ORDER BY seq" >payloads
	pg_sql -d postgres -c "DROP DATABASE $honest WITH (FORCE)"
	python3 - payloads "${FLEET_MUTANTS:-400}" <<'PY' || fail "cannot make the mutants"
import hashlib, os, random, sys
sys.path.insert(0, os.environ["FLEET_HERE"])
from craft import varint, field
rnd = random.Random(28)
genuine = [bytes.fromhex(l.strip()) for l in open(sys.argv[1]) if l.strip()]
def mutate(p):
    k = rnd.randrange(8)
    i = rnd.randrange(len(p)) if p else 0
    if k == 0:   # a byte flipped
        return p[:i] + bytes([p[i] ^ (1 << rnd.randrange(8))]) + p[i + 1:]
    if k == 1:   # a byte inserted
        return p[:i] + bytes([rnd.randrange(256)]) + p[i:]
    if k == 2:   # a byte dropped
        return p[:i] + p[i + 1:]
    if k == 3:   # cut short
        return p[:i]
    if k == 4:   # the time (field 1) given twice
        return p + field(1, b"2020-01-01T00:00:00Z")
    if k == 5:   # an unknown field
        return p + field(rnd.choice([7, 9, 15, 26, 99]), b"x")
    if k == 6:   # the session (field 3) repeated, or a varint field appended
        return p + (field(3, b"other") if rnd.randrange(2) else varint(2 << 3) + varint(rnd.randrange(1 << 70)))
    return p     # unchanged: the control group
with open("mutants.sql", "w") as f:
    # the row as the server derives it (NULLs and {} when it cannot decode)
    f.write("CREATE FUNCTION pg_temp.derived(p bytea, h bytea) RETURNS docket_derived LANGUAGE plpgsql AS $$"
            " BEGIN RETURN docket_event_row(p, 1, h); EXCEPTION WHEN OTHERS THEN RETURN NULL; END $$;\n"
            "CREATE TEMP TABLE docket_batch OF docket_batch_row;\n")
    for n in range(int(sys.argv[2])):
        p = mutate(rnd.choice(genuine))
        h = hashlib.sha256(bytes(32) + (1).to_bytes(8, "big") + p).digest()
        lid = hashlib.md5(b"mutant %d" % n).hexdigest()
        f.write("TRUNCATE docket_batch;\n"
                "INSERT INTO docket_batch SELECT 1, (d).time, (d).type, (d).session, (d).invocation, (d).tool,"
                " (d).verdict, (d).status, (d).actor, (d).policy_revision, coalesce((d).event, '{}'), p, h"
                " FROM (SELECT pg_temp.derived(p, h) AS d, p, h FROM (VALUES ('\\x%s'::bytea, '\\x%s'::bytea)) v (p, h)) x;\n"
                "SELECT status || ' ' || split_part(detail, ':', 1) FROM docket_ingest('%s', 'd', 1);\n"
                % (p.hex(), h.hex(), lid))
PY
	pg_sql -f mutants.sql >answers 2>err || { cat err >&2; fail "mutants.sql"; }
	local accepted refused other
	accepted=$(grep -c '^ok ' answers)
	refused=$(grep -c '^refused forged$' answers)
	other=$(grep -vc '^ok \|^refused forged$' answers)
	[ "$other" = 0 ] || fail "answers other than ok or forged: $(grep -v '^ok \|^refused forged$' answers | sort | uniq -c)"
	[ "$accepted" -gt 20 ] && [ "$refused" -gt 20 ] || fail "accepted $accepted, refused $refused: too few of one kind to mean anything"
	expect_exit 0 docket fleet verify --db "$PG_URL"
	# (a refused ledger is held with no event: verified, 0 events)
	[ "$(grep -c '^ok .*: 1 events' out)" = "$accepted" ] && ! grep -q FAILED out ||
		fail "verify: $(grep -c '^ok .*: 1 events' out) verified with their event, $accepted accepted: $(grep -v '^ok ' out | head)"
	echo "decoder_differential: $accepted accepted (verify agrees on each), $refused refused"
}

# Scale (issue 35 item 1; slow suite): FLEET_SCALE_EVENTS events (default
# 1,000,000) of FLEET_SCALE_MACHINES machines (default 1,000) over a year
# (12 month partitions), then the documented fleet queries timed.
# FLEET_SCALE_TEMPLATES machines (default 8) are real ledgers of a
# realistic mix (gen_mix.py: sessions, approvals, denials, escalations,
# failures, long outputs) shipped by `docket ship` (the real path, timed);
# the other machines are server-side copies of their rows (INSERT ...
# SELECT) under their own ledger ids and hosts, a whole number of months
# later, so rows, partitions, indexes, views and roles are docket ship's;
# their call records (docket_calls, which docket_ingest keeps beside the
# rows it inserts) are copied the same way.
# The copies' chains do not verify (their times moved): nothing here needs
# them to. Then: each documented query's p50 and p95 over FLEET_SCALE_RUNS
# runs (default 20; server time from psql \timing, wall time for the
# commands), its EXPLAIN (ANALYZE, BUFFERS) on stderr, a fleet replay of
# every machine, or of the first FLEET_SCALE_REPLAY_MACHINES (as a
# docket_reader role), beside the local replays of the templates, and the
# sizes. One JSON line on stdout. Asserted: every row is
# there, each query returns rows, and the fleet replay's totals are the
# templates' local totals, each counted once per copy (no timing goal: the
# machine is shared; the figures are in docs/fleet.md).
case_scale() {
	local events=${FLEET_SCALE_EVENTS:-1000000} machines=${FLEET_SCALE_MACHINES:-1000} runs=${FLEET_SCALE_RUNS:-20}
	local templates=${FLEET_SCALE_TEMPLATES:-8} rmachines=${FLEET_SCALE_REPLAY_MACHINES:-1000000000}
	local per i n=0 t0 t1 t2 ids=''
	[ "$templates" -le "$machines" ] || templates=$machines
	per=$((events / machines))
	for i in $(seq 0 $((templates - 1))); do
		python3 "$FLEET_HERE/gen_mix.py" "$i" "$per" 2025-01 >"t$i.jsonl"
		ledger "T$i" "t$i.jsonl"
		n=$((n + $(wc -l <"t$i.jsonl")))
	done
	t0=$(date +%s.%N)
	for i in $(seq 0 $((templates - 1))); do
		expect_exit 0 docket -L "T$i" ship --to "$PG_URL" --host "m$i" --batch 5000
		ids="$ids,'$(ledger_id "T$i")'"
	done
	t1=$(date +%s.%N)
	# machine m is a copy of template m % templates, m % 12 months later
	pg_sql -c "SELECT docket_partition_for(make_timestamptz(2025, m, 1, 0, 0, 0, 'UTC')) FROM generate_series(1, 12) m;
		CREATE TEMP TABLE tpl AS SELECT ledger_id, substr(host, 2)::int AS k, high_seq, head
			FROM docket_ledgers WHERE ledger_id IN (${ids#,});
		CREATE TEMP TABLE copies AS SELECT md5('machine ' || m) AS ledger_id, 'm' || m AS host, m,
			(SELECT ledger_id FROM tpl WHERE k = m % $templates) AS tpl FROM generate_series($templates, $machines - 1) m;
		INSERT INTO docket_ledgers (ledger_id, host, owner, high_seq, head)
			SELECT c.ledger_id, c.host, 'docket_admin', t.high_seq, t.head FROM copies c JOIN tpl t ON t.ledger_id = c.tpl;
		INSERT INTO docket_hosts (host, owner) SELECT host, 'docket_admin' FROM copies;
		INSERT INTO docket_events SELECT c.ledger_id, seq, time + make_interval(months => c.m % 12),
			type, session, invocation, tool, verdict, status, actor, policy_revision,
			jsonb_set(event, '{time}', to_jsonb(to_char((time + make_interval(months => c.m % 12)) AT TIME ZONE 'UTC',
				'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'))), payload, hash
		FROM copies c JOIN docket_events e ON e.ledger_id = c.tpl;
		INSERT INTO docket_calls SELECT c.ledger_id, k.session, k.invocation, k.requests, k.last_request, k.last_settled,
			k.result, k.evaluated_seq, k.evaluated, k.outcome_seq, k.outcome, k.dispatched, k.intent_seq,
			k.intent_time + make_interval(months => c.m % 12), k.for_session
		FROM copies c JOIN docket_calls k ON k.ledger_id = c.tpl;" || fail "cannot copy the rows"
	# what autovacuum does to an insert-only table (PostgreSQL 13 and later):
	# the visibility map the index-only scans read, and the statistics
	pg_sql -c "VACUUM ANALYZE docket_events" -c "ANALYZE docket_ledgers" || fail "vacuum"
	t2=$(date +%s.%N)
	local total
	total=$(pg_sql -c "SELECT sum(high_seq) FROM docket_ledgers")
	[ "$(pg_sql -c 'SELECT count(*) FROM docket_events')" = "$total" ] ||
		fail "rows: $(pg_sql -c 'SELECT count(*) FROM docket_events'), want $total"
	local -a qs names
	# approvals by actor and tool in a month; denials by host and tool in a
	# month, and a month's human denials by actor and tool; one call's
	# history; a month's escalations (calls asking to leave the sandbox) with
	# the answers of the week after; one machine's sessions in SQL
	names=(approvals_by_actor_tool_month denials_by_tool_month denials_by_actor_month one_call_history
		escalations_month sessions_of_host)
	qs=("SELECT host, time, session, args -> 'command' FROM docket_approvals WHERE actor = 'user:ana' AND tool = 'shell' AND result IN ('approved', 'approved_for_session') AND time >= '2025-03-01' AND time < '2025-04-01'"
		"SELECT host, tool, count(*) FROM docket_denials WHERE time >= '2025-03-01' AND time < '2025-04-01' GROUP BY host, tool"
		"SELECT actor, tool, count(*) FROM docket_approvals WHERE result = 'denied' AND time >= '2025-03-01' AND time < '2025-04-01' GROUP BY actor, tool"
		"SELECT seq, type, time, event FROM docket_events WHERE ledger_id = md5('machine 17') AND session = 's-3' AND invocation = 'c2' ORDER BY seq"
		"SELECT e.ledger_id, e.session, e.invocation, e.args ->> 'justification', e.verdict, a.result, a.actor FROM docket_escalations e LEFT JOIN docket_approvals a ON a.ledger_id = e.ledger_id AND a.session = e.session AND a.invocation = e.invocation AND a.time >= e.time AND a.time < e.time + interval '7 days' WHERE e.time >= '2025-03-01' AND e.time < '2025-04-01'"
		"SELECT session, min(time), max(time), count(*) FROM docket_events WHERE ledger_id = md5('machine 17') AND session IS NOT NULL GROUP BY session")
	for i in "${!qs[@]}"; do
		echo "-- ${names[$i]}" >&2
		pg_sql -c "EXPLAIN (ANALYZE, BUFFERS) ${qs[$i]}" >&2 || fail "${qs[$i]}"
		[ "$(pg_sql -c "SELECT count(*) FROM (${qs[$i]}) q")" -gt 0 ] || fail "${names[$i]}: no rows"
	done
	# the two month-wide reports give the answers of the raw queries over
	# the tables (each call's intent, each escalation's answers, looked up
	# in every month by a plain join)
	local -a raws
	raws=("SELECT l.host, i.tool, count(*) FROM docket_events c JOIN docket_ledgers l USING (ledger_id)
			LEFT JOIN docket_events i ON i.ledger_id = c.ledger_id AND i.session = c.session AND i.invocation = c.invocation AND i.type = 'tool.intent'
			WHERE c.type = 'tool.completed' AND c.status IN ('denied', 'unsupported') AND c.time >= '2025-03-01' AND c.time < '2025-04-01'
			GROUP BY l.host, i.tool"
		"SELECT i.ledger_id, i.session, i.invocation, i.event -> 'args' ->> 'justification', i.verdict, s.event ->> 'result', s.actor
			FROM docket_events i LEFT JOIN docket_events s ON s.ledger_id = i.ledger_id AND s.session = i.session AND s.invocation = i.invocation
				AND s.type = 'approval.settled' AND s.time >= i.time AND s.time < i.time + interval '7 days'
			WHERE i.type = 'tool.intent' AND (i.event -> 'args' ->> 'sandbox_permissions' = 'require_escalated'
				OR i.event -> 'args' -> 'with_escalated_permissions' = 'true' OR i.event -> 'args' -> 'dangerouslyDisableSandbox' = 'true')
				AND i.time >= '2025-03-01' AND i.time < '2025-04-01'")
	pg_sql -c "${qs[1]}" | sort >answer1 && pg_sql -c "${raws[0]}" | sort >raw1 &&
		pg_sql -c "${qs[4]}" | sort >answer4 && pg_sql -c "${raws[1]}" | sort >raw4 || fail "the raw queries"
	[ -s raw1 ] && [ -s raw4 ] && diff raw1 answer1 >&2 && diff raw4 answer4 >&2 ||
		fail "a month-wide report differs from its raw query"
	{
		echo '\timing on'
		for i in "${!qs[@]}"; do
			for _ in $(seq 1 "$runs"); do echo "${qs[$i]};"; done
		done
	} >queries.sql
	pg_sql -f queries.sql | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' >times || fail "queries"
	[ "$(wc -l <times)" = $((${#qs[@]} * runs)) ] || fail "timings: $(wc -l <times)"
	local s
	: >cli
	for _ in $(seq 1 "$runs"); do
		s=$(date +%s%N)
		docket fleet sessions --db "$PG_URL" --host m17 --json >sessions.out || fail "fleet sessions"
		echo "sessions $((($(date +%s%N) - s) / 1000000))" >>cli
		s=$(date +%s%N)
		docket fleet show --db "$PG_URL" --host m17 --json s-3 >show.out || fail "fleet show"
		echo "show $((($(date +%s%N) - s) / 1000000))" >>cli
	done
	[ "$(wc -l <sessions.out)" -gt 0 ] && jq -e .session show.out >/dev/null || fail "fleet sessions or show: no rows"
	# the fleet replay of every machine; the local replays of the templates
	local policy=$FIXTURES/replay/strict.yaml t3 t4 t5 r
	pg_sql -c "CREATE ROLE replayer LOGIN PASSWORD 'pr' IN ROLE docket_reader" || exit 99
	t3=$(date +%s.%N)
	for i in $(seq 0 $((templates - 1))); do
		docket -L "T$i" replay --policy "$policy" --format json >"local$i.json"
		r=$?
		[ $r -le 1 ] || fail "local replay $i: exit $r"
	done
	t4=$(date +%s.%N)
	if [ "$rmachines" -ge "$machines" ]; then
		rmachines=$machines
		docket replay --from "$(url_as replayer pr)" --policy "$policy" --format json >fleet.json
		r=$?
	else
		# the first rmachines machines, one --host each
		r=0
		for i in $(seq 0 $((rmachines - 1))); do
			docket replay --from "$(url_as replayer pr)" --host "m$i" --policy "$policy" --format json
			[ $? -le 1 ] || r=2
		done >fleet.json
	fi
	[ $r -le 1 ] || fail "fleet replay: exit $r"
	t5=$(date +%s.%N)
	python3 "$FLEET_HERE/scale_report.py" times cli "$runs" "$total" "$machines" "$templates" "$n" "$rmachines" \
		"$t0" "$t1" "$t2" "$t3" "$t4" "$t5" "${names[@]}" || fail "scale report"
}

# Past one server (issue 35 item 3): two servers, a shard on each (the
# case's database on this one, another on a second server), a coordinator
# database here whose docket tables are hash partitions by ledger id
# (postgres_fdw foreign tables, tests/fleet/shards.sql). Two machines ship,
# each to the shard its ledger id hashes to; the fleet commands run against
# the coordinator, as a reader, over both: verify (and tampering on the
# second server found through it), log, sessions and pending equal to the
# shards' own, one ledger's query pruned to its shard. A machine shipping
# to the wrong shard is refused there (shard_guard.sql), nothing stored.
case_shards() {
	pg_start_another || fail "cannot start a second server"
	trap pg_stop_another EXIT
	local s0="postgresql:///$PGDATABASE?host=$PG_DIR&user=docket_admin"
	local s1="postgresql:///shard1?host=$PG2_DIR&user=docket_admin"
	local coord="postgresql:///fleet?host=$PG_DIR&user=audit&password=pau"
	pg_sql -d "postgresql:///postgres?host=$PG2_DIR&user=docket_admin" -c "CREATE DATABASE shard1" || exit 99
	docket fleet init --db "$s1" >/dev/null || fail "fleet init on the second server"
	local db r
	for db in "$s0" "$s1"; do
		r=0; [ "$db" = "$s1" ] && r=1
		pg_sql -d "$db" -v remainder=$r -v modulus=2 -f "$FLEET_HERE/shard_guard.sql" || fail "guard $r"
		pg_sql -d "$db" -c "CREATE ROLE audit LOGIN PASSWORD 'pau' IN ROLE docket_reader" || exit 99
	done
	shipper_role ma pwa
	pg_sql -d "postgresql:///postgres?host=$PG2_DIR&user=docket_admin" -c "CREATE ROLE mb LOGIN PASSWORD 'pwb' IN ROLE docket_shipper"
	# the coordinator's server knows the shipping roles of every shard (fleet
	# verify checks each host's binding against the ledger's owner)
	shipper_role mb pwb
	pg_sql -d postgres -c "CREATE DATABASE fleet" || exit 99
	pg_sql -d fleet -f "$FLEET_HERE/shards.sql" >/dev/null || fail "shards.sql"
	pg_sql -d fleet -c "SELECT docket_shard_add(0, 2, 'host ''$PG_DIR'', dbname ''$PGDATABASE''', 'user ''audit'', password ''pau''')" >/dev/null &&
		pg_sql -d fleet -c "SELECT docket_shard_add(1, 2, 'host ''$PG2_DIR'', dbname ''shard1''', 'user ''audit'', password ''pau''')" >/dev/null ||
		fail "docket_shard_add"
	# one machine of each shard (ledger ids are random: make them until both
	# remainders have one)
	local i id shard l0='' l1=''
	for i in $(seq 1 40); do
		python3 "$GEN" "m$i" 3 "2025-0$((i % 9 + 1))-01" >"m$i.jsonl"
		ledger "L$i" "m$i.jsonl"
		id=$(ledger_id "L$i")
		shard=$(pg_sql -d fleet -c "SELECT docket_shard_of('$id', 2)")
		[ "$shard" = 0 ] && [ -z "$l0" ] && l0=L$i
		[ "$shard" = 1 ] && [ -z "$l1" ] && l1=L$i
		[ -n "$l0" ] && [ -n "$l1" ] && break
	done
	[ -n "$l0" ] && [ -n "$l1" ] || fail "40 ledgers, not one of each shard: $l0 $l1"
	# the wrong shard refuses, and holds nothing of the ledger
	expect_exit 3 docket -L "$l1" ship --to "postgresql:///$PGDATABASE?host=$PG_DIR&user=ma&password=pwa" --host a
	grep -q "docket_shard" err || fail "wrong shard: $(cat err)"
	[ "$(pg_sql -c "SELECT count(*) FROM docket_ledgers WHERE ledger_id = '$(ledger_id "$l1")'")" = 0 ] ||
		fail "the wrong shard holds the ledger"
	expect_exit 0 docket -L "$l0" ship --to "postgresql:///$PGDATABASE?host=$PG_DIR&user=ma&password=pwa" --host a
	expect_exit 0 docket -L "$l1" ship --to "postgresql:///shard1?host=$PG2_DIR&user=mb&password=pwb" --host b
	local id0 id1
	id0=$(ledger_id "$l0")
	id1=$(ledger_id "$l1")
	[ "$(pg_sql -d "$s1" -c "SELECT count(*) FROM docket_events")" = "$(wc -l <"m${l1#L}.jsonl")" ] ||
		fail "shard 1 does not hold ${l1}'s events"
	# verify over both shards, as the reader
	expect_exit 0 docket fleet verify --db "$coord"
	grep -q "^ok $id0 (a)" out && grep -q "^ok $id1 (b)" out && [ "$(grep -c '^ok' out)" = 2 ] ||
		fail "verify over both shards: $(cat out err)"
	# log, sessions and pending: the coordinator's rows are the shards' rows
	local what
	for what in log sessions pending; do
		{ docket fleet $what --db "$s0" --json; docket fleet $what --db "$s1" --json; } | jq -cS . | sort >shards.jsonl
		expect_exit 0 docket fleet $what --db "$coord" --json
		jq -cS . out | sort >coord.jsonl
		[ "$what" = pending ] || [ -s shards.jsonl ] || fail "$what: no rows"
		diff shards.jsonl coord.jsonl >&2 || fail "fleet $what on the coordinator differs from the shards'"
	done
	grep -q "\"host\":\"b\"" coord.jsonl || [ "$what" = pending ] || fail "no row of shard 1"
	# the views over both shards, and one ledger's query pruned to its shard
	[ "$(pg_sql -d fleet -c "SELECT count(DISTINCT ledger_id) FROM docket_denials WHERE tool = 'shell'")" = 2 ] &&
		[ "$(pg_sql -d fleet -c "SELECT count(DISTINCT host) FROM docket_approvals WHERE tool = 'shell'")" = 2 ] ||
		fail "the views over both shards"
	pg_sql -d fleet -c "EXPLAIN SELECT * FROM docket_events WHERE ledger_id = '$id1'" >plan
	grep -q "Foreign Scan on docket_events" plan && [ "$(grep -c "Foreign Scan" plan)" = 1 ] || fail "not pruned: $(cat plan)"
	# an edit on the second server, found from the coordinator
	pg_sql -d "$s1" -c "UPDATE docket_events SET actor = 'user:ceo' WHERE type = 'approval.settled' AND seq = (SELECT min(seq) FROM docket_events WHERE type = 'approval.settled')"
	expect_exit 1 docket fleet verify --db "$coord"
	grep -q "^FAILED $id1 (b): .*column actor is not what its payload says" out && grep -q "^ok $id0 (a)" out ||
		fail "tampering on shard 1: $(cat out)"
	# a shard behind on the schema: the coordinator is too
	local latest
	latest=$(pg_sql -d "$s1" -c "SELECT max(version) FROM docket_schema")
	pg_sql -d "$s1" -c "DELETE FROM docket_schema WHERE version = $latest"
	expect_exit 3 docket fleet sessions --db "$coord"
	grep -q "schema is at version $((latest - 1))" err || fail "schema lag: $(cat err)"
}

# The views find a call's intent wherever its time is (schema 4 looks in
# the 7 days before the row first, then in every other month): a call
# answered 40 days after its intent, one whose events are out of time order,
# one of the usual kind; each row of docket_approvals and docket_denials
# carries its intent's tool, and the escalation is in docket_escalations;
# JIT is off in the fleet database (only there).
# a call answered 40 days after its intent, one whose events are out of
# time order, one of the usual kind (views_window, migrate_4)
window_events() {
	cat <<'JSONL'
{"type":"session.opened","session":"w","runtime":"codex/0.77.0","platform":"linux","cwd":"/w","time":"2025-01-02T10:00:00.000Z"}
{"type":"tool.intent","session":"w","invocation":"late","tool":"shell","args":{"command":["git","push"],"sandbox_permissions":"require_escalated"},"decision":{"verdict":"approval_required","source":"runtime"},"time":"2025-01-02T10:00:01.000Z"}
{"type":"approval.requested","session":"w","invocation":"late","request":"r1","time":"2025-01-02T10:00:02.000Z"}
{"type":"approval.settled","session":"w","invocation":"late","request":"r1","result":"denied","actor":"user:ana","time":"2025-02-11T10:00:00.000Z"}
{"type":"tool.completed","session":"w","invocation":"late","status":"denied","time":"2025-02-11T10:00:01.000Z"}
{"type":"tool.intent","session":"w","invocation":"back","tool":"read_file","args":{"path":"/etc/shadow"},"decision":{"verdict":"approval_required","source":"runtime"},"time":"2025-03-05T10:00:00.000Z"}
{"type":"approval.requested","session":"w","invocation":"back","request":"r2","time":"2025-03-01T08:00:00.000Z"}
{"type":"approval.settled","session":"w","invocation":"back","request":"r2","result":"approved","actor":"user:bo","time":"2025-03-01T09:00:00.000Z"}
{"type":"tool.intent","session":"w","invocation":"now","tool":"network","args":{"url":"https://x.example"},"decision":{"verdict":"denied","source":"runtime"},"time":"2025-03-06T10:00:00.000Z"}
{"type":"tool.completed","session":"w","invocation":"now","status":"denied","time":"2025-03-06T10:00:01.000Z"}
JSONL
}

case_views_window() {
	window_events >w.jsonl
	ledger W w.jsonl
	expect_exit 0 docket -L W ship --to "$PG_URL" --host w
	[ "$(pg_sql -c "SELECT string_agg(invocation || ' ' || coalesce(tool, '-') || ' ' || actor, ', ' ORDER BY seq) FROM docket_approvals")" = \
		"late shell user:ana, back read_file user:bo" ] || fail "approvals: $(pg_sql -c 'SELECT * FROM docket_approvals')"
	[ "$(pg_sql -c "SELECT string_agg(invocation || ' ' || coalesce(tool, '-') || ' ' || verdict || ' ' || coalesce(actor, '-'), ', ' ORDER BY seq) FROM docket_denials")" = \
		"late shell approval_required user:ana, now network denied -" ] || fail "denials: $(pg_sql -c 'SELECT * FROM docket_denials')"
	[ "$(pg_sql -c "SELECT string_agg(invocation || ' ' || tool, ', ') FROM docket_escalations")" = "late shell" ] ||
		fail "escalations: $(pg_sql -c 'SELECT * FROM docket_escalations')"
	# fleet init (the database's owner) turned JIT off for the database
	[ "$(pg_sql -c 'SHOW jit')" = off ] && [ "$(pg_sql -d postgres -c 'SHOW jit')" = on ] || fail "jit: $(pg_sql -c 'SHOW jit')"
}

# Schemas 5 and 6 (issue 35) from a store of schema 4: the store made by this
# docket's migrations 1 to 4 (DOCKET_FLEET_INIT_UPTO=4), refused by ship,
# fed the same batches as the case's store through its own ingest function;
# then `fleet init` migrates it. The views' rows are the same before and
# after, and equal to the raw queries over the tables (each call's intent
# looked up in every month); every month's partition has the new indexes,
# fleet verify passes, and shipping works again.
case_migrate_4() {
	python3 "$FLEET_HERE/gen_mix.py" 1 1500 2025-01 >a.jsonl
	python3 "$FLEET_HERE/gen_mix.py" 2 1500 2025-02 >b.jsonl
	window_events >w.jsonl
	ledger A a.jsonl
	ledger B b.jsonl
	ledger W w.jsonl
	local x id old="postgresql:///m4_$PGDATABASE?host=$PG_DIR&user=docket_admin"
	for x in A B W; do expect_exit 0 docket -L $x ship --to "$PG_URL" --host $x; done
	pg_sql -d postgres -c "CREATE DATABASE m4_$PGDATABASE" || exit 99
	DOCKET_FLEET_INIT_UPTO=4 docket fleet init --db "$old" >out || fail "init at 4"
	grep -q "version 4" out && [ "$(pg_sql -d "$old" -c 'SELECT max(version) FROM docket_schema')" = 4 ] ||
		fail "not a schema 4 store: $(cat out)"
	expect_exit 3 docket -L A ship --to "$old" --host A
	grep -q "schema is at version 4" err || fail "ship to schema 4: $(cat err)"
	for x in A B W; do
		id=$(ledger_id $x)
		pg_sql -c "COPY (SELECT seq, event ->> 'time', type, session, invocation, tool, verdict, status, actor,
			policy_revision, event, payload, hash FROM docket_events WHERE ledger_id = '$id' ORDER BY seq) TO STDOUT" >rows
		[ "$(pg_sql -d "$old" -c 'CREATE TEMP TABLE docket_batch OF docket_batch_row' -c '\copy docket_batch FROM rows' \
			-c "SELECT status FROM docket_ingest('$id', '$x', $(wc -l <rows))")" = ok ] || fail "schema 4 ingest of $x"
	done
	# (ORDER BY the primary key: one row per event in each)
	local views="SELECT * FROM docket_approvals ORDER BY ledger_id, seq;
		SELECT * FROM docket_denials ORDER BY ledger_id, seq;
		SELECT * FROM docket_escalations ORDER BY ledger_id, seq"
	local raw="SELECT s.ledger_id, l.host, s.seq, s.time, s.session, s.invocation, i.tool, i.event -> 'args',
			s.event ->> 'result', s.actor, s.event ->> 'reason'
		FROM docket_events s JOIN docket_ledgers l USING (ledger_id) LEFT JOIN docket_events i
			ON i.ledger_id = s.ledger_id AND i.session = s.session AND i.invocation = s.invocation AND i.type = 'tool.intent'
		WHERE s.type = 'approval.settled' ORDER BY s.ledger_id, s.seq;
		SELECT c.ledger_id, l.host, c.seq, c.time, c.session, c.invocation, i.tool, i.event -> 'args', i.verdict, c.status,
			(SELECT s.actor FROM docket_events s WHERE s.ledger_id = c.ledger_id AND s.session = c.session
				AND s.invocation = c.invocation AND s.type = 'approval.settled' ORDER BY s.seq DESC LIMIT 1)
		FROM docket_events c JOIN docket_ledgers l USING (ledger_id) LEFT JOIN docket_events i
			ON i.ledger_id = c.ledger_id AND i.session = c.session AND i.invocation = c.invocation AND i.type = 'tool.intent'
		WHERE c.type = 'tool.completed' AND c.status IN ('denied', 'unsupported') ORDER BY c.ledger_id, c.seq;
		SELECT * FROM docket_escalations ORDER BY ledger_id, seq"
	pg_sql -d "$old" -c "$views" >v4 || fail "views at 4"
	[ "$(grep -c . v4)" -gt 100 ] && grep -q '|late|shell|' v4 && grep -q 'require_escalated' v4 || fail "too few rows: $(wc -l <v4)"
	expect_exit 0 docket fleet init --db "$old"
	grep -q "migrated the fleet schema from version 4 to 7" out || fail "migration: $(cat out)"
	pg_sql -d "$old" -c "$views" >v5 || fail "views at 5"
	diff v4 v5 >&2 || fail "the views' rows changed with the migration"
	pg_sql -d "$old" -c "$raw" >raw || fail "raw"
	diff v5 raw >&2 || fail "the views differ from the raw queries"
	# the new indexes on every month's partition (January to March)
	[ "$(pg_sql -d "$old" -c "SELECT count(*) FILTER (WHERE indexdef LIKE '%INCLUDE (tool, verdict, seq) WHERE (type = ''tool.intent''::text)'),
		count(*) FILTER (WHERE indexdef LIKE '%(ledger_id, session, invocation, \"time\") WHERE (type = ''approval.settled''::text)'),
		count(*) FILTER (WHERE indexdef LIKE '%(\"time\") INCLUDE (ledger_id, session, invocation, status, seq) WHERE%'),
		count(DISTINCT tablename) FROM pg_indexes WHERE tablename ~ '^docket_events_20'")" = "3|3|3|3" ] ||
		fail "indexes: $(pg_sql -d "$old" -c "SELECT tablename, indexdef FROM pg_indexes WHERE tablename ~ '^docket_events_20'")"
	expect_exit 0 docket fleet verify --db "$old"
	[ "$(grep -c '^ok ' out)" = 3 ] || fail "verify after the migration: $(cat out err)"
	python3 "$FLEET_HERE/gen_mix.py" 3 300 2025-04 >c.jsonl
	ledger C c.jsonl
	expect_exit 0 docket -L C ship --to "$old" --host C
	expect_exit 0 docket fleet verify --db "$old"
}

# Migration 7 (issue 35): per-call records kept at ingest. A store made by
# migrations 1 to 6, fed batches through schema 6's own ingest function,
# refused by `replay --from`, then migrated by `fleet init`: its
# docket_calls (filled by the migration in one pass) is the same as that of
# a store shipped at schema 7 in batches of 50 (kept batch by batch), the
# fleet replay of either is the local replay, every month's partition has
# the partial index of the replayed events, fleet verify passes; events
# shipped after the migration extend the records the same way.
case_migrate_6() {
	python3 "$FLEET_HERE/gen_mix.py" 6 1200 2025-01 >a.jsonl
	python3 "$GEN" v 20 2025-03-01 >b.jsonl
	ledger A a.jsonl "$FIXTURES/replay/sessions.jsonl"
	local id old="postgresql:///m6_$PGDATABASE?host=$PG_DIR&user=docket_admin" db
	local calls="SELECT * FROM docket_calls ORDER BY ledger_id, session, invocation"
	id=$(ledger_id A)
	expect_exit 0 docket -L A ship --to "$PG_URL" --host A --batch 50
	pg_sql -d postgres -c "CREATE DATABASE m6_$PGDATABASE" || exit 99
	DOCKET_FLEET_INIT_UPTO=6 docket fleet init --db "$old" >out || fail "init at 6"
	[ "$(pg_sql -d "$old" -c 'SELECT max(version) FROM docket_schema')" = 6 ] || fail "not a schema 6 store"
	pg_sql -c "COPY (SELECT seq, event ->> 'time', type, session, invocation, tool, verdict, status, actor,
		policy_revision, event, payload, hash FROM docket_events WHERE ledger_id = '$id' ORDER BY seq) TO STDOUT" >rows
	[ "$(pg_sql -d "$old" -c 'CREATE TEMP TABLE docket_batch OF docket_batch_row' -c '\copy docket_batch FROM rows' \
		-c "SELECT status FROM docket_ingest('$id', 'A', $(wc -l <rows))")" = ok ] || fail "schema 6 ingest"
	expect_exit 3 docket replay --from "$old" --policy "$FIXTURES/replay/strict.yaml"
	expect_exit 0 docket fleet init --db "$old"
	grep -q "migrated the fleet schema from version 6 to 7" out || fail "migration: $(cat out)"
	pg_sql -c "$calls" >kept
	pg_sql -d "$old" -c "$calls" >filled
	[ "$(grep -c . kept)" -gt 100 ] && grep -q '|t$' kept || fail "too few call records: $(wc -l <kept)"
	diff kept filled >&2 || fail "the migration's records differ from those kept at ingest"
	[ "$(pg_sql -d "$old" -c "SELECT count(*) FILTER (WHERE indexdef LIKE '%(ledger_id, seq) WHERE (type = ANY%'),
		count(DISTINCT tablename) FROM pg_indexes WHERE tablename ~ '^docket_events_20'")" = "2|2" ] ||
		fail "index: $(pg_sql -d "$old" -c "SELECT tablename, indexdef FROM pg_indexes WHERE tablename ~ '^docket_events_20'")"
	expect_exit 0 docket fleet verify --db "$old"
	docket -L A record b.jsonl >/dev/null || exit 99
	for db in "$PG_URL" "$old"; do
		expect_exit 0 docket -L A ship --to "$db" --host A --batch 40
		expect_exit 0 docket fleet verify --db "$db"
		docket -L A replay --policy "$FIXTURES/replay/strict.yaml" --format json >local.json
		docket replay --from "$db" --policy "$FIXTURES/replay/strict.yaml" --format json >fleet.json
		python3 - local.json fleet.json "$id" A <<'PY' || fail "$db: fleet replay is not the local replay"
import json, sys
local, fleet = (json.load(open(x)) for x in sys.argv[1:3])
for part in ("changes", "undecided"):
    for c in local[part]:
        c["ledger"], c["host"] = sys.argv[3], sys.argv[4]
for s in local.get("sessions", []):
    s["host"] = sys.argv[4]
assert local["totals"]["calls"] > 200 and (local["changes"] or local["undecided"])
sys.exit(0 if local == fleet else 1)
PY
	done
	pg_sql -c "$calls" >kept
	pg_sql -d "$old" -c "$calls" >filled
	diff kept filled >&2 || fail "the records after the migration differ from those kept at ingest"
	pg_sql -d postgres -c "DROP DATABASE m6_$PGDATABASE WITH (FORCE)"
}
