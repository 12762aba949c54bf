seed sessions/open-pending.jsonl
docket pending --json --session build-42
