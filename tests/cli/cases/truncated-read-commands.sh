# a data file cut short: every read command ends with a clear error, exit 3
seed sessions/demo-basic.jsonl
truncate -s 16K ledger/data.mdb
for c in log sessions stats pending "show demo-basic" "export --format jsonl"; do
	# shellcheck disable=SC2086
	docket $c
	echo "$c: exit $?"
done
