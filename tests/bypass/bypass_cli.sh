#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bypass_cli.sh BYPASS_RUN DOCKET [N_EVAL] [N_HOOK]: the bypass property
# through the binaries. N_EVAL generated scripts (default 100) through
# `docket policy eval` under the three deny policies, and the first N_HOOK
# of them (default 30) through `docket hook claude --enforce` and
# `docket hook codex --enforce` under each policy: none may be allowed.
set -u
run=$(realpath "$1") docket=$(realpath "$2") n_eval=${3:-100} n_hook=${4:-30}
work=$(mktemp -d) || exit 99
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 99
export HOME=$work/home DOCKET_LEDGER=$work/ledger DOCKET_CLAUDE_MANAGED_SETTINGS=$work/none NO_COLOR=1 LC_ALL=C
mkdir -p home
"$run" --count "$n_eval" --seed 7 --emit scripts.jsonl --emit-count "$n_eval" --policies . >/dev/null || exit 1
ctx='{"cwd":"/w","workspace_roots":["/w"],"approval_policy":"never","client_sandbox":true}'
policies=(deny.yaml codex:deny.rules claude:settings.json)
evals=0 hooks=0 bad=0 i=0
while IFS= read -r s; do
	i=$((i + 1))
	call=$(jq -cn --argjson s "$s" '{tool:"shell",args:{command:["bash","-lc",$s]}}')
	for p in "${policies[@]}"; do
		v=$("$docket" policy eval "$p" --call "$call" --context "$ctx" --json | jq -r .verdict)
		evals=$((evals + 1))
		if [ "$v" = allowed ] || [ -z "$v" ]; then
			echo "BYPASS via policy eval ($p, verdict '$v'): $s"
			bad=1
		fi
	done
	[ "$i" -gt "$n_hook" ] && continue
	for client in claude codex; do
		for p in "${policies[@]}"; do
			ev=$(jq -cn --argjson s "$s" --arg id "t$i-$client-${p%%:*}" \
				'{session_id:"bypass",transcript_path:"/nonexistent/t.jsonl",cwd:"/w",
				  hook_event_name:"PreToolUse",tool_name:"Bash",tool_input:{command:$s},tool_use_id:$id}')
			out=$(printf '%s\n' "$ev" | "$docket" hook "$client" --enforce --policy "$p" 2>/dev/null)
			rc=$?
			hooks=$((hooks + 1))
			case "$out" in
			*'"permissionDecision":"deny"'* | *'"permissionDecision":"ask"'*) ;;
			*)
				if [ "$rc" -ne 2 ]; then
					echo "BYPASS via hook $client ($p, exit $rc, answer '$out'): $s"
					bad=1
				fi
				;;
			esac
		done
	done
done < scripts.jsonl
# the hook's HOME is its own: a Read deny of ~/.ssh holds under --enforce (issue 26)
printf '{"permissions":{"defaultMode":"bypassPermissions","deny":["Read(~/.ssh/**)"]}}\n' > home-deny.json
for cmd in 'cat ~/.ssh/id_rsa' "base64 $HOME/.ssh/id_rsa"; do
	ev=$(jq -cn --arg s "$cmd" '{session_id:"home",transcript_path:"/nonexistent/t.jsonl",cwd:"/w",
		hook_event_name:"PreToolUse",tool_name:"Bash",tool_input:{command:$s},tool_use_id:("h-" + $s)}')
	out=$(printf '%s\n' "$ev" | "$docket" hook claude --enforce --policy claude:home-deny.json 2>/dev/null)
	case "$out" in
	*'"permissionDecision":"deny"'*) ;;
	*) echo "BYPASS via hook claude (HOME): $cmd -> '$out'"; bad=1 ;;
	esac
done
echo "bypass_cli: $i scripts, $evals policy evals, $hooks hook runs; bypasses: $bad"
exit $bad
