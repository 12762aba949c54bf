#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# bench_bigline.sh DOCKET [--quick]: what one big request line costs serve,
# side by side in one run (issue 11). The same client sends the same lines
# to `docket serve --socket` twice: with --max-request 1073741824 (the old
# behaviour: every line is read whole and parsed) and with the default
# limit (1 MiB: refused and skipped unparsed). Lines: a 30 MiB string, then
# 15 M array elements (30 MiB), each a runtime.start. Reported per
# configuration: seconds until each reply, how long a second client waited
# for a one-line request sent once the big line was sent, and serve's peak
# and final RSS (VmHWM, VmRSS). --quick uses 3 MiB lines and checks only
# that every reply came back.
set -euo pipefail
docket=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
mib=30
[ "${2:-}" = "--quick" ] && mib=3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
export DOCKET_LEDGER="$dir/ledger"
"$docket" init >/dev/null
for limit in 1073741824 0; do
	"$docket" serve --socket "$dir/d.sock" --max-request "$limit" 2>serve.err &
	pid=$!
	for _ in $(seq 200); do grep -q "serving on" serve.err 2>/dev/null && break; sleep 0.05; done
	python3 - "$dir/d.sock" "$pid" "$mib" "$limit" <<'PY'
import json, socket, sys, time
path, pid, mib, limit = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
def conn():
    s = socket.socket(socket.AF_UNIX); s.connect(path); return s, s.makefile('rb')
a, fa = conn()
b, fb = conn()
lines = [b'{"jsonrpc":"2.0","id":1,"method":"runtime.start","params":{"runtime":"' + b'x' * (mib << 20) + b'"}}\n',
         b'{"jsonrpc":"2.0","id":2,"method":"runtime.start","params":{"runtime":"a","x":[' +
         b'0,' * ((mib << 20) // 2) + b'0]}}\n']
name = 'old (limit 1 GiB)' if limit != '0' else 'default (1 MiB)'
for i, line in enumerate(lines):
    t = time.monotonic()
    a.sendall(line)  # done when serve has read all but the socket buffer's worth
    tb = time.monotonic()
    b.sendall(b'{"jsonrpc":"2.0","id":9,"method":"runtime.start","params":{"runtime":"b"}}\n')
    assert json.loads(fb.readline())['id'] == 9
    waited = time.monotonic() - tb
    r = json.loads(fa.readline())
    assert 'error' in r or 'result' in r
    print('%-18s line %d (%s): reply after %6.2f s, other client waited %6.2f s' %
          (name, i + 1, 'string' if i == 0 else 'array', time.monotonic() - t, waited))
st = {l.split(':')[0]: int(l.split()[1]) for l in open('/proc/%s/status' % pid) if l.startswith(('VmHWM', 'VmRSS'))}
print('%-18s peak RSS %7.1f MiB, RSS after %7.1f MiB' % (name, st['VmHWM'] / 1024, st['VmRSS'] / 1024))
PY
	kill -TERM "$pid"
	wait "$pid"
	rm -f serve.err
done
