#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# The real Codex CLI (npm @openai/codex) against openai_stub.py.
#
# 1. `codex exec` with docket's hooks integrated (hooks.json + trust entries
#    in config.toml) in enforce mode: a parallel pair, a command docket
#    denies (the file it would delete still exists), a file write, a command
#    Codex itself refuses headless (a prefix rule asks, and exec never asks),
#    an MCP server behind `docket mcp-proxy`, two commands that fail (`false`,
#    `ls /nonexistent`: errors with their exit codes, issue 27), the
#    rollout's policy adopted by the live session, and the rollout imported
#    afterwards (--strict: every line type known) adding nothing.
#    The rollout's settings are composed under docket's layer (all_of).
#    Then `codex exec resume --last`: the resumed run's calls (a write, a
#    denied rm, `false`) go on in a continuation linked to the first run's
#    session, every session ends closed (Codex has no SessionEnd: docket
#    closes at Stop), nothing pending.
# 2. `codex app-server` behind `docket codex-relay`, driven by a scripted
#    client (fixtures/codex/app_client.py) that accepts one command,
#    declines the next and interrupts (cancel) the third: the approvals and the user's decisions recorded from
#    the protocol, the declined command not run, the rollout adding nothing.
#
# Assertions are on the ledger. Opt-in (DOCKET_REALCLIENT=1); skips (77) when
# npm cannot reach its registry.
#
#   codex.sh DOCKET_BIN SOURCE_ROOT
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
rc_begin codex "$1" "$2"
codex=$(need_npm_package @openai/codex codex) || exit $?
mkdir -p "$work/codex/rules" "$work/relay-home"

# codex_config HOME PORT [EXTRA]: a config.toml for the stub at PORT
codex_config() {
	cat >"$1/config.toml" <<TOML
model = "gpt-5"
model_provider = "stub"
approval_policy = "never"
sandbox_mode = "danger-full-access"

[model_providers.stub]
name = "stub"
base_url = "http://127.0.0.1:$2/v1"
wire_api = "responses"
${3:-}
TOML
}

