# a directory: every *.jsonl under it, subagents included, in path order
docket init >/dev/null
mkdir -p project
cp -r "$FIXTURES/import/claude-basic.jsonl" "$FIXTURES/import/claude-basic" "$FIXTURES/import/claude-bypass.jsonl" project/
docket import claude project
docket sessions
docket verify
