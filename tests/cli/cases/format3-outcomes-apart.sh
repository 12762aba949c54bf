# Format 3 (docs/file-format.md "Segments (format 3)"): a segment's outcomes
# are compressed apart from the rest, and replay, pending and sessions never
# decompress them. Shown by damage: with the outcomes' part of the last
# segment broken, those three print what they printed before, while log and
# verify, which need every payload, report the damage.
seed sessions/demo-basic.jsonl replay/sessions.jsonl
for c in "replay --policy $FIXTURES/policies/team.yaml --json" "pending --json" "sessions --json"; do
	docket $c >"before.${c%% *}" || echo "$c: exit $?"
done
flip_segment ledger/data.mdb partb
for c in "replay --policy $FIXTURES/policies/team.yaml --json" "pending --json" "sessions --json"; do
	docket $c >"after.${c%% *}"
	echo "${c%% *}: exit $?, $(cmp -s "before.${c%% *}" "after.${c%% *}" && echo "the same output ($(wc -l <"after.${c%% *}") lines)" || echo changed)"
done
docket log >/dev/null; echo "log: exit $?"
docket verify; echo "verify: exit $?"
