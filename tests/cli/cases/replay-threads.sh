# one thread or two: the same bytes in every format (400 copies of the
# fixture sessions, so the reader thread has work); a bad count is a usage error
python3 - "$FIXTURES/replay/sessions.jsonl" > big.jsonl <<'PY'
import json, sys
src = [json.loads(l) for l in open(sys.argv[1])]
for k in range(400):
    for e in src:
        if "session" not in e:
            if k == 0:
                print(json.dumps(e))
            continue
        if k:
            e = dict(e, session="%s-%d" % (e["session"], k))
        print(json.dumps(e))
        if k == 200 and e.get("type") == "session.opened":
            s = e["session"]
            print(json.dumps({"type": "tool.intent", "session": s, "invocation": "bad", "tool": "read_file",
                              "args": {"path": "/q8Jf3kLm2Pw9RtZ"}, "decision": {"verdict": "allowed"}}))
            print(json.dumps({"type": "tool.completed", "session": s, "invocation": "bad", "status": "denied"}))
PY
docket init >/dev/null && docket record big.jsonl >/dev/null || exit 99
cp "$FIXTURES/replay/loose.yaml" .
for f in table json junit markdown; do
	DOCKET_REPLAY_THREADS=1 docket replay --policy loose.yaml --format "$f" > "one.$f"
	DOCKET_REPLAY_THREADS=2 docket replay --policy loose.yaml --format "$f" > "two.$f"
	cmp "one.$f" "two.$f" && echo "$f: identical ($(wc -c < "one.$f") bytes)"
done
jq -c .totals one.json
# a damaged segment (the last one: its compressed payloads): the same error
# after the same calls, on one thread or two
cp -r ledger damaged
flip_segment damaged/data.mdb body
for t in 1 2; do
	DOCKET_REPLAY_THREADS=$t docket -L damaged replay --policy loose.yaml --format json > "damaged.$t" 2> "damaged.$t.err"
	echo "threads $t: exit $?"
done
cmp damaged.1.err damaged.2.err && cat damaged.1.err
DOCKET_REPLAY_THREADS=3 docket replay --policy loose.yaml; echo "exit $?"
DOCKET_REPLAY_THREADS=two docket replay --policy loose.yaml; echo "exit $?"
