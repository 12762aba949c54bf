# an unknown session is bad input (exit 2), not "nothing to worry about"
seed sessions/audit-risky.jsonl
docket audit --session nope
