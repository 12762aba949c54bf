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
		pg_sql -c "DELETE FROM docket_events WHERE ledger_id = '$id'; DELETE FROM docket_ledgers WHERE ledger_id = '$id'"
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
	pg_sql -c "DELETE FROM docket_events WHERE ledger_id = '$id'; DELETE FROM docket_ledgers WHERE ledger_id = '$id'"
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
		"SELECT docket_partition_for(now())"; do
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
	grep -q "columns do not describe" out || fail "$(cat out)"
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
		# sessions' cwd and mode, the pending call and decision)
		local only='del(.cwd, .mode, .risky_mode, .imported, .call, .decision)'
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

# batches crafted by hand (not by docket ship) against the ingest check, as
# the shipping role: each must be refused with its kind, nothing merged; the
# chain hashes are computed here (Python), not by the code under test
case_crafted_batches() {
	shipper_role mc pwc
	local id=cccccccccccccccccccccccccccccccc
	python3 - <<'PY'
import hashlib
def chain(rows, h=bytes(32)):
    out = []
    for seq, payload in rows:
        h = hashlib.sha256(h + seq.to_bytes(8, "big") + payload).digest()
        out.append((seq, payload, h))
    return out
def write(name, rows):
    with open(name, "w") as f:
        for seq, payload, h in rows:
            p = "\\N" if payload is None else "\\\\x" + payload.hex()
            f.write("%d\t2025-05-01T00:00:%02dZ\tx.test\ts\t\\N\t\\N\t\\N\t\\N\t\\N\t\\N\t{}\t%s\t\\\\x%s\n"
                    % (seq, seq % 60, p, h.hex()))
good = chain([(i, b"event %d" % i) for i in range(1, 6)])
write("ok.tsv", good)
# 1..3 then 5: a gap, the chain itself consistent
write("gap.tsv", chain([(1, b"a"), (2, b"b"), (3, b"c"), (5, b"e")]))
# 2 twice, each consistent with its predecessor, 3 missing: duplicate
write("dup.tsv", chain([(1, b"a"), (2, b"b"), (2, b"b2"), (4, b"d")]))
# a hash that does not follow from its payload, in the middle: chain_break
# (rewritten is for the first new event)
bad = chain([(i, b"x%d" % i) for i in range(1, 5)])
bad[2] = (bad[2][0], b"changed", bad[2][2])
write("hash.tsv", bad)
# a payload missing
nul = chain([(1, b"a"), (2, b"b")])
write("null.tsv", [nul[0], (2, None, nul[1][2])])
# after ok.tsv (1..5 held): the anchor 5 with another hash, then 6
alt = chain([(i, b"event %d" % i) for i in range(1, 5)] + [(5, b"other"), (6, b"six")])
write("anchor.tsv", alt[4:])
# after ok.tsv: 5 (the true anchor), then 6, 7 chained from it
more = chain([(i, b"event %d" % i) for i in range(1, 8)])
write("more.tsv", more[4:])
open("head7", "w").write(more[6][2].hex() + "\n")
PY
	local f want got
	ingest_as_mc() {
		PGPASSWORD=pwc pg_sql -U mc -c "CREATE TEMP TABLE docket_batch OF docket_batch_row;
			DO \$\$ BEGIN EXECUTE format('GRANT SELECT ON pg_temp.docket_batch TO %I',
			(SELECT p.proowner::regrole::text FROM pg_proc p WHERE p.oid = 'docket_ingest(text, text, bigint)'::regprocedure)); END \$\$" \
			-c "\\copy docket_batch FROM '$1'" -c "SELECT status || ' ' || high_seq || ' ' || split_part(detail, ':', 1) FROM docket_ingest('$id', 'c', $2)"
	}
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
