# a Codex .rules file explained: prompt/forbidden become ask/deny, Codex's
# defaults (read-only sandbox, heredoc parsing) are spelled out
cp "$FIXTURES/policies/default.rules" .
docket policy explain codex:default.rules
