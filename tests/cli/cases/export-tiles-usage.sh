seed sessions/demo-basic.jsonl
docket export pub || echo "exit $?"
docket export --format tlog-tiles --session demo-basic pub || echo "exit $?"
docket export --format tlog-tiles
