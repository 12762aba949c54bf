#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# The README demo: record a realistic agent session into a fresh ledger,
# prove it was not altered, and look at it; then run a runtime that
# crashes after dispatching a call, look at what is pending, recover
# (new epoch, plan, re-dispatch), and check the ledger again; replay the
# sessions against a stricter and a looser policy; sign a checkpoint, have a
# witness co-sign it and a later one (with the consistency proof between
# them), verify offline, export for a SIEM, and write the HTML audit report. Last, replay
# every recorded call against a stricter and a looser policy and show what
# each would change.
#
#   scripts/demo.sh            install missing packages (scripts/deps.sh), build
#                              with meson into ./build if needed
#   DOCKET_BIN=path scripts/demo.sh
#                              use that docket binary instead (and
#                              EXAMPLE_BIN for examples/runtime_example)
#   DEMO_OUT=dir               where the ledger goes (default ./demo-out)
#   scripts/demo.sh --live     a real Claude Code session recorded and enforced
#                              live (npm install on first use; scripts/demo-live.sh)
#   scripts/demo.sh --fleet    then start a throwaway PostgreSQL server
#                              (tests/fleet/pg.sh), ship the demo ledger and
#                              two simulated machines, verify centrally and
#                              run a fleet replay and report (docs/fleet.md)
set -euo pipefail
live=0
[ "${1:-}" = "--live" ] && live=1

fleet=0
[ "${1:-}" = "--fleet" ] && fleet=1

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

if [ -n "${DOCKET_BIN:-}" ]; then
	docket=$DOCKET_BIN
else
	# missing Debian packages: installed as root, else the command is printed
	bash "$root/scripts/deps.sh" --quiet
	if [ ! -f "$root/build/build.ninja" ]; then
		meson setup "$root/build" "$root" >/dev/null
	fi
	ninja -C "$root/build" >/dev/null
	docket="$root/build/app/cli/docket"
fi
# the build tree: app/cli/docket beside examples/runtime_example
example=${EXAMPLE_BIN:-$(dirname "$docket")/../../examples/runtime_example}

out=${DEMO_OUT:-$root/demo-out}
mkdir -p "$out"
rm -rf "$out/ledger"
export DOCKET_LEDGER="$out/ledger"

step() {
	printf '\n\033[1m== %s\033[0m\n' "$1"
	shift
	printf '$ docket %s\n' "$*"
	"$docket" "$@"
}
if [ -n "${NO_COLOR:-}" ] || [ ! -t 1 ]; then
	step() {
		printf '\n== %s\n' "$1"
		shift
		printf '$ docket %s\n' "$*"
		"$docket" "$@"
	}
fi

cd "$root"
echo "docket demo: ledger in $DOCKET_LEDGER"
step "create a ledger" init
step "record a session: a multi-call turn, an approval, a denial by the user, a policy denial, a patch" \
	record fixtures/sessions/demo-basic.jsonl
step "prove the log was not altered (hash chain, frames, indexes)" verify
step "the sessions in the ledger" sessions
step "one session as a timeline per tool call" show demo-basic
step "size and compression" stats

# A runtime (examples/runtime_example.c, the C API) runs a session under a
# docket policy: docket decides each call. It dies right after dispatching
# `npm test` (T1 committed, the tool never ran).
run() {
	printf '\n== %s\n' "$1"
	shift
	printf '$ %s\n' "$*"
	"$@" || true
}
run "a runtime records a session under a policy, then crashes after dispatching a call" \
	"$example" "$DOCKET_LEDGER" --crash-after-dispatch
step "what is pending after the crash" pending
step "the recovery plan (nothing is written yet)" recover
run "the runtime restarts: a new epoch fences the old one; it applies the plan and re-dispatches" \
	"$example" "$DOCKET_LEDGER" --recover
step "the session: the call in doubt was re-dispatched as attempt 2" show build-42
step "nothing pending, and the chain still verifies" verify

# A policy author's question before shipping a change: which recorded calls
# would it decide differently? (docs/replay.md; in CI: --fail-on loosened.)
step "replay every recorded call against a stricter policy: what it tightens" \
	replay --policy fixtures/replay/demo-strict.yaml
step "... and against a looser one: what it loosens (a call a human had denied is flagged)" \
	replay --policy fixtures/replay/demo-loose.yaml

# Security teams: sign the head, prove a copy offline, feed the SIEM, read it
# (docs/audit.md).
rm -rf "$out/signing.key" "$out/signing.key.pub" "$out/witness.key" "$out/witness.key.pub" \
	"$out/witness-state" "$out"/checkpoint-*.note "$out"/checkpoint-*.cosigned "$out/consistency.proof" \
	"$out/rm-build.receipt"
