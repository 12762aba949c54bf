# a damaged ledger (its last segment): the table lists the good events, as
# --json does, then the error (exit 3); the two modes list the same events
python3 - "$FIXTURES/sessions/audit-risky.jsonl" > big.jsonl <<'PY'
import json, sys
src = [json.loads(l) for l in open(sys.argv[1])]
for k in range(300):
    for e in src:
        if "session" not in e:
            if k == 0:
                print(json.dumps(e))
            continue
        print(json.dumps(dict(e, session="%s-%d" % (e["session"], k))))
PY
docket init >/dev/null && docket record big.jsonl >/dev/null || exit 99
flip_segment ledger/data.mdb body
docket log > table.txt 2> table.err; echo "table exit $?"
docket log --json > json.txt 2> json.err; echo "json exit $?"
rows=$(($(wc -l < table.txt) - 1))
[ "$rows" -gt 0 ] && [ "$rows" -eq "$(wc -l < json.txt)" ] && echo "same good events in both modes"
[ "$(tail -1 table.txt | awk '{print $1}')" = "$(tail -1 json.txt | jq .seq)" ] && echo "same last event"
cmp -s table.err json.err && echo "same error"
