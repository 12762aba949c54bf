#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# seed_replay_input.sh DOCKET: rewrite corpus/replay_input/ from the fixtures
# as the fleet database returns them (a throwaway server, tests/fleet/pg.sh):
# one seed per fixture, the events replay reads, each with its call's facts.
set -euo pipefail
docket=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$root/tests/fleet/pg.sh"
pg_start
work=$PG_DIR/seeds
mkdir -p "$work" "$here/corpus/replay_input"
"$docket" fleet init --db "$PG_URL" >/dev/null
for f in sessions/demo-basic sessions/open-pending replay/sessions; do
	name=$(basename "$f")
	"$docket" -L "$work/$name" init >/dev/null
	"$docket" -L "$work/$name" record "$root/fixtures/$f.jsonl" >/dev/null
	"$docket" -L "$work/$name" ship --to "$PG_URL" --host "$name" >/dev/null
	pg_sql -c "SELECT e.type, e.event ->> 'result', e.session || '/' || e.invocation, encode(e.payload, 'hex')
		FROM docket_events e JOIN docket_ledgers l USING (ledger_id) WHERE l.host = '$name'
		AND e.type IN ('session.opened', 'session.closed', 'policy.revised', 'tool.intent', 'approval.settled')
		ORDER BY e.seq" -F $'\t' >"$work/$name.tsv"
	python3 - "$work/$name.tsv" "$here/corpus/replay_input/$name.bin" <<'PY'
import sys
names = [None, "allowed", "approval_required", "denied", "unsupported", "approved", "approved_for_session",
         "aborted", "superseded", "", "bogus"]
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
intents = {}
out = bytearray()
for i, (typ, result, call, hexp) in enumerate(rows):
    p = bytes.fromhex(hexp)
    if typ == "tool.intent":
        intents[call] = i
    ref = intents.get(call, 0xff) if result == "approved_for_session" else 0xff
    last = names.index(result) if result in names else 0
    out += bytes([1 if typ == "approval.settled" else 0, 2 if typ == "approval.settled" else 0, last, ref % 256])
    out += len(p).to_bytes(2, "big") + p
open(sys.argv[2], "wb").write(out)
PY
done
ls -l "$here/corpus/replay_input"
