/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_relay_common.h: what the stdio relay targets (fuzz_codex_relay.c,
 * fuzz_mcp_proxy.c) share: a scratch ledger for the whole run, /dev/null
 * as both peers, and the input format: lines, each starting with 'C' (the
 * rest came from the client) or anything else (it came from the server).
 */
#ifndef DOCKET_FUZZ_RELAY_COMMON_H
#define DOCKET_FUZZ_RELAY_COMMON_H

#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "docket/ledger.h"

static docket_ledger *fuzz_ledger;
static char fuzz_dir[256];
static int fuzz_null = -1;

static int fuzz_rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	return remove(path);
}

static void fuzz_relay_cleanup(void)
{
	docket_ledger_free(fuzz_ledger);
	nftw(fuzz_dir, fuzz_rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	close(fuzz_null);
}

static void fuzz_relay_setup(const char *name)
{
	docket_open_options opts = DOCKET_OPEN_OPTIONS_INIT;
	const char *tmp = getenv("TMPDIR");

	snprintf(fuzz_dir, sizeof(fuzz_dir), "%s/docket-fuzz-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", name);
	if (!mkdtemp(fuzz_dir) || (fuzz_null = open("/dev/null", O_WRONLY)) < 0)
		abort();
	opts.flags = DOCKET_OPEN_CREATE;
	if (docket_ledger_open(&fuzz_ledger, fuzz_dir, &opts) != 0)
		abort();
	atexit(fuzz_relay_cleanup);
}

/* Feed each line of the input to `client` or `server`; a callback may fail
 * only for lack of memory (the peers are /dev/null). */
static void fuzz_relay_feed(void *relay, const uint8_t *data, size_t size,
			    int (*client)(void *, const char *, size_t), int (*server)(void *, const char *, size_t))
{
	size_t start = 0, i;

	for (i = 0; i <= size; i++) {
		const char *line = (const char *)data + start;
		size_t len = i - start + (i < size);  /* with its newline */
		int rc;

		if (i < size && data[i] != '\n')
			continue;
		if (len > 0) {
			rc = line[0] == 'C' ? client(relay, line + 1, len - 1) : server(relay, line, len);
			if (rc < 0 && docket_error_last()->code != DOCKET_ENOMEM)
				abort();
		}
		start = i + 1;
	}
}

#endif
