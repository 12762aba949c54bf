# Who commits (docs/write-path.md §4): the writer and syncer threads when
# serve may run on 4 CPUs or more, else the poll loop; the first line says
# which, DOCKET_SERVE_WRITER=threads|inline overrides it, anything else is a
# usage error. Both answer requests and stop cleanly.
command -v taskset >/dev/null || { echo "no taskset" >&2; exit 77; }
docket init >/dev/null
serve_once() {  # LABEL [ENV=VALUE] [taskset -c 0]: start, one request, stop
	local label=$1
	shift
	rm -f serve.err d.sock
	env "$@" docket serve --socket "$PWD/d.sock" 2>serve.err &
	local pid=$!
	wait_for serve.err "serving on" || { cat serve.err; return 1; }
	python3 - "$PWD/d.sock" "$label" <<'PY'
import socket, sys, json
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); f = s.makefile('rw')
f.write(json.dumps({"jsonrpc":"2.0","id":1,"method":"runtime.start","params":{"runtime":sys.argv[2]}}) + "\n"); f.flush()
print(sys.argv[2], "answered:", "result" in json.loads(f.readline()))
PY
	kill -TERM $pid
	wait $pid
	echo "$label: exit $?, $(sed -n 's/^docket: serving on [^ ]* //p' serve.err)"
}
serve_once one-cpu taskset -c 0
serve_once one-cpu-threads DOCKET_SERVE_WRITER=threads taskset -c 0
serve_once inline DOCKET_SERVE_WRITER=inline
# without an override, on this machine: threads only with 4 CPUs or more
want="(commits on the poll loop)"
[ "$(nproc)" -ge 4 ] && want="(writer and syncer threads)"
serve_once auto >auto.out
grep -q "auto: exit 0, $want" auto.out && echo "auto: as the CPUs say" || cat auto.out
DOCKET_SERVE_WRITER=bogus docket serve --socket "$PWD/d.sock" 2>bogus.err
echo "bogus: exit $?"
cat bogus.err
