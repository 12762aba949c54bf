docket init >/dev/null
echo '[1,2]' > answers.json
docket recover --reconcile answers.json; echo "exit $?"
docket recover --approvals maybe; echo "exit $?"
docket recover --reconcile missing.json; echo "exit $?"
echo '{"dt-00":"ok"}' > answers.json
docket recover --reconcile answers.json; echo "exit $?"
