# a docket killed in the middle of a codex-relay session leaves nobody
# hanging: the client's input ends at once and the app-server dies with it
# (what was recorded up to then stays, and verifies); refusals: no
# app-server command, one that cannot run
C=$FIXTURES/codex
echo '[{"id":"call_1","command":"/bin/bash -lc ls","approval":true}]' >script.json
echo '["kill"]' >decisions.json
FAKE_PID_FILE=$PWD/server.pid timeout 60 python3 "$C/app_client.py" decisions.json -- \
	docket codex-relay -- python3 "$C/fake_app_server.py" script.json
echo "client exit $?"
trail
docket verify >/dev/null && echo "ledger verifies"
docket codex-relay
echo "no command: exit $?"
timeout 10 docket codex-relay -- /nonexistent/codex app-server </dev/null
echo "cannot run: exit $?"
