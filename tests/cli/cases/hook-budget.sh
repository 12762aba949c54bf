# the hook answers within its budget whatever happens (issue 27): input that
# never ends is answered by the watchdog (enforce: deny, exit 2, naming
# docket; record only: exit 1, the call goes on); a budget of 0 is refused
export HOME=$PWD/home DOCKET_CLAUDE_MANAGED_SETTINGS=$PWD/none
ms() { echo $(( $(date +%s%N) / 1000000 )); }
t0=$(ms)
docket hook claude --enforce --policy "$FIXTURES/policies/team.yaml" --budget 200 < <(sleep 5)
echo "input never ends, enforce: exit $?"
t1=$(ms)
echo "answered in under 2 s: $(( t1 - t0 < 2000 ))"
docket hook claude --budget 200 < <(sleep 5)
echo "input never ends, record only: exit $?"
echo '{}' | docket hook claude --budget 0
echo "--budget 0: exit $?"
