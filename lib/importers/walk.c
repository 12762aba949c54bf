/* SPDX-License-Identifier: Apache-2.0 */
/*
 * walk.c: the line walker every import runs. It splits a buffer into lines,
 * parses each with jansson (bounded: a line longer than LINE_MAX is
 * malformed; no NUL inside strings), hands objects to the format and asks the
 * caller to flush after every `batch_bytes` of input. Lines up to
 * `resume_line` are mapped muted (state only): see import_internal.h.
 *
 * A last line without its newline is taken only when it parses: a
 * transcript being written may end in half a line, which a later import
 * reads whole.
 */
#include <string.h>

#include "import_internal.h"
#include "util/error.h"
#include "util/json.h"

#define LINE_MAX_BYTES ((size_t)64 << 20)

/*
 * Parse one line into an object (*out); *out NULL and a counted problem
 * when it is not one; DOCKET_ENOMEM when memory ran out.
 */
static int parse_line(json_t **out, imp_ctx *c, const char *s, size_t len)
{
	json_error_t jerr;
	json_t *obj;
	int error;

	*out = NULL;
	if (len > LINE_MAX_BYTES) {
		imp_problem(c, 0, "line longer than %zu bytes", LINE_MAX_BYTES);
		return 0;
	}
	if ((error = docket_json_load(&obj, s, len, 0, &jerr)) == DOCKET_ENOMEM)
		return error;
	if (error < 0) {
		imp_problem(c, 0, "invalid JSON at column %d: %s", jerr.column, jerr.text);
		return 0;
	}
	if (!json_is_object(obj)) {
		imp_problem(c, 0, "a transcript line is a JSON object, not %s",
			    json_is_array(obj) ? "an array" : "a scalar");
		json_decref(obj);
		return 0;
	}
	*out = obj;
	return 0;
}

/* Map one line; <0 only for system errors. */
static int one_line(imp_walk *w, const char *s, size_t len)
{
	imp_ctx *c = &w->ctx;
	json_t *obj;
	int error;

	if (docket_blank_line(s, len))
		return 0;
	c->time[0] = '\0';
	if ((error = parse_line(&obj, c, s, len)) < 0 || !obj)
		return error;
	error = w->ops->line(c, obj);
	json_decref(obj);
	return error;
}

int imp_walk_run(imp_walk *w)
{
	imp_ctx *c = &w->ctx;
	size_t pos = 0, since_flush = 0;
	int error;

	while (pos < w->len) {
		const char *start = w->data + pos;
		const char *nl = memchr(start, '\n', w->len - pos);
		size_t len = nl ? (size_t)(nl - start) : w->len - pos;

		if (!nl && !docket_blank_line(start, len)) {
			/* an unterminated last line: only when it parses */
			json_t *probe = NULL;
			json_error_t jerr;

			if ((error = docket_json_load(&probe, start, len, 0, &jerr)) == DOCKET_ENOMEM)
				return error;
			json_decref(probe);
			if (!probe) {
				w->incomplete = 1;
				break;
			}
		}
		c->line++;
		c->muted = c->line <= w->resume_line;
		if ((error = one_line(w, start, len)) < 0) {
			docket_error_prefix("%s:%zu: ", c->file, c->line);
			return error;
		}
		pos += len + (nl ? 1 : 0);
		since_flush += len + 1;
		w->done = pos;
		if (since_flush >= w->batch_bytes && w->flush) {
			if ((error = w->flush(w, 0)) < 0)
				return error;
			since_flush = 0;
		}
	}
	w->lines = c->line;
	return w->flush ? w->flush(w, 1) : 0;
}
