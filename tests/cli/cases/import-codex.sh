# a Codex rollout: the summary, then the session as docket show tells it
docket init >/dev/null
docket import codex "$FIXTURES/import/codex-basic.jsonl"
docket show fx-codex-1
