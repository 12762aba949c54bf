# the executor knows one of the two reconcile calls; the other is parked
docket init >/dev/null
docket record "$FIXTURES/runtime/in-doubt.jsonl" >/dev/null
token=$(docket log --json | grep '"invocation":"c-rec-known"' | grep -o '"token":"[^"]*"' | cut -d'"' -f4)
printf '{"%s":{"status":"ok","exit_code":0,"output":"deployed"}}\n' "$token" > answers.json
docket recover --apply --reconcile answers.json
echo "--- pending afterwards"
docket pending
echo "--- verify"
docket verify
