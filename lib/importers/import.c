/* SPDX-License-Identifier: Apache-2.0 */
/*
 * import.c: the public import API (include/docket/import.h).
 *
 * Progress per source file lives in the ledger's `imports` table, keyed by
 * SHA-256("docket-import" \0 format \0 realpath). The record:
 *
 *   "DKIM" | be32 version | be64 offset | be64 lines | sha256(bytes 0..offset)
 *   | be64 inflight | path
 *
 * offset/lines: what earlier imports consumed (whole lines). A file whose
 * first `offset` bytes still hash the same is resumed after `lines`. A file
 * whose imported part changed is refused (DOCKET_ECONFLICT): transcripts only
 * grow, so it is another history, and mapping it again would re-send
 * tool.dispatched events of completed calls, which the ledger refuses.
 *
 * Crash safety. A batch and the record that follows it are two durable
 * transactions, so before each batch the record is rewritten with
 * inflight = the first seq the batch can take. After a crash between the
 * batch and its record, the next import finds inflight set and looks at the
 * events from that seq on: those with this file's provenance say how far the
 * batch got (it is all or nothing), and the import resumes after that line.
 * Without this, re-sending a batch that was written would fail: a
 * tool.dispatched after its call completed is refused (invariant 5).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "import_internal.h"
#include "ledger/ledger_sys.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/json.h"

#define DEFAULT_BATCH ((size_t)16 << 20)
#define REC_VERSION 1u
#define REC_FIXED (4 + 4 + 8 + 8 + 32 + 8)

typedef struct import_record {
	uint64_t offset;
	uint64_t lines;
	uint8_t prefix[32];
	uint64_t inflight;   /* 0, or the first seq a batch in flight could take */
} import_record;

/* The state of one file import. */
typedef struct file_import {
	docket_ledger *ledger;
	const char *path;          /* realpath: provenance.file and the record's key */
	uint8_t key[32];
	EVP_MD_CTX *hash;          /* SHA-256 of the bytes consumed so far */
	size_t hashed;
	import_record rec;         /* as stored (or to be stored) */
	json_t **batch;
	size_t n, cap;
	int stale;                 /* no record is stored yet */
	imp_merge *merge;          /* sessions the ledger already holds */
	const docket_import_options *opts;
	docket_import_stats *stats;
} file_import;

const char *docket_import_format_name(docket_import_format format)
{
	switch (format) {
	case DOCKET_IMPORT_CODEX: return "codex";
	case DOCKET_IMPORT_CLAUDE: return "claude";
	}
	return NULL;
}

int docket_import_format_parse(docket_import_format *out, const char *name)
{
	if (name && strcmp(name, "codex") == 0)
		*out = DOCKET_IMPORT_CODEX;
	else if (name && strcmp(name, "claude") == 0)
		*out = DOCKET_IMPORT_CLAUDE;
	else
		return docket_error_set(DOCKET_EINVALID, "unknown transcript format \"%s\" (expected codex or claude)",
					name ? name : "");
	return 0;
}

int docket_import_map_tool(const char **tool, json_t **args, docket_import_format format,
			   const char *name, const json_t *input, const char *cwd)
{
	if (!name || !*name)
		return docket_error_set(DOCKET_EINVALID, "a tool call without a tool name");
	if (format == DOCKET_IMPORT_CODEX)
		return imp_codex_hook_tool(tool, args, name, input, cwd);
	return imp_claude_tool(tool, args, name, input, cwd);
}

static const imp_format_ops *ops_of(docket_import_format format)
{
	switch (format) {
	case DOCKET_IMPORT_CODEX: return &imp_codex_ops;
	case DOCKET_IMPORT_CLAUDE: return &imp_claude_ops;
	}
	return NULL;
}

/* ---- detecting the format ---- */

#define DETECT_LINES 64
#define DETECT_BYTES ((size_t)1 << 20)

/* The format that claims the line, or 0 when none does (or both would). */
static int sniff_line(const char *s, size_t len)
{
	json_error_t jerr;
	json_t *obj = NULL;
	int codex, claude;

	if (docket_json_load(&obj, s, len, 0, &jerr) < 0 || !json_is_object(obj)) {
		json_decref(obj);
		docket_error_clear();
		return 0;
	}
	codex = imp_codex_ops.sniff(obj);
	claude = imp_claude_ops.sniff(obj);
	json_decref(obj);
	if (codex == claude)
		return 0;
	return codex ? DOCKET_IMPORT_CODEX : DOCKET_IMPORT_CLAUDE;
}

