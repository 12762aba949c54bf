/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench_json_parse.c: jansson against simdjson on the lines `docket record`
 * parses (issue 12), side by side in one run, one thread.
 *
 * Streams: the stream of bench_format2 (gen_format2.h: 133 bytes a line,
 * short args) and the richer mix of gen_mix.h (650 bytes a line: command
 * outputs, diffs, logs). For every line, four ways, each timed over the
 * whole stream, rounds alternating their order, the best round kept (CPU
 * time of the process):
 *
 *   jansson tree     docket_json_parse (the tree only), freed
 *   jansson event    docket_json_parse + docket_event_from_json: what
 *                    `docket record` did before simdjson
 *   simdjson tape    docket_json_tape_parse (the tape only)
 *   simdjson event   docket_event_from_text (simdjson's tape read through
 *                    util/jv.h; jansson for the lines it cannot decide):
 *                    what `docket record` does now
 *
 * and the ratio jansson event / simdjson event. Checks (exit 1; speed is
 * never checked): both ways give the same event (its packed bytes) for every
 * line, and no line of these streams falls back to jansson.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "gen_format2.h"
#include "gen_mix.h"
#include "ledger/event.h"
#include "util/alloc.h"
#include "util/json.h"

typedef struct lines {
	const char *name;
	docket_buf text;
	size_t n;
	const char **line;
	size_t *len;
} lines;

enum way { JANSSON_TREE, JANSSON_EVENT, TAPE_ONLY, TAPE_EVENT, WAYS };

static const char *const way_names[WAYS] = {
	"jansson tree", "jansson event (before)", "simdjson tape", "simdjson event (now)",
};

static int split(lines *l)
{
	size_t pos = 0, n = 0;

	for (size_t i = 0; i < l->text.len; i++)
		n += l->text.ptr[i] == '\n';
	if (!(l->line = calloc(n, sizeof(*l->line))) || !(l->len = calloc(n, sizeof(*l->len))))
		return -1;
	while (pos < l->text.len && l->n < n) {
		const char *p = l->text.ptr + pos, *nl = memchr(p, '\n', l->text.len - pos);

		l->line[l->n] = p;
		l->len[l->n++] = (size_t)(nl - p);
		pos += (size_t)(nl - p) + 1;
	}
	return 0;
}

static void lines_dispose(lines *l)
{
	docket_buf_dispose(&l->text);
	free(l->line);
	free(l->len);
}

/* One line one way; 0, or -1 when it did not give an event. */
static int one(enum way w, docket_json_tape *tape, const char *text, size_t len, size_t *fallbacks)
{
	docket_event *ev = NULL;
	json_t *j = NULL;
	docket_tape_doc doc;
	int rc = -1;

	switch (w) {
	case JANSSON_TREE:
		rc = docket_json_parse(&j, text, len);
		break;
	case JANSSON_EVENT:
		if ((rc = docket_json_parse(&j, text, len)) == 0)
			rc = docket_event_from_json(&ev, j);
		break;
	case TAPE_ONLY:
		rc = docket_json_tape_parse(tape, text, len, &doc);
		break;
	case TAPE_EVENT:
		if ((rc = docket_event_from_text(&ev, tape, text, len)) == 1) {
			(*fallbacks)++;
			if ((rc = docket_json_parse(&j, text, len)) == 0)
				rc = docket_event_from_json(&ev, j);
		}
		break;
	case WAYS:
		break;
	}
	json_decref(j);
	docket_event_free(ev);
	return rc < 0 ? -1 : 0;
}

/* CPU ns of one way over every line. */
static uint64_t time_way(enum way w, docket_json_tape *tape, const lines *l, size_t *fallbacks)
{
	uint64_t t0 = bench_cpu_ns();
	size_t bad = 0;

	for (size_t i = 0; i < l->n; i++)
		bad += one(w, tape, l->line[i], l->len[i], fallbacks) < 0;
	if (bad)
		bench_fail(l->name, way_names[w]);
	return bench_cpu_ns() - t0;
}

static int packed_equal(const docket_event *a, const docket_event *b)
{
	size_t na = docket__v1__event__get_packed_size(a), nb = docket__v1__event__get_packed_size(b);
	uint8_t *pa = malloc(na + 1), *pb = malloc(nb + 1);
	int eq = pa && pb && na == nb;

	if (eq) {
		docket__v1__event__pack(a, pa);
		docket__v1__event__pack(b, pb);
		eq = memcmp(pa, pb, na) == 0;
	}
	free(pa);
	free(pb);
	return eq;
}

