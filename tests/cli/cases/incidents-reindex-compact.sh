# the incident index (meta "incidents:<session>") is a projection: `reindex`
# rebuilds it from the ledger.incident events and `compact` keeps it, so
# `show` and `sessions` list the same incidents before, after a reindex and
# after a compact; a fold recorded in the spool's markers is not folded
# again after a compact.
export HOME=$PWD
hook() { docket hook codex </dev/stdin >/dev/null || echo "hook: exit $?"; }
echo '{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t1","cwd":"/w"}' | hook
docket pending >/dev/null   # a reader folds first: the hook's records are in the chain
mkdir -m 700 -p "$DOCKET_LEDGER/spool"
e() { printf '%s\n' "$2" >"$DOCKET_LEDGER/spool/000000000000000$1-0000000001-00000000.json"; }
e 1 '{"type":"tool.dispatched","session":"s1","invocation":"gone"}'
e 2 'not json'
echo '{"session_id":"s1","hook_event_name":"UserPromptSubmit","cwd":"/w"}' | hook   # records nothing: show folds
show() {
	echo "== $1"
	docket show s1 --json | jq -c '.incidents | map([.seq, .file])'
	docket sessions --json | jq -c '[.session, .incidents]'
}
show before
docket reindex
show "after reindex"
docket compact >/dev/null
show "after compact"
# a crash between a fold's commit and its unlink leaves the entry's file:
# the next fold finds its marker and only removes it, after a compact too
e 1 '{"type":"tool.dispatched","session":"s1","invocation":"gone"}'
echo '{"session_id":"s1","hook_event_name":"UserPromptSubmit","cwd":"/w"}' | hook
show "after a second fold"
# what still waits (a hook empties the journal it folded, spool first: no
# file of it is listed then)
find "$DOCKET_LEDGER/spool" -type f -size +0 -printf '%f\n' | sort
docket verify | head -1
