seed
docket redact --builtin
printf "%s\n" "{\"type\":\"session.opened\",\"session\":\"s\"}" "{\"type\":\"tool.intent\",\"session\":\"s\",\"invocation\":\"c\",\"tool\":\"shell\",\"args\":{\"command\":[\"curl\",\"-H\",\"Authorization: Bearer abcdefghijklmnop\"]}}" | docket record - >/dev/null
docket log --json | jq -c "select(.type == \"tool.intent\") | .args"
grep -c abcdefghijklmnop ledger/data.mdb
