# policy schema prints the published call schema: docs/call.schema.json,
# byte for byte (one source of truth), and it is valid JSON
docket policy schema > schema.json || exit
cmp schema.json "$FIXTURES/../docs/call.schema.json" && echo same
jq -r '.title' schema.json
