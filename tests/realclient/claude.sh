#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# The real Claude Code CLI (npm @anthropic-ai/claude-code), headless, against
# anthropic_stub.py, with docket integrated in enforce mode. Scenarios: a
# parallel pair of allowed commands, a command docket denies (and the file it
# would delete still exists), a file write, a command Claude itself refuses
# headless, an MCP server behind `docket mcp-proxy`; then (issue 27) the
# same session continued (`--continue`) and resumed (`--resume`) after
# SessionEnd closed it, a denied call while another process holds the
# ledger's writer lock (it must not run), and a docket ask under `claude -p`
# (nobody to prompt: settled, nothing pending, the session closed), and
# Claude Code killed (SIGKILL) while a call runs: the call is in doubt in
# `recover`, and in `pending` once `--resume` starts the session again,
# never "ask for approval"; `recover --apply` settles it. A subagent (its
# session linked to the parent's Task call, both closed). Last,
# `disableAllHooks`: `integrate --check` fails and names it, and the CLI
# indeed runs no hook.
# Assertions are on the ledger. Opt-in (DOCKET_REALCLIENT=1); skips (77)
# when npm cannot reach its registry.
#
#   claude.sh DOCKET_BIN SOURCE_ROOT
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
rc_begin claude "$1" "$2"
claude=$(need_npm_package @anthropic-ai/claude-code claude) || exit $?
mkdir -p "$proj/.claude"
cat >"$proj/.claude/settings.json" <<JSON
{"permissions":{"allow":["Bash(echo:*)","Bash(rm:*)","Write","mcp__echo__echo"]}}
JSON
cat >"$work/script.json" <<JSON
[
  [{"name":"Bash","input":{"command":"echo one"}},{"name":"Bash","input":{"command":"echo two"}}],
  {"name":"Bash","input":{"command":"rm -f precious.txt"}},
  {"name":"Write","input":{"file_path":"$proj/written.txt","content":"hello"}},
  {"name":"Bash","input":{"command":"touch refused.txt"}},
  {"name":"mcp__echo__echo","input":{"text":"via mcp"}},
  "Done."
]
JSON
cat >"$work/mcp.json" <<JSON
{"mcpServers":{"echo":{"command":"$docket","args":["-L","$work/ledger","mcp-proxy","--name","echo",
 "--session","rc-mcp","--","python3","$src/fixtures/mcp/echo_server.py"]}}}
JSON
# a trusted workspace: Claude Code applies its project settings' allow rules
echo "{\"projects\":{\"$proj\":{\"hasTrustDialogAccepted\":true}}}" >"$work/home/.claude.json"
export HOME=$work/home DOCKET_CLAUDE_MANAGED_SETTINGS=$work/none
start_stub anthropic "$here/anthropic_stub.py" --script "$work/script.json" --log "$work/requests.jsonl"
cd "$proj" || exit 99
"$docket" -L "$work/ledger" integrate claude --scope project --enforce --policy "$work/policy.yaml" >/dev/null || exit 99
ANTHROPIC_BASE_URL=http://127.0.0.1:$STUB_PORT ANTHROPIC_API_KEY=stub timeout 180 \
	"$claude" -p "run the script" --output-format json --mcp-config "$work/mcp.json" \
	>"$work/out.json" 2>"$work/err.txt"
echo "claude exit $?"
sid=$(jq -r .session_id "$work/out.json")

check "session recorded live and closed" grep -qx "$sid" <<<"$(ev 'select(.type == "session.closed") | .session' | tr -d '"')"
check "effective settings are the policy in force (the claude layer under docket's)" \
	test "$(ev 'select(.type == "policy.revised") | .policy.all_of[1] | select(.format == "claude") | .policy.permissions.allow | length')" = 4
check "the session's mode is no new revision (SessionStart has none: the settings' default)" \
	test "$(ev 'select(.type == "policy.revised") | .revision')" = 1
check "parallel pair: both ran" test "$(outcome toolu_stub_1_1)$(outcome toolu_stub_1_2)" = okok
check "docket denied rm" test "$(outcome toolu_stub_2_1)" = denied
check "the denied rm did not run" test -f "$proj/precious.txt"
check "the denial names docket's rule" \
	grep -q 'forbids rm' <<<"$(ev 'select(.invocation == "toolu_stub_2_1" and .type == "tool.completed") | .error')"
check "file write ran" test "$(outcome toolu_stub_3_1)" = ok
check "the file was written" test "$(cat "$proj/written.txt" 2>/dev/null)" = hello
check "headless refusal recorded as denied" test "$(outcome toolu_stub_4_1)" = denied
check "the refused command did not run" test ! -e "$proj/refused.txt"
check "MCP call through the hooks" test "$(outcome toolu_stub_5_1)" = ok
check "MCP call through mcp-proxy: joined to the hook's call (claudecode/toolUseId)" \
	test "$(ev "select(.session == \"$sid\" and .type == \"tool.completed\" and .provenance.file == \"mcp-proxy\") | .status" | tr -d '"')" = ok