int docket_import_detect(docket_import_format *out, const char *data, size_t len)
{
	size_t pos = 0, lines = 0;
	int f;

	if (len > DETECT_BYTES)
		len = DETECT_BYTES;
	while (pos < len && lines < DETECT_LINES) {
		const char *nl = memchr(data + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (data + pos)) : len - pos;

		if (!docket_blank_line(data + pos, n)) {
			lines++;
			if ((f = sniff_line(data + pos, n)) != 0) {
				*out = (docket_import_format)f;
				return 0;
			}
		}
		pos += n + 1;
	}
	return docket_error_set(DOCKET_ENOTFOUND,
				"not a Codex rollout or a Claude Code transcript (no line of either in its first %zu lines)",
				lines);
}

/* ---- walking with a format ---- */

static int walk_with(imp_walk *w, const imp_format_ops *ops)
{
	int error;

	w->ops = ops;
	if ((error = ops->init(&w->ctx.fmt)) < 0)
		return error;
	error = imp_walk_run(w);
	if (error == 0)
		imp_finish(&w->ctx);
	ops->free(w->ctx.fmt);
	w->ctx.fmt = NULL;
	if (w->incomplete)
		w->ctx.stats->incomplete++;
	return error;
}

static void count_input(docket_import_stats *stats, const imp_walk *w)
{
	stats->files++;
	stats->bytes += w->done;
	stats->lines += w->lines;
	stats->lines_resumed += w->resume_line < w->lines ? w->resume_line : w->lines;
}

int docket_import_buffer(docket_import_format format, const char *name, const char *data,
			 size_t len, const docket_import_options *opts,
			 docket_import_event_cb cb, void *ctx, docket_import_stats *stats)
{
	const imp_format_ops *ops = ops_of(format);
	imp_walk w;
	int error;

	(void)opts;
	if (!ops)
		return docket_error_set(DOCKET_EINVALID, "unknown transcript format");
	memset(&w, 0, sizeof(w));
	imp_ctx_init(&w.ctx, name ? name : "<buffer>", stats, cb, ctx);
	w.data = data;
	w.len = len;
	w.batch_bytes = SIZE_MAX;
	error = walk_with(&w, ops);
	count_input(stats, &w);
	imp_ctx_dispose(&w.ctx);
	return error;
}

/* ---- progress records ---- */

static void record_encode(uint8_t *out, const import_record *r)
{
	memcpy(out, "DKIM", 4);
	docket_be32_put(out + 4, REC_VERSION);
	docket_be64_put(out + 8, r->offset);
	docket_be64_put(out + 16, r->lines);
	memcpy(out + 24, r->prefix, 32);
	docket_be64_put(out + 56, r->inflight);
}

static int record_put(file_import *f)
{
	uint8_t fixed[REC_FIXED];
	docket_buf v = DOCKET_BUF_INIT;
	int error;

	record_encode(fixed, &f->rec);
	if ((error = docket_buf_put(&v, fixed, sizeof(fixed))) == 0 &&
	    (error = docket_buf_puts(&v, f->path)) == 0)
		error = ledger_import_state_put(f->ledger, f->key, sizeof(f->key), v.ptr, v.len);
	docket_buf_dispose(&v);
	return error;
}

/* 0 and f->rec, DOCKET_ENOTFOUND when there is none (or it is unreadable). */
static int record_get(file_import *f)
{
	docket_buf v = DOCKET_BUF_INIT;
	const uint8_t *p;
	int error = ledger_import_state_get(f->ledger, f->key, sizeof(f->key), &v);

	if (error == 0 && (v.len < REC_FIXED || memcmp(v.ptr, "DKIM", 4) != 0 ||
			   docket_be32_get((const uint8_t *)v.ptr + 4) != REC_VERSION))
		error = DOCKET_ENOTFOUND;  /* an unknown record: import from the start */
	if (error == 0) {
		p = (const uint8_t *)v.ptr;
		f->rec.offset = docket_be64_get(p + 8);
		f->rec.lines = docket_be64_get(p + 16);
		memcpy(f->rec.prefix, p + 24, 32);
		f->rec.inflight = docket_be64_get(p + 56);
	}
	docket_buf_dispose(&v);
	return error;
}

