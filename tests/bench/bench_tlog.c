/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_tlog: the Merkle tree's costs (issue 13), side by side in one run.
 *
 *  1. append: the same gen_mix events into two fresh ledgers, batch by
 *     batch, alternating which goes first: one maintains the tree, the other
 *     has it switched off (the benchmark-only ledger flag merkle_off). The
 *     difference per event is the tree's cost (CPU and wall clock).
 *  2. on the tree-on ledger: a signed checkpoint, then `prove` (receipt_build)
 *     and `verify-receipt` (receipt_verify) for calls early, in the middle
 *     and late in the log: time, receipt size, segments read per proof.
 *
 *   bench_tlog [--events N] [--batch N] [--quick] [--keep]
 * Default 1,000,000 events; --quick: 5,000 (checks only: every event in,
 * both receipts verify, verify passes). One JSON line on stdout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "docket/audit.h"
#include "docket/tlog.h"
#include "gen_mix.h"
#include "ledger/ledger_internal.h"
#include "audit/receipt.h"
#include "util/alloc.h"
#include "util/json.h"

typedef struct side {
	docket_ledger *l;
	char *dir;
	uint64_t cpu_ns, wall_ns;
} side;

static docket_ledger *open_new(char **dir, const char *base)
{
	docket_open_options o = DOCKET_OPEN_OPTIONS_INIT;
	docket_ledger *l = NULL;

	if (!(*dir = bench_tempdir(base, "bench-tlog-XXXXXX")))
		return NULL;
	o.flags = DOCKET_OPEN_CREATE;
	if (docket_ledger_open(&l, *dir, &o) < 0) {
		bench_docket_fail("open");
		return NULL;
	}
	return l;
}

static void append_timed(side *s, json_t **evs, size_t n)
{
	uint64_t c0 = bench_cpu_ns(), w0 = bench_now_ns();

	if (docket_ledger_append_json(s->l, evs, n, NULL) < 0)
		bench_docket_fail("append");
	s->cpu_ns += bench_cpu_ns() - c0;
	s->wall_ns += bench_now_ns() - w0;
}

/* The JSON lines of `text` parsed; *n of them. */
static json_t **parse_lines(char *text, size_t *n)
{
	size_t cap = 1024, k = 0;
	json_t **v = malloc(cap * sizeof(*v));

	for (char *line = strtok(text, "\n"); line && v; line = strtok(NULL, "\n")) {
		if (k == cap)
			v = realloc(v, (cap *= 2) * sizeof(*v));
		if (v && !(v[k++] = json_loads(line, 0, NULL)))
			bench_fail("parse", line);
	}
	*n = k;
	return v;
}

typedef struct probe {
	const char *session, *invocation;
	double prove_ms, verify_ms;
	size_t bytes;
	uint32_t segments;
	int ok;
} probe;

/* prove and verify-receipt for the call of the intent at `evs[at]` (the
 * first intent at or after it). */
static void prove_one(probe *p, docket_ledger *l, json_t **evs, size_t n, size_t at, const char *note,
		      size_t note_len, const char *pub)
{
	docket_buf text = DOCKET_BUF_INIT;
	receipt_report rep;
	json_t *r = NULL, *story = NULL, *list;
	double t0;

	memset(p, 0, sizeof(*p));
	while (at < n && strcmp(json_string_value(json_object_get(evs[at], "type")), "tool.intent") != 0)
		at++;
	if (at >= n) {
		bench_fail("prove", "no intent");
		return;
	}
	p->session = json_string_value(json_object_get(evs[at], "session"));
	p->invocation = json_string_value(json_object_get(evs[at], "invocation"));
	t0 = bench_now_s();
	if (receipt_build(&r, l, p->session, p->invocation, note, note_len, NULL, NULL) < 0 ||
	    docket_json_dump(&text, r) < 0) {
		bench_docket_fail("prove");
		goto done;
	}
	p->prove_ms = (bench_now_s() - t0) * 1e3;
	p->bytes = text.len + 1;
	t0 = bench_now_s();
	if (receipt_verify(&rep, &story, text.ptr, text.len, pub) < 0 || !rep.ok)
		bench_fail("verify-receipt", rep.problem);
	p->verify_ms = (bench_now_s() - t0) * 1e3;
	p->ok = rep.ok;
	/* segments read: each event's proof again, counted */
	list = json_object_get(r, "events");
	for (size_t i = 0; i < json_array_size(list); i++) {
		docket_tlog_proof *proof = docket_malloc(sizeof(*proof));
		json_int_t seq = json_integer_value(json_object_get(json_array_get(list, i), "seq"));

		if (proof && docket_tlog_inclusion(proof, l, (uint64_t)seq,
						   (uint64_t)json_integer_value(json_object_get(r, "tree_size"))) == 0)
			p->segments += proof->segments_read;
		docket_free(proof);
	}
done:
	json_decref(story);
	json_decref(r);
	docket_buf_dispose(&text);
}

