seed
printf "%s\n" "{\"type\":\"session.opened\",\"session\":\"s\"}" "{\"type\":\"tool.intent\",\"session\":\"s\",\"invocation\":\"c\",\"tool\":\"shell\",\"args\":{\"command\":[\"git\",\"clone\",\"https://bot:hunter2hunter2@example.com/r.git\"],\"env_token\":\"AKIAIOSFODNN7EXAMPLE\"}}" | docket record - >/dev/null
docket export --redact | jq -c "select(.type == \"tool.intent\") | [.args, .redacted]"
