/* SPDX-License-Identifier: Apache-2.0 */
/*
 * export.c: the export pipeline and the JSONL format.
 *
 *   ledger (docket_ledger_read_json, one session or all)
 *     -> redaction (docket_redact_event, hits listed in "redacted")
 *     -> pseudonyms (docket_pseudonymize_event)
 *     -> the format's sink (jsonl here; ocsf.c, otel.c, csv.c)
 *
 * When nothing transforms the events and the sink can write an event as
 * stored (JSONL), the json_t is skipped: the ledger's decoded events
 * (ledger_read_events) go to sink->stored, which writes each line with
 * docket_event_write_json into one buffer written out in large blocks. The
 * bytes are those of the tree path (tests/unit/test_event_emit.c).
 *
 * Events before --since still pass through the sink with emit = 0, so an
 * outcome after the cut can be mapped with the intent it belongs to.
 */
#include <string.h>
#include <time.h>

#include "audit/checkpoint.h"
#include "audit/pseudo.h"
#include "ledger/event.h"
#include "export_internal.h"
#include "ledger/ledger_sys.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/json.h"

#define RULES_FILE_MAX ((size_t)1 << 20)
#define JSONL_BLOCK ((size_t)1 << 17) /* the JSONL buffer is written out past this */

/* ---- helpers ----------------------------------------------------------- */

const char *jstr(const json_t *obj, const char *key)
{
	return docket_json_str_or(obj, key, "");
}

int jhas(const json_t *obj, const char *key)
{
	return json_object_get(obj, key) != NULL;
}

int export_json_line(FILE *out, const json_t *value)
{
	docket_buf line = DOCKET_BUF_INIT;
	int error;

	if ((error = docket_json_dump(&line, value)) == 0 && (error = docket_buf_putc(&line, '\n')) == 0 &&
	    fwrite(line.ptr, 1, line.len, out) != line.len)
		error = docket_error_set(DOCKET_ESTORAGE, "cannot write the export");
	docket_buf_dispose(&line);
	return error;
}

/* Parse the digits of `s` (exactly n of them). */
static int digits(const char *s, int n, int *out)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

/* "Z", "+HH:MM" or "-HH:MM" -> offset in seconds east of UTC. */
static int zone_offset(const char *s, long *out)
{
	int h, m;

	if (strcmp(s, "Z") == 0 || strcmp(s, "z") == 0) {
		*out = 0;
		return 0;
	}
	if ((s[0] != '+' && s[0] != '-') || strlen(s) != 6 || s[3] != ':' ||
	    digits(s + 1, 2, &h) < 0 || digits(s + 4, 2, &m) < 0 || h > 23 || m > 59)
		return -1;
	*out = (s[0] == '-' ? -1L : 1L) * (h * 3600L + m * 60L);
	return 0;
}

int docket_time_to_ms(const char *s, int64_t *out_ms)
{
	struct tm tm;
	const char *rest;
	long offset;
	int ms = 0, n = 0;

	memset(&tm, 0, sizeof(tm));
	if (!s || !(rest = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm)))
		return -1;
	if (*rest == '.') {
		for (rest++; *rest >= '0' && *rest <= '9'; rest++, n++)
			if (n < 3)
				ms = ms * 10 + (*rest - '0');
		if (n == 0)
			return -1;
		for (; n < 3; n++)
			ms *= 10;
	}
	if (zone_offset(rest, &offset) < 0)
		return -1;
	*out_ms = ((int64_t)timegm(&tm) - offset) * 1000 + ms;
	return 0;
}

int docket_wait_known(int64_t asked_ms, int64_t settled_ms, int imported, int stamped)
{
	if (settled_ms < asked_ms || stamped)
		return 0;
	return !(imported && settled_ms == asked_ms);
}

int docket_request_stamped(const char *intent_time, int64_t intent_line, const json_t *request)
{
	const json_t *prov = json_object_get(request, "provenance");
	const json_t *line = json_object_get(prov, "line");
	const char *time = json_string_value(json_object_get(request, "time"));

	return json_is_object(prov) && intent_time && time && strcmp(time, intent_time) == 0 &&
	       json_is_integer(line) && intent_line >= 0 && json_integer_value(line) == intent_line;
}

int64_t event_ms(const json_t *ev)
{
	int64_t ms;

	return docket_time_to_ms(json_string_value(json_object_get(ev, "time")), &ms) == 0 ? ms : -1;
}

