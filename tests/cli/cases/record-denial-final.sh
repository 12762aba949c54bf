# issue 10 defect 6: a denied settlement is final; a second request that
# would overturn it is refused, and nothing of the input is written
docket init >/dev/null
cat >input.jsonl <<'EV'
{"type":"session.opened","session":"s1"}
{"type":"tool.intent","session":"s1","invocation":"c1","tool":"shell","args":{"command":["rm","-rf","build"]},"decision":{"verdict":"approval_required","source":"runtime"}}
{"type":"approval.requested","session":"s1","invocation":"c1","request":"r1"}
{"type":"approval.settled","session":"s1","invocation":"c1","request":"r1","result":"denied","actor":"user:ana"}
{"type":"approval.requested","session":"s1","invocation":"c1","request":"r2"}
{"type":"approval.settled","session":"s1","invocation":"c1","request":"r2","result":"approved","actor":"user:bob"}
{"type":"tool.dispatched","session":"s1","invocation":"c1"}
EV
docket record input.jsonl 2>&1
echo "exit $?"
docket log --json | wc -l
