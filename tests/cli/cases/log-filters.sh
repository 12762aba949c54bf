# log selects by type (a family with "tool."), status ("denied only"),
# invocation, and --since/--until in the one syntax (a date, RFC 3339, #seq);
# a recovery row reads as words, not JSON; bad values are usage errors
seed sessions/audit-risky.jsonl
docket log --status denied
docket log --type approval. --session careful
docket log -i call_push -t tool.completed,tool.dispatched
docket log --since 2026-01-05T11:00:09Z --until 2026-01-05T11:00:10.100Z
docket log --since "#3" --until "#5"
docket log --since 2026-01-06 | head -1
docket recover --apply >/dev/null
docket log --type recovery.action | sed -E "s/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z/<time>/"
docket log --until yesterday; echo "exit $?"
docket log --session zzz; echo "exit $?"