int docket_redaction_rules_read(char **out, size_t *len, const char *path)
{
	docket_buf text = DOCKET_BUF_INIT;
	int error;

	*out = NULL;
	*len = 0;
	if ((error = audit_read_file(&text, path, RULES_FILE_MAX)) < 0 ||
	    (error = docket_buf_reserve(&text, 0)) < 0) {
		docket_buf_dispose(&text);
		return error == DOCKET_ENOTFOUND ? docket_error_set(DOCKET_EINVALID, "%s: no such file", path)
						 : error;
	}
	*out = text.ptr;
	*len = text.len;
	return 0;
}

int docket_export_format_parse(const char *name)
{
	static const char *const names[] = { "jsonl", "ocsf", "otel", "csv" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(names[i], name) == 0)
			return (int)i;
	return -1;
}

/* ---- JSONL ------------------------------------------------------------- */

typedef struct jsonl_sink {
	export_sink base;
	docket_buf lines; /* stored events written, not yet handed to `out` */
	/* lines whose hash is still export_hash_pending: their seq and the
	 * offset of the hash's hex in `lines` */
	uint64_t *pend_seq;
	size_t *pend_off;
	size_t npend, cap;
	int failed;       /* a pending line could not be written: hand out what is before it */
} jsonl_sink;

#define HASH_HEX (2 * (size_t)LEDGER_HASH_LEN)
#define LINE_TAIL (sizeof("\"}\n") - 1) /* after the hash's hex, the line's last bytes */

const char export_hash_pending[HASH_HEX + 1] =
	"0000000000000000000000000000000000000000000000000000000000000000";

static int jsonl_event(export_sink *s, const json_t *ev, int emit)
{
	if (!emit)
		return 0;
	s->stats->records++;
	return export_json_line(s->out, ev);
}

static int jsonl_put(jsonl_sink *j, size_t from, size_t end)
{
	if (end > from && fwrite(j->lines.ptr + from, 1, end - from, j->base.out) != end - from)
		return docket_error_set(DOCKET_ESTORAGE, "cannot write the export");
	return 0;
}

/* Hand the lines from the start of the buffer up to `end` to the stream. */
static int jsonl_write_out(jsonl_sink *j, size_t end)
{
	int error = jsonl_put(j, 0, end);

	docket_buf_clear(&j->lines);
	return error;
}

/* Remember the line just written, whose hash is pending (its hex is the
 * line's last field: event_emit.c writes "hash" last). */
static int jsonl_pend(jsonl_sink *j, uint64_t seq)
{
	size_t off = j->lines.len - LINE_TAIL - HASH_HEX;

	if (j->lines.len < LINE_TAIL + HASH_HEX || memcmp(j->lines.ptr + off, export_hash_pending, HASH_HEX) != 0)
		return docket_error_set(DOCKET_ERROR, "seq %llu: the hash is not the line's last field",
					(unsigned long long)seq);
	if (j->npend == j->cap) {
		size_t cap = j->cap ? 2 * j->cap : 1024;
		uint64_t *seqs = docket_realloc(j->pend_seq, cap * sizeof(*seqs));
		size_t *offs = seqs ? docket_realloc(j->pend_off, cap * sizeof(*offs)) : NULL;

		if (seqs)
			j->pend_seq = seqs;
		if (!offs)
			return docket_error_set_oom();
		j->pend_off = offs;
		j->cap = cap;
	}
	j->pend_seq[j->npend] = seq;
	j->pend_off[j->npend++] = off;
	return 0;
}

/* An event before --since is written and taken back: it must fail as the
 * tree path fails on it. The lines before a failure still go out (once
 * their hashes are in, when they are pending). */
static int jsonl_stored(export_sink *s, uint64_t seq, const Docket__V1__Event *ev, const char *hash, int emit)
{
	jsonl_sink *j = (jsonl_sink *)s;
	docket_event_frame frame = { seq, hash };
	size_t start = j->lines.len;
	int error;

	if ((error = docket_event_write_json(&j->lines, ev, &frame)) < 0 ||
	    (error = docket_buf_putc(&j->lines, '\n')) < 0) {
		int write_error;

		if (j->npend) {
			j->lines.len = start;
			j->failed = 1;
			return error;
		}
		write_error = jsonl_write_out(j, start);
		return write_error < 0 ? write_error : error;
	}
	if (!emit) {
		j->lines.len = start;
		j->lines.ptr[start] = '\0';
		return 0;
	}
	s->stats->records++;
	if (hash == export_hash_pending)
		return jsonl_pend(j, seq);
	return !j->npend && j->lines.len >= JSONL_BLOCK ? jsonl_write_out(j, j->lines.len) : 0;
}

/* The pending lines' hashes: each hex in place, then the blocks the
 * lines would have been written in had their hashes been there (each
 * ends at the first line that takes it to JSONL_BLOCK bytes). */