static int key_of(uint8_t out[32], docket_import_format format, const char *path)
{
	const char *name = docket_import_format_name(format);
	unsigned int n = 0;
	EVP_MD_CTX *h = EVP_MD_CTX_new();
	int ok = h && EVP_DigestInit_ex(h, EVP_sha256(), NULL) == 1 &&
		 EVP_DigestUpdate(h, "docket-import", 14) == 1 &&
		 EVP_DigestUpdate(h, name, strlen(name) + 1) == 1 &&
		 EVP_DigestUpdate(h, path, strlen(path)) == 1 &&
		 EVP_DigestFinal_ex(h, out, &n) == 1 && n == 32;

	EVP_MD_CTX_free(h);
	return ok ? 0 : docket_error_set(DOCKET_ERROR, "SHA-256 failed");
}

static int sha256(uint8_t out[32], const void *data, size_t len)
{
	unsigned int n = 0;

	if (EVP_Digest(data, len, out, &n, EVP_sha256(), NULL) != 1 || n != 32)
		return docket_error_set(DOCKET_ERROR, "SHA-256 failed");
	return 0;
}

/* Hash the consumed input up to `upto` and read the digest so far. */
static int prefix_digest(file_import *f, const char *data, size_t upto, uint8_t out[32])
{
	EVP_MD_CTX *copy = EVP_MD_CTX_new();
	unsigned int n = 0;
	int ok;

	if (upto > f->hashed) {
		if (EVP_DigestUpdate(f->hash, data + f->hashed, upto - f->hashed) != 1) {
			EVP_MD_CTX_free(copy);
			return docket_error_set(DOCKET_ERROR, "SHA-256 failed");
		}
		f->hashed = upto;
	}
	ok = copy && EVP_MD_CTX_copy_ex(copy, f->hash) == 1 &&
	     EVP_DigestFinal_ex(copy, out, &n) == 1 && n == 32;
	EVP_MD_CTX_free(copy);
	return ok ? 0 : docket_error_set(DOCKET_ERROR, "SHA-256 failed");
}

/* ---- resuming ---- */

typedef struct scan_ctx {
	const char *path;
	uint64_t max_line;
} scan_ctx;

static int scan_cb(void *ctx, uint64_t seq, json_t *event)
{
	scan_ctx *s = ctx;
	const json_t *prov = json_object_get(event, "provenance");
	const char *file = imp_str(prov, "file");
	const json_t *line = json_object_get(prov, "line");

	(void)seq;
	if (file && strcmp(file, s->path) == 0 && json_is_integer(line) &&
	    (uint64_t)json_integer_value(line) > s->max_line)
		s->max_line = (uint64_t)json_integer_value(line);
	return 0;
}

/* The number of lines already imported (0: start from the beginning). */
static int resume_point(file_import *f, const char *data, size_t len, size_t *out)
{
	docket_read_options ro = DOCKET_READ_OPTIONS_INIT;
	scan_ctx scan = { f->path, 0 };
	uint8_t digest[32];
	int error = record_get(f);

	*out = 0;
	if (error == DOCKET_ENOTFOUND) {
		/* nothing imported yet: the record of "0 bytes" holds the digest of
		 * no bytes, so one left by a failed or crashed first batch resumes
		 * from the start instead of refusing the file */
		memset(&f->rec, 0, sizeof(f->rec));
		f->stale = 1;
		return sha256(f->rec.prefix, "", 0);
	}
	if (error < 0)
		return error;
	if (f->rec.offset > len || (error = sha256(digest, data, (size_t)f->rec.offset)) < 0 ||
	    memcmp(digest, f->rec.prefix, 32) != 0 || f->rec.lines > SIZE_MAX) {
		if (error < 0)
			return error;
		/* a transcript only grows: other bytes are another history */
		return docket_error_set(DOCKET_ECONFLICT,
					"%s: changed since it was imported (its first %llu bytes, %llu lines, "
					"are no longer the same); not imported again",
					f->path, (unsigned long long)f->rec.offset,
					(unsigned long long)f->rec.lines);
	}
	*out = (size_t)f->rec.lines;
	if (f->rec.inflight) {
		/* a batch may have been written after the record: see the top */
		ro.since = f->rec.inflight;
		if ((error = docket_ledger_read_json(f->ledger, &ro, scan_cb, &scan)) < 0)
			return error;
		if (scan.max_line > *out && scan.max_line <= SIZE_MAX)
			*out = (size_t)scan.max_line;
	}
	return 0;
}

