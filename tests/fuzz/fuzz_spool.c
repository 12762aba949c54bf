/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_spool.c: a spool entry is a file anyone with write access to the
 * ledger's directory could have written (docs/write-path.md §3). Each input
 * is one entry, byte for byte, folded into a scratch ledger. The fold must
 * never fail because of what an entry holds, and never drop one: afterwards
 * the spool is empty and the ledger holds the event or its incident. The
 * incidents of session "s" (an entry naming it) are then read back through
 * the fold's per-session index, and each one's entry parsed, as `show` does.
 * An input that starts with 0x1E is the spool's journal instead (records
 * 0x1E NAME 0x20 JSON 0x0A, spool_journal.c): torn and nameless records are
 * skipped, the others folded; afterwards nothing is left and the journal is
 * reclaimed (emptied), and the chain grew by at most its records (a name folded in an
 * earlier round is folded once).
 */
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "docket/ledger.h"
#include "ledger/spool.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static docket_ledger *ledger;
static char dir[256];
static unsigned round_no;

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	return remove(path);
}

static void cleanup(void)
{
	docket_ledger_free(ledger);
	nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

static void seed(void)
{
	docket_open_options opts = DOCKET_OPEN_OPTIONS_INIT;
	json_t *ev = json_pack("{ss ss ss}", "type", "session.opened", "session", "s", "runtime", "fuzz");
	char spool[300];
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/docket-fuzz-spool-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		abort();
	opts.flags = DOCKET_OPEN_CREATE;
	snprintf(spool, sizeof(spool), "%s/spool", dir);
	if (docket_ledger_open(&ledger, dir, &opts) != 0 || docket_ledger_append_json(ledger, &ev, 1, NULL) != 0 ||
	    mkdir(spool, 0700) != 0)
		abort();
	json_decref(ev);
	atexit(cleanup);
}

static uint64_t head(void)
{
	docket_ledger_info info;

	if (docket_ledger_info_get(ledger, &info) != 0)
		abort();
	return info.events;
}

/* An entry file is removed once folded; the journal is emptied (kept). */
static int left_behind(const char *path, int journal)
{
	struct stat st;

	if (!journal)
		return access(path, F_OK) == 0;
	return stat(path, &st) == 0 && st.st_size > 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[400];
	json_t *incidents = NULL;
	uint64_t before;
	size_t left = 1, records = 0;
	int journal;
	int fd;

	if (!ledger)
		seed();
	round_no++;
	journal = size && data[0] == 0x1e;
	if (journal)
		snprintf(path, sizeof(path), "%s/spool/journal", dir);
	else
		snprintf(path, sizeof(path), "%s/spool/%016x-0000000001-00000000.json", dir, round_no);
	/* a journal without a whole record is left by the fold: replaced here */
	if ((fd = open(path, O_WRONLY | O_CREAT | (journal ? O_TRUNC : O_EXCL), 0600)) < 0 ||
	    (size && write(fd, data, size) != (ssize_t)size) || close(fd) != 0)
		abort();
	if (docket_spool_count(dir, &records) != 0)
		abort();
	before = head();
	if (docket_spool_fold(ledger) != 0)
		abort();  /* an entry's content must never fail the fold */
	if (docket_spool_count(dir, &left) != 0 || left != 0 || (records && left_behind(path, journal)))
		abort();  /* folded or kept as an incident, never left behind (a journal
			   * without a whole record goes with the next write) */
	if (!journal ? head() <= before : head() - before > records)
		abort();  /* never dropped: the event or its incident is in the chain */
	if (docket_spool_incidents(ledger, "s", &incidents) != 0)
		abort();  /* the index names events that exist */
	for (size_t i = 0; i < json_array_size(incidents); i++)
		json_decref(docket_spool_incident_entry(json_array_get(incidents, i)));
	json_decref(incidents);
	return 0;
}