static int jsonl_hashes(export_sink *s, uint64_t first, uint64_t last, const uint8_t (*h)[LEDGER_HASH_LEN])
{
	jsonl_sink *j = (jsonl_sink *)s;
	char hex[HASH_HEX + 1];
	size_t from = 0;
	int error = 0;

	for (size_t i = 0; i < j->npend && error == 0; i++) {
		size_t end = j->pend_off[i] + HASH_HEX + LINE_TAIL;

		if (j->pend_seq[i] < first || j->pend_seq[i] > last)
			return docket_error_set(DOCKET_ERROR, "seq %llu: no hash for it",
						(unsigned long long)j->pend_seq[i]);
		docket_hex(hex, h[j->pend_seq[i] - first], LEDGER_HASH_LEN);
		memcpy(j->lines.ptr + j->pend_off[i], hex, HASH_HEX);
		if (end - from >= JSONL_BLOCK) {
			error = jsonl_put(j, from, end);
			from = end;
		}
	}
	j->npend = 0;
	if (error == 0 && j->failed)
		return jsonl_write_out(j, j->lines.len);
	if (from) {
		j->lines.len -= from;
		memmove(j->lines.ptr, j->lines.ptr + from, j->lines.len + 1);
	}
	return error;
}

static int jsonl_finish(export_sink *s)
{
	jsonl_sink *j = (jsonl_sink *)s;

	return jsonl_write_out(j, j->lines.len);
}

static void jsonl_free(export_sink *s)
{
	jsonl_sink *j = (jsonl_sink *)s;

	if (j) {
		docket_buf_dispose(&j->lines);
		docket_free(j->pend_seq);
		docket_free(j->pend_off);
	}
	docket_free(j);
}

int sink_jsonl_new(export_sink **out, int64_t since_ms)
{
	jsonl_sink *j;

	(void)since_ms;
	if (!(j = docket_calloc(1, sizeof(*j))))
		return docket_error_set_oom();
	j->base.event = jsonl_event;
	j->base.stored = jsonl_stored;
	j->base.hashes = jsonl_hashes;
	j->base.finish = jsonl_finish;
	j->base.free = jsonl_free;
	*out = &j->base;
	return 0;
}

/* ---- the pipeline ------------------------------------------------------ */

typedef struct pipeline {
	const docket_export_options *opts;
	export_sink *sink;
	docket_export_stats *stats;
} pipeline;

/*
 * A ledger holds one tool.intent per invocation (the append refuses a
 * second one with the same id), so counting intents counts the distinct
 * invocations without a set that would grow with the ledger.
 */
static void count_event(pipeline *p, const char *type)
{
	p->stats->events++;
	if (strcmp(type, "approval.settled") == 0)
		p->stats->approvals++;
	else if (strcmp(type, "tool.intent") == 0)
		p->stats->invocations++;
}

/* Redact and pseudonymise one event in place. */
static int transform(pipeline *p, json_t *ev)
{
	json_t *hits = NULL;
	int error = 0;

	if (p->opts->redactor) {
		if (!(hits = json_array()))
			return docket_error_set_oom();
		if ((error = docket_redact_event(p->opts->redactor, ev, hits, NULL)) < 0)
			goto cleanup;
		p->stats->redactions += json_array_size(hits);
		if (json_array_size(hits) && json_object_set(ev, "redacted", hits) < 0) {
			error = docket_error_set_oom();
			goto cleanup;
		}
	}
	if (p->opts->pseudonymizer)
		error = docket_pseudonymize_event(p->opts->pseudonymizer, ev);
cleanup:
	json_decref(hits);
	return error;
}

static int pipeline_event(void *ctx, uint64_t seq, json_t *ev)
{
	pipeline *p = ctx;
	int64_t ms = event_ms(ev);
	int emit = p->opts->since_ms <= 0 || ms >= p->opts->since_ms;
	int error;

	p->stats->head_seq = seq;
	if ((error = transform(p, ev)) < 0)
		return error;
	if (emit)
		count_event(p, jstr(ev, "type"));
	return p->sink->event(p->sink, ev, emit);
}

/* pipeline_event without the json_t: nothing to transform. */
static int pipeline_stored(void *ctx, uint64_t seq, const docket_event *ev, const uint8_t hash[LEDGER_HASH_LEN])
{
	pipeline *p = ctx;
	char hex[2 * LEDGER_HASH_LEN + 1];
	int64_t ms = -1;
	int emit = p->opts->since_ms <= 0 ||
		   (docket_time_to_ms(ev->time, &ms) == 0 && ms >= p->opts->since_ms);
	int error;

	p->stats->head_seq = seq;
	hex[0] = '\0';
	if (hash && hash != ledger_hash_pending)
		docket_hex(hex, hash, LEDGER_HASH_LEN);
	if ((error = p->sink->stored(p->sink, seq, ev, hash == ledger_hash_pending ? export_hash_pending : hex,
				     emit)) < 0)
		return error;
	if (emit)
		count_event(p, docket_event_type(ev));
	return error;
}

