seed sessions/demo-basic.jsonl sessions/open-pending.jsonl
docket stats --json | grep -E '"(events|sessions|pending|epoch)"'
docket stats --json | grep -cE '"chain_head": "[0-9a-f]{64}"'
