seed sessions/open-pending.jsonl
docket show build-42