static json_t *probe_json(const probe *p)
{
	return json_pack("{s:s, s:f, s:f, s:I, s:I, s:b}", "invocation", p->invocation, "prove_ms", p->prove_ms,
			 "verify_receipt_ms", p->verify_ms, "receipt_bytes", (json_int_t)p->bytes,
			 "segments_read", (json_int_t)p->segments, "ok", p->ok);
}

int main(int argc, char **argv)
{
	docket_buf text = DOCKET_BUF_INIT;
	const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	size_t events = 1000000, batch = 8192, n = 0;
	int quick = 0, keep = 0;
	side on = { 0 }, off = { 0 };
	json_t **evs, *out, *probes;
	char *keydir, *key, *pub, *note = NULL;
	size_t note_len = 0;
	docket_checkpoint cp;
	docket_verify_report vrep;
	docket_ledger_info info_on, info_off;
	int created;
	double t0;

	bench_init("bench_tlog");
	for (int i = 1; i < argc; i++) {
		if (bench_common_flag(argv[i], &quick, &keep))
			continue;
		if (!strcmp(argv[i], "--events") && i + 1 < argc)
			events = strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--batch") && i + 1 < argc)
			batch = strtoul(argv[++i], NULL, 10);
		else {
			fprintf(stderr, "usage: bench_tlog [--events N] [--batch N] [--quick] [--keep]\n");
			return 2;
		}
	}
	if (quick)
		events = 5000;
	if (gen_mix(&text, events, 42, NULL) < 0 || docket_buf_putc(&text, '\0') < 0)
		return bench_docket_fail("gen_mix"), 1;
	evs = parse_lines(text.ptr, &n);
	if (!(on.l = open_new(&on.dir, base)) || !(off.l = open_new(&off.dir, base)))
		return 1;
	off.l->merkle_off = 1;
	for (size_t i = 0, k = 0; i < n; i += batch, k++) {
		size_t m = n - i < batch ? n - i : batch;

		/* alternate the order: neither side always gets the warm cache */
		append_timed(k & 1 ? &off : &on, evs + i, m);
		append_timed(k & 1 ? &on : &off, evs + i, m);
	}
	/* the tree-on ledger: a checkpoint, then receipts */
	keydir = bench_tempdir(base, "bench-tlog-key-XXXXXX");
	key = bench_path_join(keydir, "log.key");
	pub = bench_path_join(keydir, "log.key.pub");
	if (docket_keygen(key, 0, NULL) < 0 || docket_checkpoint_create(&cp, &created, on.l, key) < 0 ||
	    docket_checkpoint_note(&note, &note_len, on.l, 0) < 0)
		bench_docket_fail("checkpoint");
	probes = json_array();
	for (size_t q = 0; note && q < 3; q++) {
		static const double where[3] = { 0.01, 0.5, 0.99 };
		probe p;

		prove_one(&p, on.l, evs, n, (size_t)(where[q] * (double)n), note, note_len, pub);
		json_array_append_new(probes, probe_json(&p));
	}
	if (docket_ledger_info_get(on.l, &info_on) < 0 || docket_ledger_info_get(off.l, &info_off) < 0)
		bench_docket_fail("info");
	t0 = bench_now_s();
	if (quick && (docket_ledger_verify(on.l, &vrep) < 0 || !vrep.ok))
		bench_fail("verify", vrep.problem);
	out = json_pack("{s:s, s:I, s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:o, s:f, s:I, s:I, s:s}", "bench", "tlog",
			"events", (json_int_t)n, "batch", (json_int_t)batch,
			"append_cpu_us_per_event_tree_on", (double)on.cpu_ns / 1e3 / (double)n,
			"append_cpu_us_per_event_tree_off", (double)off.cpu_ns / 1e3 / (double)n,
			"tree_cpu_us_per_event", ((double)on.cpu_ns - (double)off.cpu_ns) / 1e3 / (double)n,
			"append_wall_us_per_event_tree_on", (double)on.wall_ns / 1e3 / (double)n,
			"append_wall_us_per_event_tree_off", (double)off.wall_ns / 1e3 / (double)n,
			"verify_s", quick ? bench_now_s() - t0 : 0.0, "receipts", probes,
			"payload_bytes_per_event", (double)info_on.payload_bytes / (double)n,
			"file_bytes_tree_on", (json_int_t)info_on.file_bytes, "file_bytes_tree_off", (json_int_t)info_off.file_bytes,
			"note", "same events, same run, batches alternated; the machine is shared");
	for (size_t i = 0; i < n; i++)
		json_decref(evs[i]);
	free(evs);
	free(key);
	free(pub);
	docket_free(note);
	docket_buf_dispose(&text);
	docket_ledger_free(on.l);
	docket_ledger_free(off.l);
	bench_print_result(out);
	bench_tempdirs_dispose(keep);
	return bench_failures() ? 1 : 0;
}