step "a signing key for checkpoints" keygen -o "$out/signing.key"
step "sign the chain head and the Merkle tree (the signed note goes to a file kept elsewhere)" \
	checkpoint --key "$out/signing.key" -o "$out/checkpoint-1.note"
# A witness: another party, with its own key, that co-signs only checkpoints
# that extend what it saw (docs/audit.md, "Witnesses and cosignatures").
step "a witness's key" keygen -o "$out/witness.key"
step "the witness sees this log for the first time: trusted on first use, co-signed" \
	witness --state "$out/witness-state" --pubkey "$out/signing.key.pub" --key "$out/witness.key" \
	"$out/checkpoint-1.note" -o "$out/checkpoint-1.cosigned"
step "more sessions are recorded" record fixtures/replay/sessions.jsonl
step "a new checkpoint" checkpoint --key "$out/signing.key" -o "$out/checkpoint-2.note"
step "the consistency proof from the first checkpoint to the new one" \
	checkpoint --consistency "$out/checkpoint-1.note" -o "$out/consistency.proof"
step "the witness checks the proof and co-signs the new checkpoint" \
	witness --state "$out/witness-state" --pubkey "$out/signing.key.pub" --key "$out/witness.key" \
	--proof "$out/consistency.proof" "$out/checkpoint-2.note" -o "$out/checkpoint-2.cosigned"
step "prove the ledger offline: the public key and the checkpoint the witness co-signed" \
	verify --pubkey "$out/signing.key.pub" --witness "$out/checkpoint-2.cosigned" \
	--witness-key "$out/witness.key.pub"
step "a receipt for one approved call (its events, their inclusion proofs, the signed checkpoint)" \
	prove demo-basic call_rm_build -o "$out/rm-build.receipt"
step "anyone with the log's public key checks it without the ledger: who approved what, when, under which policy" \
	verify-receipt "$out/rm-build.receipt" --pubkey "$out/signing.key.pub"
step "the calls and approvals as OCSF records for a SIEM, secrets redacted" \
	export --format ocsf --redact -o "$out/events.ocsf.ndjson"
step "the audit report" report -o "$out/report.html"

if [ $fleet -eq 1 ]; then
	# The fleet (docs/fleet.md): a throwaway server on a Unix socket, stopped
	# when this script exits.
	. "$root/tests/fleet/pg.sh"
	pg_start
	db=$PG_URL
	step "create the fleet schema in PostgreSQL" fleet init --db "$db"
	step "ship this machine's ledger (every batch is checked against the chain at ingest)" \
		ship --to "$db" --host laptop-ana
	for m in ci-runner-7 laptop-lee; do
		rm -rf "$out/$m"
		"$docket" -L "$out/$m" init >/dev/null
	done
	python3 "$root/tests/fleet/gen.py" ci 3 2025-06-03 >"$out/ci-runner-7.jsonl"
	"$docket" -L "$out/ci-runner-7" record "$out/ci-runner-7.jsonl" >/dev/null
	"$docket" -L "$out/laptop-lee" record fixtures/sessions/open-pending.jsonl >/dev/null
	"$docket" -L "$out/laptop-lee" record fixtures/replay/sessions.jsonl >/dev/null
	step "two more machines ship theirs" -L "$out/ci-runner-7" ship --to "$db" --host ci-runner-7
	"$docket" -L "$out/laptop-lee" ship --to "$db" --host laptop-lee
	step "re-check every ledger held centrally" fleet verify --db "$db"
	step "the fleet's sessions" fleet sessions --db "$db"
	step "calls still pending anywhere" fleet pending --db "$db"
	step "one machine's session as its own docket log shows it" \
		fleet log --db "$db" --host laptop-ana --session demo-basic
	printf '\n== who approved what, on any machine (SQL on the docket_approvals view)\n'
	pg_sql -c "SELECT host, time, actor, result, args -> 'command' FROM docket_approvals ORDER BY time" \
		-P format=aligned -P tuples_only=off
	step "replay the whole fleet against the stricter policy" \
		replay --from "$db" --policy fixtures/replay/demo-strict.yaml
	step "the fleet audit report (machines as a dimension)" report --from "$db" -o "$out/fleet-report.html"
fi
if [ $live -eq 1 ]; then
	bash "$root/scripts/demo-live.sh" "$docket" "$out"
else
	printf '\nLive capture: scripts/demo.sh --live records and enforces a real Claude Code\nsession (the CLI comes from npm on first use; see docs/integrations.md).\n'
fi
