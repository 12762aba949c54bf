# output that cannot be written is a system error (exit 3), reported once
seed sessions/demo-basic.jsonl
docket log > /dev/full
