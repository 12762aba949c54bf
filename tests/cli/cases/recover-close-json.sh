docket init >/dev/null
docket record "$FIXTURES/runtime/in-doubt.jsonl" >/dev/null
docket recover --apply --approvals close --json | mask_hashes | grep -E '"(invocation|action|runtime|applied)"'