/* ---- batches ---- */

static int batch_push(void *ctx, json_t *event)
{
	file_import *f = ctx;

	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 1024;
		json_t **b;

		if (cap > SIZE_MAX / sizeof(*b) || !(b = docket_realloc(f->batch, cap * sizeof(*b)))) {
			json_decref(event);
			return docket_error_set_oom();
		}
		f->batch = b;
		f->cap = cap;
	}
	f->batch[f->n++] = event;
	return 0;
}

/* Every mapped event passes the merge filter on its way into the batch. */
static int merge_push(void *ctx, json_t *event)
{
	file_import *f = ctx;

	return imp_merge_event(f->merge, event, batch_push, f);
}

static void batch_clear(file_import *f)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		json_decref(f->batch[i]);
	f->n = 0;
}

/* The ledger names the refused event by its index; name its file:line too. */
static void blame(const file_import *f)
{
	const docket_error *e = docket_error_last();
	size_t idx = e->event_index;
	const json_t *prov;

	if (idx < 1 || idx > f->n)
		return;
	prov = json_object_get(f->batch[idx - 1], "provenance");
	docket_error_prefix("%s:%lld: ", f->path,
			    (long long)json_integer_value(json_object_get(prov, "line")));
}

/*
 * The batch was refused: its transaction wrote nothing, so the record goes
 * back to what the committed batches say (inflight 0). The next import of the
 * file then starts where this one failed, never at a "changed" refusal.
 * Best effort: when this write fails too, the inflight scan finds no event
 * of the batch and comes to the same place.
 */
static void unflag(file_import *f)
{
	docket_error saved = *docket_error_last();

	f->rec.inflight = 0;
	(void)record_put(f);
	docket_error_restore(&saved);
}

static int append_batch(file_import *f)
{
	docket_append_result *res;
	docket_ledger_info info;
	size_t i;
	int error;

	if (!(res = docket_calloc(f->n, sizeof(*res))))
		return docket_error_set_oom();
	if ((error = docket_ledger_info_get(f->ledger, &info)) < 0)
		goto done;
	f->rec.inflight = info.events + 1;
	if ((error = record_put(f)) < 0)
		goto done;
	docket_error_clear();
	if ((error = docket_ledger_append_json(f->ledger, f->batch, f->n, res)) < 0) {
		blame(f);
		unflag(f);
		goto done;
	}
	for (i = 0; i < f->n; i++) {
		if (res[i].duplicate)
			f->stats->duplicates++;
		else
			f->stats->appended++;
	}
done:
	docket_free(res);
	return error;
}

static int file_flush(imp_walk *w, int final)
{
	file_import *f = w->owner;
	int error;

	if (f->n > 0 && (error = append_batch(f)) < 0)
		return error;
	batch_clear(f);
	if (f->stale || f->rec.inflight ||
	    (w->ctx.line > w->resume_line &&
	     (w->done != f->rec.offset || w->ctx.line != f->rec.lines))) {
		f->rec.offset = w->done;
		f->rec.lines = w->ctx.line;
		f->rec.inflight = 0;
		if ((error = prefix_digest(f, w->data, w->done, f->rec.prefix)) < 0 ||
		    (error = record_put(f)) < 0)
			return error;
		f->stale = 0;
	}
	if (f->opts && f->opts->progress)
		f->opts->progress(f->opts->progress_ctx, f->path, w->done, w->len);
	(void)final;
	return 0;
}

/* ---- reading ---- */

static int read_file(docket_buf *out, const char *path)
{
	FILE *fp = fopen(path, "rb");
	int error = 0;

	if (!fp)
		return docket_error_set(errno == ENOENT ? DOCKET_ENOTFOUND : DOCKET_ESTORAGE,
					"%s: %s", path, strerror(errno));
	for (;;) {
		size_t got;

		if ((error = docket_buf_reserve(out, 1 << 20)) < 0)
			break;
		got = fread(out->ptr + out->len, 1, out->cap - out->len - 1, fp);
		out->len += got;
		out->ptr[out->len] = '\0';
		if (got == 0) {
			if (ferror(fp))
				error = docket_error_set(DOCKET_ESTORAGE, "%s: read error: %s", path,
							 strerror(errno));
			break;
		}
	}
	fclose(fp);
	return error;
}

