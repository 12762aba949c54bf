# the risk view in the terminal: a never/danger-full-access session, an
# escalation with its justification, a call without outcome, a refusal with
# its reason; --fail exits 1 because something needs attention
seed sessions/audit-risky.jsonl
docket audit
docket audit --fail >/dev/null || echo "exit $?"
docket audit --json | python3 -c 'import json,sys; f=json.load(sys.stdin); print(f["attention"], [len(f[k]) for k in ("risky_sessions","escalations","risky_calls","no_outcome","denials")], f["denials"][0]["by"])'
docket audit --session careful-claude | head -1
