# A crash of `docket migrate` at any point leaves a ledger that reads: before
# the swap, the original untouched (and a PATH.rewrite-* directory); after
# it, the migrated ledger. Migrating again then finishes the job, and the log
# is the old binary's byte for byte, and the leftover directory is gone.
# For both older formats: the format-1
# ledger (which this docket reads only to migrate it) and the format-2 one
# (which it reads as it is).
for v in 1 2; do
	for point in rewrite.copying rewrite.before_swap rewrite.after_swap; do
		rm -rf ledger ledger.rewrite-*
		mkdir -m 700 ledger
		cp "$FIXTURES/ledger-v$v/data.mdb" ledger/ && chmod 600 ledger/data.mdb
		# in a shell of its own whose stderr is dropped: that shell, not this
		# one, reports the kill
		bash -c 'DOCKET_CRASH_POINT=$1 docket migrate >/dev/null 2>&1; echo $?' _ "$point" >rc 2>/dev/null
		echo "format $v, $point: killed $([ "$(cat rc)" -eq 137 ] && echo yes || echo no)," \
			"leftover $(ls -d ledger.rewrite-* 2>/dev/null | wc -l)," \
			"log --json $(docket log --json 2>/dev/null | cmp -s - "$FIXTURES/ledger-v$v/log.jsonl" &&
				      echo identical || echo 'not read')"
		# then migrate: from the original's format, or nothing left to do;
		# either way it removes what the crash left beside the ledger
		docket migrate --json | jq -c '{rewritten, from_format, to_format, events, leftovers_removed}'
		docket log --json | cmp - "$FIXTURES/ledger-v$v/log.jsonl" && echo "  log --json: identical"
		docket verify | sed 's/^/  /'
		echo "  left beside it now: $(ls -d ledger.rewrite-* 2>/dev/null | wc -l)"
	done
done
# a directory that only looks like a leftover is left alone (not BASE.rewrite-
# and six characters, or not a directory); a real one is removed by compact too
mkdir ledger.rewrite-abc ledger.rewrite-abcdefg ledger.rewrite-XXXXXX && touch ledger.rewrite-fileXX
docket compact | grep '^removed'
ls -d ledger.rewrite-* | sort
