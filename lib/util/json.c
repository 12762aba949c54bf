/* SPDX-License-Identifier: Apache-2.0 */
#include "json.h"

#include <string.h>

#include "alloc.h"
#include "error.h"
#include "jv.h"

int docket_json_load(json_t **out, const char *text, size_t len, size_t flags, json_error_t *jerr)
{
	json_t *value;
	int refused;

	*out = NULL;
	docket_alloc_take_failure();   /* jansson reports a failed allocation as a bare NULL */
	memset(jerr, 0, sizeof(*jerr)); /* ... and may leave jerr unfilled */
	docket_alloc_json_parse_begin();
	value = json_loadb(text, len, flags, jerr);
	refused = docket_alloc_json_parse_end();
	if (refused || (!value && (json_error_code(jerr) == json_error_out_of_memory || docket_alloc_take_failure()))) {
		json_decref(value);
		return docket_error_set_oom();
	}
	if (!value)
		return docket_error_set(DOCKET_EINVALID, "invalid JSON at column %d: %s", jerr->column, jerr->text);
	*out = value;
	return 0;
}

int docket_json_parse(json_t **out, const char *text, size_t len)
{
	json_error_t jerr;

	return docket_json_load(out, text, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL | JSON_DECODE_ANY, &jerr);
}

static int dump_cb(const char *data, size_t size, void *ctx)
{
	return docket_buf_put(ctx, data, size) < 0 ? -1 : 0;
}

int docket_json_dump(docket_buf *out, const json_t *value)
{
	if (json_dump_callback(value, dump_cb, out, JSON_COMPACT | JSON_ENCODE_ANY) < 0)
		return docket_error_set(DOCKET_ENOMEM, "cannot serialise JSON");
	return 0;
}

const char *docket_json_str(const json_t *obj, const char *key)
{
	const json_t *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;

	return json_is_string(v) ? json_string_value(v) : NULL;
}

const char *docket_json_str_nonempty(const json_t *obj, const char *key)
{
	const char *s = docket_json_str(obj, key);

	return s && *s ? s : NULL;
}

const char *docket_json_str_or(const json_t *obj, const char *key, const char *fallback)
{
	const char *s = docket_json_str(obj, key);

	return s ? s : fallback;
}

const char *docket_json_type_name(const json_t *value)
{
	return docket_jv_type_name(docket_jv_jansson.type(docket_jv_of_json(value)));
}
