docket init >/dev/null
docket record no-such-file.jsonl
