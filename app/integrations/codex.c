/* SPDX-License-Identifier: Apache-2.0 */
/*
 * codex.c: Codex. docket's hooks in a hooks.json (Claude-style shape) and,
 * for files Codex does not trust by location, their trust entries.
 *
 * Codex runs a non-managed hook only when its user config.toml trusts it:
 *
 *   [hooks.state."<hooks file>:<event label>:<group index>:<handler index>"]
 *   trusted_hash = "sha256:<hex>"
 *
 * where the hash is SHA-256 of the compact, key-sorted JSON
 * {"event_name":label,"matcher":M,"hooks":[{"type":"command","command":C,
 * "timeout":T,"async":false}]} ("matcher" omitted when unset). An untrusted
 * or modified hook is skipped silently, so `integrate` verifies what it wrote.
 *
 * There is no C TOML library in Debian, so config.toml is not parsed: the
 * trust entries live in one block between two marker comments, appended at
 * the end and replaced or removed as a whole; everything else in the file
 * stays byte for byte. A user who moves the block or defines hooks.state
 * as an inline table breaks this (docs/integrations.md says so).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "integrations_internal.h"
#include "util/alloc.h"
#include "util/error.h"

#define BLOCK_BEGIN "# >>> docket integrate codex: hook trust (managed by docket) >>>\n"
#define BLOCK_END "# <<< docket integrate codex <<<\n"

const char *const hook_codex_events[] = {
	"SessionStart", "PreToolUse", "PermissionRequest", "PostToolUse", "Stop", NULL
};

/* "PreToolUse" -> "pre_tool_use". */
static void label_of(char *out, size_t cap, const char *event)
{
	size_t n = 0;

	for (; *event && n + 2 < cap; event++) {
		if (*event >= 'A' && *event <= 'Z') {
			if (n)
				out[n++] = '_';
			out[n++] = (char)(*event - 'A' + 'a');
		} else {
			out[n++] = *event;
		}
	}
	out[n] = '\0';
}

int docket_codex_hook_hash(char out[72], const char *event, const json_t *group, const json_t *handler)
{
	const json_t *m = json_object_get(group, "matcher"), *t = json_object_get(handler, "timeout");
	const json_t *cmd = json_object_get(handler, "command");
	unsigned char digest[32];
	unsigned int n = 0;
	char label[64], *text;
	json_t *doc;
	size_t i;
	int ok;

	if (!json_is_string(cmd))
		return docket_error_set(DOCKET_EINVALID, "a command hook without a command");
	label_of(label, sizeof(label), event);
	doc = json_pack("{ss s[{ss sO sI sb}]}", "event_name", label, "hooks", "type", "command",
			"command", cmd, "timeout", json_is_integer(t) ? json_integer_value(t) : (json_int_t)600,
			"async", 0);
	if (doc && json_is_string(m) && json_object_set(doc, "matcher", (json_t *)m) < 0) {
		json_decref(doc);
		doc = NULL;
	}
	text = doc ? json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(doc);
	if (!text)
		return docket_error_set_oom();
	ok = EVP_Digest(text, strlen(text), digest, &n, EVP_sha256(), NULL) == 1 && n == 32;
	free(text);
	if (!ok)
		return docket_error_set(DOCKET_ERROR, "SHA-256 failed");
	memcpy(out, "sha256:", 7);
	for (i = 0; i < 32; i++)
		snprintf(out + 7 + 2 * i, 3, "%02x", digest[i]);
	return 0;
}

int docket_integrate_codex(json_t **out, json_t *hooks_doc, const docket_integrate_options *opts)
{
	static const hook_layout codex = { DOCKET_CLIENT_CODEX, hook_codex_events, NULL, 600, 600 };

	return hook_merge(out, hooks_doc, opts, &codex);
}

/* The trust block for docket's handlers in `doc` (hooks file `path`); "" when none. */
int docket_codex_trust_block(char **out, const json_t *doc, const char *path)
{
	const json_t *hooks = json_object_get(doc, "hooks");
	docket_buf b = DOCKET_BUF_INIT;
	size_t e, g, h;
	int error = 0, any = 0;

	for (e = 0; hook_codex_events[e] && error == 0; e++) {
		const json_t *groups = json_object_get(hooks, hook_codex_events[e]);
		char label[64];

		label_of(label, sizeof(label), hook_codex_events[e]);
		for (g = 0; g < json_array_size(groups) && error == 0; g++) {
			const json_t *list = json_object_get(json_array_get(groups, g), "hooks");

			for (h = 0; h < json_array_size(list) && error == 0; h++) {
				char hash[72];

				if (!hook_is_ours(json_array_get(list, h), DOCKET_CLIENT_CODEX))
					continue;
				if ((error = docket_codex_hook_hash(hash, hook_codex_events[e], json_array_get(groups, g),
								    json_array_get(list, h))) < 0 ||
				    (!any && (error = docket_buf_puts(&b, BLOCK_BEGIN)) < 0))
					break;
				any = 1;
				error = docket_buf_printf(&b, "[hooks.state.\"%s:%s:%zu:%zu\"]\ntrusted_hash = \"%s\"\n",
							  path, label, g, h, hash);
			}
		}
	}
	if (error == 0 && any)
		error = docket_buf_puts(&b, BLOCK_END);
	if (error == 0 && !b.ptr)
		error = docket_buf_puts(&b, "");
	if (error < 0) {
		docket_buf_dispose(&b);
		return error;
	}
	*out = b.ptr;
	return 0;
}

int docket_codex_config_with_block(char **out, const char *config, const char *block)
{
	const char *begin = strstr(config, BLOCK_BEGIN), *end = begin ? strstr(begin, BLOCK_END) : NULL;
	docket_buf b = DOCKET_BUF_INIT;
	size_t keep = begin ? (size_t)(begin - config) : strlen(config);
	int error;

	if (begin && !end)
		return docket_error_set(DOCKET_EINVALID, "config.toml has docket's begin marker but not its end "
					"marker: fix the file by hand");
	error = docket_buf_put(&b, config, keep);
	if (error == 0 && end)
		error = docket_buf_puts(&b, end + strlen(BLOCK_END));
	if (error == 0 && *block && b.len && b.ptr[b.len - 1] != '\n')
		error = docket_buf_putc(&b, '\n');
	if (error == 0)
		error = docket_buf_puts(&b, block);
	if (error == 0 && !b.ptr)
		error = docket_buf_puts(&b, "");
	if (error < 0) {
		docket_buf_dispose(&b);
		return error;
	}
	*out = b.ptr;
	return 0;
}
