/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tlog_probe: docket's Merkle tree as text, for tests/unit/tlog_check.py
 * (which computes every expected value itself, with hashlib).
 *
 *   tlog_probe build DIR EVENTS     a ledger of gen_mix events, appended in
 *                                   uneven commits (1 .. 2000 events)
 *   tlog_probe query DIR            then one query per stdin line, one
 *                                   answer line each:
 *     leaves                   the stored event bytes, hex, space-separated
 *     root SIZE                the root of the first SIZE events
 *     incl SEQ SIZE            inclusion proof hashes (may be empty)
 *     cons OLD NEW             consistency proof hashes
 *     vincl INDEX SIZE LEAF ROOT H...   docket_tlog_verify_inclusion:
 *     vcons OLD NEW ROOT1 ROOT2 H...    ok | corrupt | invalid
 * Exit 0; 1 on an error (printed on stderr).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bench/gen_mix.h"
#include "docket/tlog.h"
#include "ledger/ledger_internal.h"
#include "util/buf.h"
#include "util/error.h"

static int fail(const char *what)
{
	fprintf(stderr, "tlog_probe: %s: %s\n", what, docket_error_last()->message);
	return 1;
}

static docket_ledger *open_ledger(const char *dir, unsigned flags)
{
	docket_open_options o = DOCKET_OPEN_OPTIONS_INIT;
	docket_ledger *l = NULL;

	o.flags = flags;
	if (docket_ledger_open(&l, dir, &o) < 0) {
		fail("open");
		return NULL;
	}
	return l;
}

static int append_lines(docket_ledger *l, char *p, size_t n_lines)
{
	json_t **evs = calloc(n_lines, sizeof(*evs));
	size_t n = 0;
	int error = 0;

	for (char *line = strtok(p, "\n"); line && n < n_lines; line = strtok(NULL, "\n")) {
		json_error_t err;

		if (!(evs[n] = json_loads(line, 0, &err))) {
			fprintf(stderr, "tlog_probe: bad line: %s\n", err.text);
			error = 1;
			break;
		}
		n++;
	}
	if (!error && n && docket_ledger_append_json(l, evs, n, NULL) < 0)
		error = fail("append");
	for (size_t i = 0; i < n; i++)
		json_decref(evs[i]);
	free(evs);
	return error;
}

static int build(const char *dir, size_t events)
{
	static const size_t sizes[] = { 1, 3, 300, 1, 700, 17, 256, 2000 };
	docket_buf text = DOCKET_BUF_INIT;
	docket_ledger *l;
	char *p;
	int error = 0;

	if (!(l = open_ledger(dir, DOCKET_OPEN_CREATE)))
		return 1;
	if (gen_mix(&text, events, 7, NULL) < 0 || docket_buf_putc(&text, '\0') < 0)
		error = fail("gen_mix");
	p = text.ptr;
	for (size_t i = 0; !error && p && *p; i++) {
		char *q = p;

		for (size_t k = 0; k < sizes[i % 8] && q; k++)
			if ((q = strchr(q, '\n')))
				q++;
		if (q)
			q[-1] = '\0';
		error = append_lines(l, p, sizes[i % 8]);
		p = q;
	}
	docket_buf_dispose(&text);
	docket_ledger_free(l);
	return error;
}

static void put_hex(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		printf("%02x", p[i]);
}

static void put_proof(const docket_tlog_proof *p)
{
	for (size_t i = 0; i < p->len; i++) {
		if (i)
			putchar(' ');
		put_hex(p->hash[i], DOCKET_TLOG_HASH_LEN);
	}
	putchar('\n');
}

static int leaves(docket_ledger *l)
{
	docket_tlog_head head;
	ledger_reader r;
	MDB_txn *txn;
	int error;

	if (docket_tlog_head_get(&head, l) < 0 || store_txn_begin(&txn, l, MDB_RDONLY) < 0)
		return fail("leaves");
	reader_init(&r, l, txn);
	for (uint64_t seq = 1; seq <= head.size; seq++) {
		const uint8_t *p;
		size_t len;

		if ((error = reader_payload(&r, seq, &p, &len)) < 0)
			break;
		if (seq > 1)
			putchar(' ');
		put_hex(p, len);
	}
	putchar('\n');
	reader_dispose(&r);
	store_txn_abort(l, txn);
	return 0;
}

