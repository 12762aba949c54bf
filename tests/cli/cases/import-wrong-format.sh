# a file of the other format is refused with the command that works; nothing is written
docket init >/dev/null
docket import codex "$FIXTURES/import/claude-basic.jsonl" 2>&1 | sed "s|$FIXTURES|FIXTURES|g"
docket log | wc -l
docket import claude "$FIXTURES/import/codex-basic.jsonl" 2>&1 | sed "s|$FIXTURES|FIXTURES|g"
