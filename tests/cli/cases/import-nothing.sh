# a rollout whose lines open no session imports nothing: exit 2, not a silent 0
docket init >/dev/null
printf '%s\n' '{"timestamp":"2026-01-01T00:00:00.000Z","type":"turn_context","payload":{"cwd":"/tmp","approval_policy":"never"}}' > r.jsonl
docket import r.jsonl