static int pipeline_hashes(void *ctx, uint64_t first, uint64_t last, const uint8_t (*h)[LEDGER_HASH_LEN])
{
	pipeline *p = ctx;

	return p->sink->hashes(p->sink, first, last, h);
}

static int sink_new(export_sink **out, int format, int64_t since_ms)
{
	switch (format) {
	case DOCKET_EXPORT_JSONL:
		return sink_jsonl_new(out, since_ms);
	case DOCKET_EXPORT_OCSF:
		return sink_ocsf_new(out, since_ms);
	case DOCKET_EXPORT_OTEL:
		return sink_otel_new(out, since_ms);
	case DOCKET_EXPORT_CSV:
		return sink_csv_new(out, since_ms);
	default:
		return docket_error_set(DOCKET_EINVALID, "unknown export format %d", format);
	}
}

/* Tests: 0 reads the outcomes even for a sink that takes them from the
 * invocation records (the two must give the same bytes). */
int export_outcomes_from_records = 1;

typedef struct ledger_read {
	docket_ledger *ledger;
	const docket_export_options *opts;
	export_sink *sink;
} ledger_read;

static int read_ledger(void *vctx, docket_json_cb cb, void *cbctx)
{
	ledger_read *r = vctx;
	docket_read_options ro = DOCKET_READ_OPTIONS_INIT;

	ro.session = r->opts->session;
	ro.since = r->opts->since_seq;
	if (r->sink->stored && !r->opts->redactor && !r->opts->pseudonymizer) {
		ro.flags = r->sink->read_flags;
		/* older indexes do not hold the outcomes: read them */
		if ((ro.flags & DOCKET_READ_NO_OUTCOMES) &&
		    (!export_outcomes_from_records || ledger_projections_current(r->ledger) < 0))
			ro.flags &= ~DOCKET_READ_NO_OUTCOMES;
		r->sink->outcomes_skipped = (ro.flags & DOCKET_READ_NO_OUTCOMES) != 0;
		/* the chain hashed on a worker while the lines are written */
		if (r->sink->hashes && !ro.session && !(ro.flags & DOCKET_READ_NO_HASH))
			return ledger_read_events_hashed(r->ledger, &ro, pipeline_stored, pipeline_hashes, cbctx);
		return ledger_read_events(r->ledger, &ro, pipeline_stored, cbctx);
	}
	return docket_ledger_read_json(r->ledger, &ro, cb, cbctx);
}

static int learn_names(void *ctx, uint64_t seq, json_t *ev)
{
	(void)seq;
	return pseudo_learn(ctx, ev);
}

int export_run_read(export_read read, void *rctx, const docket_export_options *opts, export_sink *sink,
		    FILE *out, docket_export_stats *stats)
{
	docket_export_stats own;
	pipeline p = { opts, sink, stats ? stats : &own };
	int error;

	/* pseudonyms: a first pass learns every user name, so that none is
	 * left in an event that comes before the one that names its home */
	if (opts->pseudonymizer && (error = read(rctx, learn_names, (void *)opts->pseudonymizer)) < 0)
		return error;

	memset(p.stats, 0, sizeof(*p.stats));
	sink->out = out;
	sink->ledger_id = sink->info.ledger_id;
	sink->since_ms = opts->since_ms;
	sink->stats = p.stats;
	if ((error = read(rctx, pipeline_event, &p)) == 0 &&
	    (error = sink->finish(sink)) == 0 && out && (fflush(out) != 0 || ferror(out)))
		error = docket_error_set(DOCKET_ESTORAGE, "cannot write the export");
	return error;
}

int export_run(docket_ledger *ledger, const docket_export_options *opts, export_sink *sink,
	       FILE *out, docket_export_stats *stats)
{
	ledger_read r = { ledger, opts, sink };
	int error;

	if ((error = docket_ledger_info_get(ledger, &sink->info)) < 0)
		return error;
	sink->ledger = ledger;
	return export_run_read(read_ledger, &r, opts, sink, out, stats);
}

int docket_export(docket_ledger *ledger, const docket_export_options *opts, FILE *out,
		  docket_export_stats *stats)
{
	export_sink *sink = NULL;
	int error;

	if ((error = sink_new(&sink, opts->format, opts->since_ms)) < 0)
		return error;
	error = export_run(ledger, opts, sink, out, stats);
	sink->free(sink);
	return error;
}