/* Both ways give the same event for every line. */
static void check_same(docket_json_tape *tape, const lines *l)
{
	size_t differ = 0;

	for (size_t i = 0; i < l->n; i++) {
		docket_event *a = NULL, *b = NULL;
		json_t *j = NULL;

		if (docket_json_parse(&j, l->line[i], l->len[i]) < 0 || docket_event_from_json(&a, j) < 0 ||
		    docket_event_from_text(&b, tape, l->line[i], l->len[i]) != 0 || !packed_equal(a, b))
			differ++;
		json_decref(j);
		docket_event_free(a);
		docket_event_free(b);
	}
	if (differ)
		bench_fail(l->name, "simdjson and jansson differ (or a line fell back to jansson)");
}

static json_t *run_stream(lines *l, unsigned rounds, docket_json_tape *tape)
{
	uint64_t best[WAYS];
	size_t fallbacks = 0;
	json_t *out;

	check_same(tape, l);
	for (int w = 0; w < WAYS; w++)
		best[w] = UINT64_MAX;
	for (unsigned r = 0; r < rounds; r++) {
		for (int k = 0; k < WAYS; k++) {
			enum way w = (enum way)(r % 2 ? WAYS - 1 - k : k);
			uint64_t ns = time_way(w, tape, l, &fallbacks);

			if (ns < best[w])
				best[w] = ns;
		}
	}
	printf("%s: %zu lines, %.0f bytes a line\n", l->name, l->n, (double)l->text.len / (double)l->n);
	for (int w = 0; w < WAYS; w++)
		printf("  %-26s %8.3f us/line\n", way_names[w], (double)best[w] / 1e3 / (double)l->n);
	printf("  %-26s %8.2fx   (simdjson tape alone: %.2fx faster than the jansson tree)\n",
	       "event: jansson / simdjson", (double)best[JANSSON_EVENT] / (double)best[TAPE_EVENT],
	       (double)best[JANSSON_TREE] / (double)best[TAPE_ONLY]);
	out = json_pack("{s:s, s:I, s:f, s:f, s:f, s:f, s:f, s:I}", "stream", l->name, "lines", (json_int_t)l->n,
			"jansson_tree_us", (double)best[JANSSON_TREE] / 1e3 / (double)l->n,
			"jansson_event_us", (double)best[JANSSON_EVENT] / 1e3 / (double)l->n,
			"simdjson_tape_us", (double)best[TAPE_ONLY] / 1e3 / (double)l->n,
			"simdjson_event_us", (double)best[TAPE_EVENT] / 1e3 / (double)l->n,
			"event_speedup", (double)best[JANSSON_EVENT] / (double)best[TAPE_EVENT],
			"fallbacks", (json_int_t)fallbacks);
	return out;
}

static int arg_size(const char *s, size_t *out)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);

	if (*s == '\0' || *end != '\0' || v == 0)
		return -1;
	*out = (size_t)v;
	return 0;
}

int main(int argc, char **argv)
{
	size_t calls = 60000, mix = 50000, rounds = 3;
	int quick = 0, keep = 0;
	lines f2 = { "format2 stream", DOCKET_BUF_INIT, 0, NULL, NULL };
	lines gm = { "gen_mix stream", DOCKET_BUF_INIT, 0, NULL, NULL };
	docket_json_tape *tape;
	json_t *out, *a, *b;
	size_t events;

	bench_init("bench_json_parse");
	for (int i = 1; i < argc; i++) {
		if (bench_common_flag(argv[i], &quick, &keep))
			continue;
		if (i + 1 < argc && strcmp(argv[i], "--calls") == 0 && arg_size(argv[i + 1], &calls) == 0)
			i++;
		else if (i + 1 < argc && strcmp(argv[i], "--mix") == 0 && arg_size(argv[i + 1], &mix) == 0)
			i++;
		else if (i + 1 < argc && strcmp(argv[i], "--rounds") == 0 && arg_size(argv[i + 1], &rounds) == 0)
			i++;
		else {
			fprintf(stderr, "usage: bench_json_parse [--calls N] [--mix N] [--rounds R] [--quick]\n");
			return 2;
		}
	}
	if (quick) {
		calls = 2000;
		mix = 2000;
		rounds = 1;
	}
	docket_alloc_install_json(); /* as the CLI does */
	if (gen_format2(&f2.text, calls, 200, &events) < 0 || split(&f2) < 0 ||
	    gen_mix(&gm.text, mix, 42, NULL) < 0 || split(&gm) < 0 || !(tape = docket_json_tape_new())) {
		bench_fail("generate", "out of memory");
		return 1;
	}
	a = run_stream(&f2, (unsigned)rounds, tape);
	b = run_stream(&gm, (unsigned)rounds, tape);
	out = json_pack("{s:s, s:o, s:o}", "bench", "json_parse", "format2", a, "gen_mix", b);
	bench_print_result(out);
	docket_json_tape_free(tape);
	lines_dispose(&f2);
	lines_dispose(&gm);
	return bench_failures() ? 1 : 0;
}
