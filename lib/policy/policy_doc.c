/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy_doc.c: a recorded policy document as layers of the policy model.
 *
 * A policy.revised records its document as JSON: a docket policy (a JSON
 * object, or its YAML text as a JSON string, which is how `serve --policy`
 * records an operator's file), Claude Code settings, Codex settings (rules
 * text plus approval/sandbox settings), or a composition
 * {"all_of":[{"format":F,"policy":P}, ...]} where the strictest layer wins.
 * Both the state machine (never asks, invariant 2) and the authority
 * (evaluation) read documents through here, so they agree on what a
 * document says.
 */
#include "policy_doc.h"

#include <string.h>

#include "util/alloc.h"
#include "util/error.h"
#include "util/json.h"

static int format_of(const char *name, docket_policy_format *out)
{
	if (!name)
		return -1;
	if (strcmp(name, "docket") == 0)
		*out = DOCKET_POLICY_DOCKET;
	else if (strcmp(name, "claude") == 0)
		*out = DOCKET_POLICY_CLAUDE;
	else if (strcmp(name, "codex") == 0)
		*out = DOCKET_POLICY_CODEX;
	else
		return -1;
	return 0;
}

static int codex_settings(policy_layer *out, const json_t *doc)
{
	out->codex_settings = json_pack("{s:O?, s:O?}",
		"approval_policy", json_object_get(doc, "approval_policy"),
		"sandbox_policy", json_object_get(doc, "sandbox_policy"));
	return out->codex_settings ? 0 : docket_error_set_oom();
}

/* Load one layer. Its policy stays NULL when the document is not evaluable
 * (opaque, an unknown format, Codex settings without rules). */
static int layer_load(policy_layer *out, const char *format, const json_t *doc)
{
	docket_policy_format f;
	docket_buf text = DOCKET_BUF_INIT;
	const char *rules;
	int error;

	memset(out, 0, sizeof(*out));
	if (format_of(format, &f) < 0)
		return 0;
	if (f == DOCKET_POLICY_CODEX) {
		if ((error = codex_settings(out, doc)) < 0)
			return error;
		rules = json_string_value(json_object_get(doc, "rules"));
		return rules ? docket_policy_load_buffer(&out->policy, f, "codex", rules, strlen(rules)) : 0;
	}
	if (f == DOCKET_POLICY_DOCKET && json_is_string(doc))
		return docket_policy_load_buffer(&out->policy, f, format, json_string_value(doc),
						 json_string_length(doc));
	if ((error = docket_json_dump(&text, doc)) == 0)
		error = docket_policy_load_buffer(&out->policy, f, format, text.ptr, text.len);
	docket_buf_dispose(&text);
	return error;
}

static void layer_dispose(policy_layer *ly)
{
	docket_policy_free(ly->policy);
	json_decref(ly->codex_settings);
	memset(ly, 0, sizeof(*ly));
}

/* Add one (format, document) to `out`: evaluable layers are kept. */
static int add_layer(policy_layers *out, const char *format, const json_t *doc)
{
	policy_layer ly;
	int error;

	if (out->n == POLICY_DOC_MAX_LAYERS)
		return docket_error_set(DOCKET_EINVALID, "all_of has more than %d layers", POLICY_DOC_MAX_LAYERS);
	if ((error = layer_load(&ly, format, doc)) < 0) {
		layer_dispose(&ly);
		return error;
	}
	if (docket_policy_never_asks(ly.policy, ly.codex_settings))
		out->never_asks = 1;
	if (ly.policy)
		out->layers[out->n++] = ly;
	else
		layer_dispose(&ly);
	return 0;
}

int policy_doc_load(policy_layers *out, const char *format, const char *policy_json)
{
	json_t *doc = NULL, *all, *item;
	size_t i;
	int error;

	memset(out, 0, sizeof(*out));
	if ((error = docket_json_parse(&doc, policy_json, strlen(policy_json))) < 0)
		return error;
	all = json_object_get(doc, "all_of");
	if (all && json_is_array(all) && json_object_size(doc) == 1) {
		json_array_foreach(all, i, item) {
			if ((error = add_layer(out, json_string_value(json_object_get(item, "format")),
					       json_object_get(item, "policy"))) < 0)
				break;
		}
	} else {
		error = add_layer(out, format, doc);
	}
	json_decref(doc);
	if (error < 0)
		policy_doc_dispose(out);
	return error;
}

int policy_doc_of(json_t **out, const docket_policy *policy)
{
	char *yaml = NULL;
	int error;

	*out = NULL;
	if ((error = docket_policy_to_yaml(&yaml, policy)) == 0 && !(*out = json_string(yaml)))
		error = docket_error_set_oom();
	docket_free(yaml);
	return error;
}

json_t *policy_doc_compose(const json_t *docket, const char *format, const json_t *client)
{
	return json_pack("{s:[{s:s, s:O}, {s:s?, s:O}]}", "all_of", "format", "docket", "policy", docket,
			 "format", format, "policy", client);
}

const json_t *policy_doc_docket_layer(const char *format, const json_t *doc)
{
	const json_t *all = json_object_get(doc, "all_of"), *first = json_array_get(all, 0);

	if (!format || strcmp(format, "docket") != 0 || !doc)
		return NULL;
	if (!all)
		return doc;
	format = json_string_value(json_object_get(first, "format"));
	return format && strcmp(format, "docket") == 0 ? json_object_get(first, "policy") : NULL;
}

void policy_doc_dispose(policy_layers *ls)
{
	for (size_t i = 0; i < ls->n; i++)
		layer_dispose(&ls->layers[i]);
	memset(ls, 0, sizeof(*ls));
}

/* The last answers of policy_doc_never_asks(), direct-mapped by digest. */
#define NEVER_ASKS_CACHE 256
#define NEVER_ASKS_FORMAT 16

typedef struct never_asks_entry {
	uint8_t digest[32];
	char format[NEVER_ASKS_FORMAT];  /* "": empty slot */
	int never;
} never_asks_entry;

static _Thread_local never_asks_entry never_asks_cache[NEVER_ASKS_CACHE];

int policy_doc_never_asks(const char *format, const char *policy_json, const uint8_t digest[32])
{
	never_asks_entry *e = &never_asks_cache[digest[0] % NEVER_ASKS_CACHE];
	size_t flen = format ? strlen(format) : 0;
	int cacheable = flen > 0 && flen < NEVER_ASKS_FORMAT;
	policy_layers ls;
	int never, error;

	if (cacheable && strcmp(e->format, format) == 0 && memcmp(e->digest, digest, 32) == 0)
		return e->never;
	/* a document the model cannot read decides nothing: it may ask */
	if ((error = policy_doc_load(&ls, format, policy_json)) < 0)
		return error == DOCKET_ENOMEM ? error : 0;
	never = ls.never_asks;
	policy_doc_dispose(&ls);
	if (cacheable) {
		memcpy(e->digest, digest, 32);
		memcpy(e->format, format, flen + 1);
		e->never = never;
	}
	return never;
}
