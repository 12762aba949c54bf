# A crash of `docket migrate` at any point leaves a ledger that reads: before
# the swap, the format-1 original untouched (and a PATH.rewrite-* directory);
# after it, the migrated ledger. Migrating again then finishes the job, and
# the log is the format-1 binary's byte for byte.
for point in rewrite.copying rewrite.before_swap rewrite.after_swap; do
	rm -rf ledger ledger.rewrite-*
	mkdir -m 700 ledger
	cp "$FIXTURES/ledger-v1/data.mdb" ledger/ && chmod 600 ledger/data.mdb
	# in a shell of its own whose stderr is dropped: that shell, not this
	# one, reports the kill
	bash -c 'DOCKET_CRASH_POINT=$1 docket migrate >/dev/null 2>&1; echo $?' _ "$point" >rc 2>/dev/null
	echo "$point: killed $([ "$(cat rc)" -eq 137 ] && echo yes || echo no)," \
		"leftover $(ls -d ledger.rewrite-* 2>/dev/null | wc -l)," \
		"reads $(docket log >/dev/null 2>&1 && echo format 2 || echo 'not (format 1)')"
	docket migrate | grep -c '^migrated\|already in format 2'
	docket log --json | cmp - "$FIXTURES/ledger-v1/log.jsonl" && echo "  log --json: identical"
	docket verify | sed 's/^/  /'
done
