# issue 10: roles from SO_PEERCRED. A peer listed in --runtimes settles no
# approval and applies no recovery; the same uid listed in --approvers may
# settle, and the recorded actor carries its uid
docket init >/dev/null
me=$(id -u)
for roles in "--runtimes $me" "--approvers $me"; do
	echo "--- serve $roles" | sed "s/$me/UID/"
	rm -f d.sock serve.err
	docket serve --socket "$PWD/d.sock" $roles 2>serve.err &
	pid=$!
	wait_for serve.err "serving on"
	python3 - "$PWD/d.sock" "$roles" <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); f = s.makefile('rw')
n = sys.argv[2].split()[0][2:]
reqs = [("runtime.start", {"runtime": "agent/1"}),
        ("session.open", {"session": n}),
        ("tool.intent", {"session": n, "invocation": "c1", "tool": "t", "decision": {"verdict": "approval_required"}}),
        ("approval.request", {"session": n, "invocation": "c1", "request": "r1"}),
        ("approval.settle", {"session": n, "invocation": "c1", "request": "r1", "result": "approved", "actor": "user:ana"}),
        ("recover.apply", {})]
for i, (m, p) in enumerate(reqs, 1):
    f.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": m, "params": p}) + "\n"); f.flush()
    r = json.loads(f.readline())
    print(m, r["error"]["data"]["kind"] if "error" in r else "ok")
PY
	kill -TERM $pid
	wait $pid
done
docket log --json | grep -o '"actor":"[^"]*"' | sed "s/uid $(id -u)/uid UID/"
