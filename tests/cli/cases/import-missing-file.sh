docket init >/dev/null
docket import codex nope.jsonl