# ---- 1. codex exec with the hooks ----
cat >"$work/script.json" <<'JSON'
[
  [{"shell":"echo one"},{"shell":"echo two"}],
  {"shell":"rm -f precious.txt"},
  {"shell":"echo hello > written.txt"},
  {"shell":"touch refused.txt"},
  {"namespace":"mcp__echo","name":"echo","arguments":{"text":"via mcp"}},
  {"shell":"false"},
  {"shell":"ls /nonexistent"},
  "Done.",
  {"shell":"echo again > resumed.txt"},
  {"shell":"rm -f precious.txt"},
  {"shell":"false"},
  "Resumed."
]
JSON
echo 'prefix_rule(pattern=["touch"], decision="prompt")' >"$work/codex/rules/default.rules"
start_stub exec "$here/openai_stub.py" --script "$work/script.json" --log "$work/requests.jsonl"
codex_config "$work/codex" "$STUB_PORT" "
[mcp_servers.echo]
command = \"$docket\"
args = [\"-L\", \"$work/ledger\", \"mcp-proxy\", \"--name\", \"echo\", \"--session\", \"rc-mcp\", \"--\", \"python3\", \"$src/fixtures/mcp/echo_server.py\"]"
export HOME=$work/home CODEX_HOME=$work/codex
"$docket" -L "$work/ledger" integrate codex --enforce --policy "$work/policy.yaml" >/dev/null || exit 99
cd "$proj" || exit 99
timeout 180 "$codex" exec --skip-git-repo-check "run the script" >"$work/out.txt" 2>"$work/err.txt"
echo "codex exec exit $?"

check "session recorded live" test "$(ev 'select(.type == "session.opened") | .runtime' | grep -c codex)" -ge 1
check "the trusted hooks ran (the hash formula is Codex's)" test "$(ev 'select(.type == "tool.intent" and .provenance.file != "mcp-proxy")' | wc -l)" -ge 5
check "parallel pair: both ran" test "$(outcome call_stub_1_1)$(outcome call_stub_1_2)" = okok
check "docket denied rm" test "$(outcome call_stub_2_1)" = denied
check "the denied rm did not run" test -f "$proj/precious.txt"
check "file write ran" test "$(outcome call_stub_3_1)" = ok
check "the file was written" test "$(cat "$proj/written.txt" 2>/dev/null)" = hello
check "headless refusal recorded as denied" test "$(outcome call_stub_4_1)" = denied
check "the refused command did not run" test ! -e "$proj/refused.txt"
check "the refusal was never dispatched" test -z "$(ev 'select(.type == "tool.dispatched" and .invocation == "call_stub_4_1")')"
check "MCP call through the hooks" test "$(outcome call_stub_5_1)" = ok
check "MCP call through mcp-proxy: joined to the hook's call through _meta (callId)" \
	test "$(ev 'select(.invocation == "call_stub_5_1" and .type == "tool.completed") | .provenance.file' | tr -d '"')" = mcp-proxy
check "one record per MCP call: none in the proxy's own session" \
	test -z "$(ev 'select(.session == "rc-mcp" and .type == "tool.intent")')"
check "the MCP call's result came from the server" \
	test "$(ev 'select(.invocation == "call_stub_5_1" and .type == "tool.completed") | .output' | tr -d '"')" = "via mcp"
check "shell calls mapped as the importer maps them" \
	test "$(ev 'select(.invocation == "call_stub_1_1" and .type == "tool.intent") | .args.command[1]' | tr -d '"')" = -lc
exit_of() { ev "select(.invocation == \"$1\" and .type == \"tool.completed\") | .exit_code"; }
check "false: an error with exit code 1, not ok" test "$(outcome call_stub_6_1)/$(exit_of call_stub_6_1)" = error/1
check "ls /nonexistent: an error with its exit code" test "$(outcome call_stub_7_1)/$(exit_of call_stub_7_1)" = error/2
check "the live session has the rollout's policy (approval never) under docket's layer" \
	test "$(ev 'select(.type == "policy.revised") | .policy | objects | .all_of[1] | select(.format == "codex") | .policy.approval_policy' | tr -d '"' | tail -1)" = never
first=$(ev 'select(.type == "session.opened" and .runtime == "codex" and .parent == null) | .session' | tr -d '"' | head -1)
check "show lists the composed revision (revision 2, docket's layer over the rollout's settings)" \
	test "$("$docket" -L "$work/ledger" show "$first" --json | jq -r '.policy_revisions[] | select(.reason | test("rollout")) | "\(.revision) \(.format)"')" = "2 docket"
check "nothing pending" test -z "$("$docket" -L "$work/ledger" pending --json)"
check "ledger verifies" verifies
rollout=$(find "$CODEX_HOME/sessions" -name 'rollout-*.jsonl' | head -1)
check "strict import of the rollout after live adds nothing" imports_nothing codex "$rollout" --strict

# ---- 1b. codex exec resume: the same session id again ----
check "the first run's session is closed at its Stop" \
	test "$("$docket" -L "$work/ledger" sessions --json | jq -r "select(.session == \"$first\") | .state")" = closed
timeout 180 "$codex" exec --skip-git-repo-check resume --last "go on" >"$work/out2.txt" 2>"$work/err2.txt"
echo "codex exec resume exit $?"
cont=$(ev "select(.type == \"session.opened\" and .labels.continues == \"$first\") | .session" | tr -d '"')
check "resume: a continuation linked to the first session" test "$cont" = "$first/continued-2"
check "resume: the write ran and is recorded in it" \
	test "$(ev "select(.session == \"$cont\" and .invocation == \"call_stub_9_1\" and .type == \"tool.completed\") | .status" | tr -d '"')/$(cat "$proj/resumed.txt" 2>/dev/null)" = ok/again
check "resume: docket denied rm again" test "$(outcome call_stub_10_1)" = denied
check "resume: the denied rm did not run" test -f "$proj/precious.txt"
check "resume: false is an error with exit code 1" test "$(outcome call_stub_11_1)/$(exit_of call_stub_11_1)" = error/1
check "resume: every Codex session closed" \
	test -z "$("$docket" -L "$work/ledger" sessions --json | jq -r 'select(.runtime == "codex" and .state != "closed") | .session')"
check "resume: the continuation opens with the composed revision in force" \
	test "$(ev "select(.session == \"$cont\" and .type == \"policy.revised\" and .revision == 1) | .policy.all_of[1].format" | tr -d '"')" = codex
check "resume: nothing pending" test -z "$("$docket" -L "$work/ledger" pending --json)"
check "resume: ledger verifies" verifies

# ---- 2. codex app-server behind docket codex-relay ----
cat >"$work/relay-script.json" <<'JSON'
[{"shell":"echo relayed > relayed.txt"},{"shell":"rm -f precious.txt"},{"shell":"touch interrupted.txt"},"Done."]
JSON
start_stub relay "$here/openai_stub.py" --script "$work/relay-script.json"
codex_config "$work/relay-home" "$STUB_PORT"   # no hooks: the relay alone
echo '["accept","decline","cancel"]' >"$work/decisions.json"
CODEX_HOME=$work/relay-home timeout 180 python3 "$src/fixtures/codex/app_client.py" "$work/decisions.json" \
	--sent "$work/sent.jsonl" --recv "$work/recv.jsonl" -- \
	"$docket" -L "$work/ledger" codex-relay -- "$codex" app-server >"$work/relay-out.txt" 2>"$work/relay-err.txt"
echo "app-server client: $(tr '\n' ' ' <"$work/relay-out.txt")"
thread=$(jq -r 'select(.id == 2 and .result.thread.id != null) | .result.thread.id' "$work/recv.jsonl")
rel() { ev "select(.session == \"$thread\" and .invocation == \"$1\" and .type == \"$2\") | $3" | tr -d '"'; }
check "relay: the thread is a session" \
	test "$(ev "select(.type == \"session.opened\" and .session == \"$thread\") | .labels.capture" | tr -d '"')" = codex-relay
check "relay: the approval request recorded" test -n "$(rel call_stub_1_1 approval.requested .prompt)"
check "relay: the user's accept recorded" test "$(rel call_stub_1_1 approval.settled .result)" = approved
check "relay: dispatched on the approval" test "$(rel call_stub_1_1 tool.dispatched .provenance.file)" = "codex-relay (dispatched on approval)"
check "relay: the accepted command ran" test "$(rel call_stub_1_1 tool.completed .status)" = ok
check "relay: its file was written" test "$(cat "$proj/relayed.txt" 2>/dev/null)" = relayed
check "relay: the user's decline recorded" test "$(rel call_stub_2_1 approval.settled .result)" = denied
check "relay: the declined command ends denied" test "$(rel call_stub_2_1 tool.completed .status)" = denied
check "relay: the declined rm did not run" test -f "$proj/precious.txt"
check "relay: the offered decisions are in the prompt" grep -q 'offered: accept' <<<"$(rel call_stub_2_1 approval.requested .prompt)"
check "relay: the interrupted approval (cancel) is aborted, never approved" \
	test "$(rel call_stub_3_1 approval.settled .result)" = aborted
check "relay: the interrupted command never dispatched" test -z "$(rel call_stub_3_1 tool.dispatched .seq)"
check "relay: the interrupted command did not run" test ! -e "$proj/interrupted.txt"
check "relay: nothing pending" test -z "$("$docket" -L "$work/ledger" pending --json)"
check "relay: ledger verifies" verifies
rollout=$(find "$work/relay-home/sessions" -name 'rollout-*.jsonl' | head -1)
check "relay: strict import of the rollout adds nothing" imports_nothing codex "$rollout" --strict
rc_end "$work/err.txt" "$work/err2.txt" "$work/relay-err.txt"