check "one record per MCP call: none in the proxy's own session" \
	test -z "$(ev 'select(.session == "rc-mcp" and .type == "tool.intent")')"
check "nothing pending" test -z "$("$docket" -L "$work/ledger" pending --json)"
check "ledger verifies" verifies
# importing the transcript after the live session adds no copy and no conflict
transcript=$(ev 'select(.type == "session.opened" and .labels.transcript != null) | .labels.transcript' | head -1 | tr -d '"')
check "import after live adds nothing" imports_nothing claude "$transcript"

# run_claude NAME SCRIPT_JSON CLAUDE_ARGS...: one more headless run against
# a stub of its own (tool ids start again at toolu_stub_1_1)
run_claude() {
	local name=$1 script=$2
	shift 2
	printf '%s\n' "$script" >"$work/script-$name.json"
	start_stub "anthropic-$name" "$here/anthropic_stub.py" --script "$work/script-$name.json"
	ANTHROPIC_BASE_URL=http://127.0.0.1:$STUB_PORT ANTHROPIC_API_KEY=stub timeout 180 \
		"$claude" -p "$@" --output-format json >"$work/out-$name.json" 2>>"$work/err.txt"
	echo "claude ($name) exit $?"
}
# in SESSION: the status of INVOCATION's outcome
outcome_in() {
	ev "select(.type == \"tool.completed\" and .session == \"$1\" and .invocation == \"$2\") | .status" | tr -d '"'
}

# --continue and --resume reuse the closed session's id: recorded in linked continuations
run_claude continue '[{"name":"Bash","input":{"command":"echo three"}},{"name":"Bash","input":{"command":"rm -f precious.txt"}},"Done."]' \
	--continue "go on"
check "--continue: calls recorded in a continuation" test "$(outcome_in "$sid/continued-2" toolu_stub_1_1)" = ok
check "--continue: the continuation names the closed session" \
	test "$(ev "select(.type == \"session.opened\" and .session == \"$sid/continued-2\") | .labels.continues" | tr -d '"')" = "$sid"
check "--continue: docket's denial recorded" test "$(outcome_in "$sid/continued-2" toolu_stub_2_1)" = denied
check "--continue: the denied rm did not run" test -f "$proj/precious.txt"
check "--continue: the continuation closed" \
	test -n "$(ev "select(.type == \"session.closed\" and .session == \"$sid/continued-2\") | .seq")"
run_claude resume '[{"name":"Bash","input":{"command":"echo four"}},"Done."]' --resume "$sid" "once more"
check "--resume: calls recorded in the next continuation" test "$(outcome_in "$sid/continued-3" toolu_stub_1_1)" = ok

# another process holds the ledger's writer lock: the denied call must not run
python3 "$src/fixtures/hooks/hold_lock.py" "$work/ledger" 40 "$work/lock-ready" &
lock_pid=$!
for _ in $(seq 200); do [ -s "$work/lock-ready" ] && break; sleep 0.05; done
run_claude lock '[{"name":"Bash","input":{"command":"rm -f precious.txt"}},"Done."]' "delete it"
lsid=$(jq -r .session_id "$work/out-lock.json")
check "held lock: the denied rm did not run" test -f "$proj/precious.txt"
check "held lock: the records wait in the spool" test -n "$(ls "$work/ledger/spool" 2>/dev/null)"
kill "$lock_pid" 2>/dev/null
wait "$lock_pid" 2>/dev/null
# the next write folds them (a hook event that records nothing)
echo "{\"session_id\":\"$lsid\",\"hook_event_name\":\"Notification\"}" |
	"$docket" -L "$work/ledger" hook claude >/dev/null
check "held lock: the denial reached the chain" test "$(outcome_in "$lsid" toolu_stub_1_1)" = denied
check "held lock: the session closed" test -n "$(ev "select(.type == \"session.closed\" and .session == \"$lsid\") | .seq")"
check "held lock: no incident" test -z "$(ev 'select(.type == "ledger.incident") | .seq')"

# a subagent (the Task/Agent tool): its own session, linked to its parent and
# the parent's call that started it, its call recorded, both closed
jq '.permissions.allow += ["Task","Agent"]' .claude/settings.json >settings.tmp && mv settings.tmp .claude/settings.json
run_claude agent '[{"name":"Task","input":{"description":"check","prompt":"run echo sub","subagent_type":"general-purpose"}},{"name":"Bash","input":{"command":"echo sub"}},"Sub done.","Done."]' "delegate it"
gsid=$(jq -r .session_id "$work/out-agent.json")
sub=$(ev "select(.type == \"session.opened\" and .parent == \"$gsid\") | .session" | tr -d '"')
check "subagent: a session of its own, linked to the parent's Task call" \
	test "$(ev "select(.type == \"session.opened\" and .session == \"$sub\") | .labels.parent_call" | tr -d '"')" = toolu_stub_1_1