static int drop_event(void *ctx, json_t *event)
{
	(void)ctx;
	json_decref(event);
	return 0;
}

/* Strict mode: map everything once without writing; any problem refuses the file. */
static int strict_check(const imp_format_ops *ops, const char *path, const docket_buf *text,
			size_t resume, docket_import_stats *stats)
{
	docket_import_stats scratch;
	imp_walk w;
	int error;

	memset(&scratch, 0, sizeof(scratch));
	memset(&w, 0, sizeof(w));
	imp_ctx_init(&w.ctx, path, &scratch, drop_event, NULL);
	w.data = text->ptr ? text->ptr : "";
	w.len = text->len;
	w.resume_line = resume;
	w.batch_bytes = SIZE_MAX;
	error = walk_with(&w, ops);
	imp_ctx_dispose(&w.ctx);
	if (error < 0 || scratch.malformed + scratch.unknown == 0)
		return error;
	stats->malformed += scratch.malformed;
	stats->unknown += scratch.unknown;
	if (!stats->first_problem[0])
		memcpy(stats->first_problem, scratch.first_problem, sizeof(stats->first_problem));
	return docket_error_set(DOCKET_EINVALID, "%s (%llu malformed, %llu unknown lines; strict: nothing written)",
				scratch.first_problem, (unsigned long long)scratch.malformed,
				(unsigned long long)scratch.unknown);
}

static int import_text(file_import *f, const imp_format_ops *ops, const docket_buf *text)
{
	imp_walk w;
	size_t resume = 0;
	int error;

	if ((error = resume_point(f, text->ptr ? text->ptr : "", text->len, &resume)) < 0)
		return error;
	if ((f->opts->flags & DOCKET_IMPORT_STRICT) &&
	    (error = strict_check(ops, f->path, text, resume, f->stats)) < 0)
		return error;
	memset(&w, 0, sizeof(w));
	imp_ctx_init(&w.ctx, f->path, f->stats, merge_push, f);
	w.data = text->ptr ? text->ptr : "";
	w.len = text->len;
	w.resume_line = resume;
	w.batch_bytes = f->opts->batch_bytes ? f->opts->batch_bytes : DEFAULT_BATCH;
	w.flush = file_flush;
	w.owner = f;
	error = walk_with(&w, ops);
	count_input(f->stats, &w);
	imp_ctx_dispose(&w.ctx);
	return error;
}

int docket_import_file(docket_ledger *ledger, docket_import_format format, const char *path,
		       const docket_import_options *opts, docket_import_stats *stats)
{
	static const docket_import_options defaults = DOCKET_IMPORT_OPTIONS_INIT;
	const imp_format_ops *ops = ops_of(format);
	file_import f;
	docket_buf text = DOCKET_BUF_INIT;
	char *real = NULL;
	int error;

	if (!ops)
		return docket_error_set(DOCKET_EINVALID, "unknown transcript format");
	memset(&f, 0, sizeof(f));
	f.ledger = ledger;
	f.opts = opts ? opts : &defaults;
	f.stats = stats;
	if (!(real = realpath(path, NULL))) {
		error = docket_error_set(errno == ENOENT ? DOCKET_ENOTFOUND : DOCKET_ESTORAGE,
					 "%s: %s", path, strerror(errno));
		goto cleanup;
	}
	f.path = real;
	if (!(f.hash = EVP_MD_CTX_new()) || EVP_DigestInit_ex(f.hash, EVP_sha256(), NULL) != 1) {
		error = docket_error_set_oom();
		goto cleanup;
	}
	if ((error = key_of(f.key, format, real)) < 0 || (error = read_file(&text, real)) < 0 ||
	    (error = imp_merge_new(&f.merge, ledger, real)) < 0)
		goto cleanup;
	error = import_text(&f, ops, &text);
cleanup:
	batch_clear(&f);
	docket_free(f.batch);
	imp_merge_free(f.merge);
	EVP_MD_CTX_free(f.hash);
	docket_buf_dispose(&text);
	free(real);
	return error;
}
