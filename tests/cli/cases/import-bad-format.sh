docket init >/dev/null
docket import gemini x.jsonl