/* Hex tokens from strtok into `out` (at most `max`); the count, or -1. */
static int hashes(uint8_t (*out)[DOCKET_TLOG_HASH_LEN], size_t max)
{
	size_t n = 0;

	for (char *t = strtok(NULL, " \n"); t; t = strtok(NULL, " \n")) {
		if (n >= max || strlen(t) != 64)
			return -1;
		for (size_t i = 0; i < 32; i++) {
			unsigned v;

			if (sscanf(t + 2 * i, "%2x", &v) != 1)
				return -1;
			out[n][i] = (uint8_t)v;
		}
		n++;
	}
	return (int)n;
}

static const char *verdict(int rc)
{
	return rc == 0 ? "ok" : rc == DOCKET_ECORRUPT ? "corrupt" : rc == DOCKET_EINVALID ? "invalid" : "error";
}

/* vincl / vcons: two sizes, two hashes, the proof */
static int check(int inclusion)
{
	static uint8_t h[2 + DOCKET_TLOG_MAX_PROOF][DOCKET_TLOG_HASH_LEN];
	static docket_tlog_proof p;
	const char *a = strtok(NULL, " "), *b = strtok(NULL, " ");
	int n;

	if (!a || !b || (n = hashes(h, 2 + DOCKET_TLOG_MAX_PROOF)) < 2)
		return fprintf(stderr, "tlog_probe: bad check line\n"), 1;
	memset(&p, 0, sizeof(p));
	p.index = strtoull(a, NULL, 10);
	p.size = strtoull(b, NULL, 10);
	p.len = (size_t)n - 2;
	memcpy(p.hash, h[2], p.len * DOCKET_TLOG_HASH_LEN);
	puts(verdict(inclusion ? docket_tlog_verify_inclusion(&p, h[0], h[1])
			       : docket_tlog_verify_consistency(&p, h[0], h[1])));
	return 0;
}

static int query(docket_ledger *l, char *line)
{
	static docket_tlog_proof p;
	const char *cmd = strtok(line, " \n"), *a, *b;
	uint8_t root[DOCKET_TLOG_HASH_LEN];

	if (!cmd)
		return 0;
	if (!strcmp(cmd, "leaves"))
		return leaves(l);
	if (!strcmp(cmd, "vincl") || !strcmp(cmd, "vcons"))
		return check(cmd[1] == 'i');
	a = strtok(NULL, " \n");
	b = strtok(NULL, " \n");
	if (!strcmp(cmd, "root") && a) {
		if (docket_tlog_root_at(root, l, strtoull(a, NULL, 10)) < 0)
			return fail("root");
		put_hex(root, sizeof(root));
		putchar('\n');
		return 0;
	}
	if (!strcmp(cmd, "incl") && a && b) {
		if (docket_tlog_inclusion(&p, l, strtoull(a, NULL, 10), strtoull(b, NULL, 10)) < 0)
			return fail("incl");
		put_proof(&p);
		return 0;
	}
	if (!strcmp(cmd, "cons") && a && b) {
		if (docket_tlog_consistency(&p, l, strtoull(a, NULL, 10), strtoull(b, NULL, 10)) < 0)
			return fail("cons");
		put_proof(&p);
		return 0;
	}
	fprintf(stderr, "tlog_probe: unknown query %s\n", cmd);
	return 1;
}

int main(int argc, char **argv)
{
	docket_ledger *l;
	char *line = NULL;
	size_t cap = 0;
	int error = 0;

	if (argc == 4 && !strcmp(argv[1], "build"))
		return build(argv[2], strtoul(argv[3], NULL, 10));
	if (argc != 3 || strcmp(argv[1], "query")) {
		fprintf(stderr, "usage: tlog_probe build DIR EVENTS | tlog_probe query DIR\n");
		return 2;
	}
	if (!(l = open_ledger(argv[2], DOCKET_OPEN_READONLY)))
		return 1;
	while (!error && getline(&line, &cap, stdin) > 0) {
		error = query(l, line);
		fflush(stdout);
	}
	free(line);
	docket_ledger_free(l);
	return error;
}
