# property: with write-time redaction on, no secret a seeded generator hides
# in env maps, nested args (under secret key names in any spelling, as values
# of any type, as object keys) and JSON outputs survives in the stored events
# (log --json, the data file) or in any export or the report. The control
# ledger, without redaction, shows the generator puts every secret where the
# scan looks; export --redact on it must hide them all as well.
P="$FIXTURES/../tests/cli/redact_property.py"
for seed in 1 2 3; do
	python3 "$P" gen $seed ev$seed.jsonl secrets$seed.txt
	L=red$seed
	docket -L $L init >/dev/null
	docket -L $L redact --builtin >/dev/null
	docket -L $L record ev$seed.jsonl >/dev/null
	docket -L $L log --json >$L.log
	for f in jsonl ocsf otel csv; do docket -L $L export --format $f >$L.$f; done
	docket -L $L report -o $L.html >/dev/null 2>&1
	cp $L/data.mdb $L.mdb
	docket -L plain$seed init >/dev/null
	docket -L plain$seed record ev$seed.jsonl >/dev/null
	docket -L plain$seed log --json >plain$seed.log
	for f in jsonl ocsf otel csv; do docket -L plain$seed export --redact --format $f >plain$seed.redact.$f; done
	python3 "$P" scan secrets$seed.txt $L.log $L.jsonl $L.ocsf $L.otel $L.csv $L.html $L.mdb \
		plain$seed.log plain$seed.redact.jsonl plain$seed.redact.ocsf plain$seed.redact.otel plain$seed.redact.csv
done
