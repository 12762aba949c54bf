# convert a Claude Code settings.json to docket YAML, then check that the
# converted file gives every call the same verdict, reasons and segments
cp "$FIXTURES/policies/settings.json" .
docket policy convert claude:settings.json --to docket > converted.yaml || exit
cat converted.yaml
docket policy check converted.yaml || exit
ctx='{"platform":"linux","cwd":"/home/dev/app","workspace_roots":["/home/dev/app"],"env":{"HOME":"/home/dev"}}'
# what may differ: where a rule comes from
strip() { grep -v -e '"origin":' -e '"line":'; }
rc=0
while IFS= read -r call; do
	docket policy eval claude:settings.json --call "$call" --context "$ctx" --json | strip > a.json || exit
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
{"tool":"Bash","args":{"command":"npm run test -- --watch"}}
{"tool":"Bash","args":{"command":"npm run test:unit && rm -rf /"}}
{"tool":"Bash","args":{"command":"git push --force"}}
{"tool":"Read","args":{"file_path":"/home/dev/app/.env"}}
{"tool":"Edit","args":{"file_path":"/home/dev/app/src/index.js"}}
{"tool":"Edit","args":{"file_path":"/home/dev/app/package.json"}}
{"tool":"WebFetch","args":{"url":"https://Docs.NPMjs.com/cli/v10"}}
{"tool":"Glob","args":{"pattern":"src/**/*.ts"}}
CALLS
exit $rc
