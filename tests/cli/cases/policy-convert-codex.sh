# convert a Codex .rules file to docket YAML, then check that the converted
# file gives every call the same verdict, reasons and segments as the original
cp "$FIXTURES/policies/default.rules" .
docket policy convert codex:default.rules --to docket > converted.yaml || exit
cat converted.yaml
docket policy check converted.yaml || exit
ctx='{"platform":"linux","cwd":"/home/dev/app","workspace_roots":["/home/dev/app"],"approval_policy":"on-request","sandbox_policy":{"type":"workspace-write","network_access":false}}'
# what may differ: how a rule is written (also inside a reason) and where
# it comes from
strip() {
	grep -v -e '"rule":' -e '"origin":' -e '"line":' |
		sed -E 's/( by rule ).*"$/\1<rule>"/'
}
rc=0
while IFS= read -r call; do
	docket policy eval codex:default.rules --call "$call" --context "$ctx" --json | strip > a.json || exit
	docket policy eval converted.yaml --call "$call" --context "$ctx" --json | strip > b.json || exit
	verdict=$(sed -n 's/^  "verdict": "\(.*\)",$/\1/p' b.json)
	if cmp -s a.json b.json; then
		echo "same  $verdict  $call"
	else
		echo "DIFFERENT  $call"
		diff a.json b.json
		rc=1
	fi
done <<'CALLS'
{"tool":"shell","args":{"command":["git","log","--oneline"]}}
{"tool":"shell","args":{"command":["git","push","origin","main"]}}
{"tool":"shell","args":{"command":["rm","-rf","node_modules"]}}
{"tool":"shell","args":{"command":["bash","-lc","npm run test && rm -f coverage/lcov.info"]}}
{"tool":"shell","args":{"command":["bash","-lc","python3 <<'PY'\nprint(1)\nPY"]}}
{"tool":"shell","args":{"command":["make"],"sandbox_permissions":"require_escalated"}}
{"tool":"network","args":{"url":"https://registry.npmjs.org/left-pad"}}
CALLS
exit $rc
