seed sessions/demo-basic.jsonl
docket export -f otel | jq -c ".resourceSpans[].scopeSpans[].spans[] | [.name, ([.attributes[] | select(.key == \"gen_ai.tool.call.id\") | .value.stringValue][0]), [.events[].name], .status.code]"