check "subagent: its call recorded in it" test "$(outcome_in "$sub" toolu_stub_2_1)" = ok
check "subagent: the Task call completed in the parent" test "$(outcome_in "$gsid" toolu_stub_1_1)" = ok
check "subagent: both sessions closed" \
	test "$(ev "select(.type == \"session.closed\" and (.session == \"$sub\" or .session == \"$gsid\")) | .seq" | wc -l)" = 2

# a docket ask under claude -p: nobody to prompt, the CLI refuses; settled, not pending
ask=$work/ask
mkdir -p "$ask/.claude"
echo '{"permissions":{"allow":["Bash(git:*)"]}}' >"$ask/.claude/settings.json"
echo "{\"projects\":{\"$proj\":{\"hasTrustDialogAccepted\":true},\"$ask\":{\"hasTrustDialogAccepted\":true}}}" \
	>"$work/home/.claude.json"
(cd "$ask" && "$docket" -L "$work/ledger" integrate claude --scope project --enforce \
	--policy "$src/fixtures/policies/team.yaml" >/dev/null) || exit 99
(cd "$ask" && run_claude ask '[{"name":"Bash","input":{"command":"git push origin main"}},"Done."]' "push it")
asid=$(jq -r .session_id "$work/out-ask.json")
check "ask under -p: the call is settled (not pending)" test "$(outcome_in "$asid" toolu_stub_1_1)" = denied
check "ask under -p: the session closed" test -n "$(ev "select(.type == \"session.closed\" and .session == \"$asid\") | .seq")"
# killed mid-call: the running call is in doubt, never a question for approval
# (hooks that record only: what is tested is the kill, not a decision)
cd "$proj" || exit 99
"$docket" -L "$work/ledger" integrate claude --scope project >/dev/null || exit 99
jq '.permissions.allow += ["Bash(sleep:*)"]' .claude/settings.json >settings.tmp && mv settings.tmp .claude/settings.json
printf '%s\n' '[{"name":"Bash","input":{"command":"sleep 20"}},"Done."]' >"$work/script-kill.json"
start_stub anthropic-kill "$here/anthropic_stub.py" --script "$work/script-kill.json"
ANTHROPIC_BASE_URL=http://127.0.0.1:$STUB_PORT ANTHROPIC_API_KEY=stub timeout 180 \
	"$claude" -p "wait" --output-format json >"$work/out-kill.json" 2>>"$work/err.txt" &
kpid=$!
running() { ev 'select(.type == "tool.intent" and .args.command[2] == "sleep 20") | .session' | tr -d '"' | head -1; }
for _ in $(seq 300); do [ -n "$(running)" ] && break; sleep 0.1; done
ksid=$(running)
sleep 2   # PreToolUse answered: the call runs
kill -9 "$kpid" 2>/dev/null
wait "$kpid" 2>/dev/null
check "killed: the call was recorded" test -n "$ksid"
check "killed: recover plans the running call as in doubt, not a question" \
	test "$("$docket" -L "$work/ledger" recover --json | jq -r ".items[] | select(.session == \"$ksid\") | .state + \" \" + .runtime")" = "in_doubt none"
run_claude kill-resume '["Done."]' --resume "$ksid" "go on"
kstate=$("$docket" -L "$work/ledger" pending --json | jq -r "select(.session == \"$ksid\") | .state")
check "killed: after --resume the call is dispatched (in doubt, or settled from the transcript)" \
	test -n "$(ev "select(.type == \"tool.dispatched\" and .session == \"$ksid\") | .seq")" -a "$kstate" != undecided
"$docket" -L "$work/ledger" recover --apply >/dev/null
check "killed: settled, never asked about" test -z "$(ev "select(.type == \"approval.requested\" and .session == \"$ksid\") | .seq")"
# disableAllHooks: Claude Code runs no hook at all; integrate --check says so (exit 1)
jq '.disableAllHooks = true' .claude/settings.json >settings.tmp && mv settings.tmp .claude/settings.json
"$docket" -L "$work/ledger" integrate claude --scope project --check >"$work/check.txt" 2>&1
check "disableAllHooks: integrate --check fails" test $? -ne 0
check "disableAllHooks: --check names it" grep -q 'disableAllHooks' "$work/check.txt"
run_claude disabled '[{"name":"Bash","input":{"command":"echo off"}},"Done."]' "run it"
dsid=$(jq -r .session_id "$work/out-disabled.json")
check "disableAllHooks: the real CLI ran no docket hook (nothing recorded)" \
	test -z "$(ev "select(.session == \"$dsid\") | .seq")"
check "nothing pending at the end" test -z "$("$docket" -L "$work/ledger" pending --json)"
check "ledger verifies at the end" verifies
rc_end "$work/err.txt"
