/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tools.c: canonical tools of DESIGN §4 and the small text parsers the
 * importers share. Nothing here allocates per byte of input: parsers scan
 * borrowed text and build only the JSON they return.
 */
#include <string.h>

#include "import_internal.h"
#include "util/error.h"

/* How far into an output the header with exit code and wall time may be. */
#define HEADER_SCAN 512

const char *imp_str(const json_t *obj, const char *key)
{
	const json_t *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;

	return json_is_string(v) ? json_string_value(v) : NULL;
}

const json_t *imp_obj(const json_t *obj, const char *key)
{
	const json_t *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;

	return json_is_object(v) ? v : NULL;
}

int imp_set(json_t *obj, const char *key, json_t *v)
{
	if (!v || json_object_set_new(obj, key, v) < 0)
		return docket_error_set_oom();
	return 0;
}

int imp_set_str(json_t *obj, const char *key, const char *s)
{
	if (!s || !*s)
		return 0;
	return imp_set(obj, key, json_string(s));
}

const char *imp_platform_of(const char *cwd)
{
	static const char *const mac[] = { "/Users/", "/Volumes/", "/private/", NULL };
	static const char *const lin[] = { "/home/", "/root", "/mnt/", "/srv/", "/workspace", NULL };
	size_t i;

	if (!cwd)
		return NULL;
	if ((((cwd[0] | 0x20) >= 'a' && (cwd[0] | 0x20) <= 'z') && cwd[1] == ':' &&
	     (cwd[2] == '\\' || cwd[2] == '/')) || strncmp(cwd, "\\\\", 2) == 0)
		return "windows";
	for (i = 0; mac[i]; i++)
		if (strncmp(cwd, mac[i], strlen(mac[i])) == 0)
			return "macos";
	for (i = 0; lin[i]; i++)
		if (strncmp(cwd, lin[i], strlen(lin[i])) == 0)
			return "linux";
	return NULL;
}

json_t *imp_shell_script(const char *shell, const char *flag, const char *script)
{
	json_t *args = json_object();
	json_t *argv = json_pack("[sss]", shell, flag, script ? script : "");

	if (!args || !argv) {
		json_decref(args);
		json_decref(argv);
		return NULL;
	}
	if (json_object_set_new(args, "command", argv) < 0) {  /* argv is gone either way */
		json_decref(args);
		return NULL;
	}
	return args;
}

/* ---- apply_patch ---- */

/* Bytes of the Unicode White_Space character at s (Rust's str::trim), 0: none. */
static size_t unicode_space(const unsigned char *s, size_t len)
{
	if (len > 0 && (s[0] == ' ' || (s[0] >= '\t' && s[0] <= '\r')))
		return 1;
	if (len > 1 && s[0] == 0xC2 && (s[1] == 0x85 || s[1] == 0xA0))
		return 2;
	if (len > 2 && s[0] == 0xE1 && s[1] == 0x9A && s[2] == 0x80)
		return 3;
	if (len > 2 && s[0] == 0xE2 && s[1] == 0x80 && (s[2] <= 0x8A || s[2] == 0xA8 || s[2] == 0xA9 || s[2] == 0xAF))
		return s[2] >= 0x80 ? 3 : 0;
	if (len > 2 && s[0] == 0xE2 && s[1] == 0x81 && s[2] == 0x9F)
		return 3;
	if (len > 2 && s[0] == 0xE3 && s[1] == 0x80 && s[2] == 0x80)
		return 3;
	return 0;
}

/* One "*** <Kind> File: path" header line of a patch, trimmed. */
static int patch_header(const char *line, size_t len, const char *kind, const char **path,
			size_t *plen)
{
	size_t k = strlen(kind), sp;

	/* Codex trims each line before it looks for a header (parser.rs `line.trim()`) */
	while ((sp = unicode_space((const unsigned char *)line, len)) > 0) {
		line += sp;
		len -= sp;
	}
	if (len <= k || memcmp(line, kind, k) != 0)
		return 0;
	line += k;
	len -= k;
	while (len > 0 && (line[0] == ' ' || line[0] == '\t')) {
		line++;
		len--;
	}
	while (len > 0 && (line[len - 1] == ' ' || line[len - 1] == '\t' || line[len - 1] == '\r'))
		len--;
	if (len == 0)
		return 0;
	*path = line;
	*plen = len;
	return 1;
}

static int add_change(json_t *changes, const char *path, size_t plen, const char *op,
		      json_t **last)
{
	json_t *ch = json_object();

	if (!ch || imp_set(ch, "path", json_stringn(path, plen)) < 0 || imp_set_str(ch, "op", op) < 0) {
		json_decref(ch);
		return -1;
	}
	if (json_array_append_new(changes, ch) < 0)  /* ch is gone either way */
		return -1;
	*last = ch;
	return 0;
}

json_t *imp_patch_args(const char *patch)
{
	json_t *args = json_object(), *changes = json_array(), *last = NULL;
	const char *p = patch ? patch : "", *path;
	size_t plen;

	if (!args || !changes) {
		json_decref(args);
		json_decref(changes);
		return NULL;
	}
	if (json_object_set_new(args, "changes", changes) < 0) {  /* changes is gone either way */
		json_decref(args);
		return NULL;
	}
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		int rc = 0;

		if (patch_header(p, len, "*** Add File:", &path, &plen))
			rc = add_change(changes, path, plen, "add", &last);
		else if (patch_header(p, len, "*** Delete File:", &path, &plen))
			rc = add_change(changes, path, plen, "delete", &last);
		else if (patch_header(p, len, "*** Update File:", &path, &plen))
			rc = add_change(changes, path, plen, "update", &last);
		else if (last && patch_header(p, len, "*** Move to:", &path, &plen))
			rc = imp_set(last, "op", json_string("move")) < 0 ||
			     imp_set(last, "to", json_stringn(path, plen)) < 0 ? -1 : 0;
		if (rc < 0) {
			json_decref(args);
			return NULL;
		}
		p += len + (nl ? 1 : 0);
	}
	return args;
}

/* ---- mcp ---- */

json_t *imp_mcp_args(const char *name, const json_t *arguments)
{
	const char *server, *sep;
	json_t *args;

	if (!name || strncmp(name, "mcp__", 5) != 0)
		return NULL;
	server = name + 5;
	sep = strstr(server, "__");
	if (!sep || sep == server || sep[2] == '\0')
		return NULL;
	args = json_object();
	if (!args || imp_set(args, "server", json_stringn(server, (size_t)(sep - server))) < 0 ||
	    imp_set_str(args, "tool", sep + 2) < 0 ||
	    imp_set(args, "arguments", arguments ? json_deep_copy(arguments) : json_object()) < 0) {
		json_decref(args);
		return NULL;
	}
	return args;
}

/* ---- output text ---- */

int imp_starts(const char *text, size_t len, const char *prefix)
{
	size_t k = strlen(prefix);

	return text && len >= k && memcmp(text, prefix, k) == 0;
}

int imp_contains(const char *text, size_t len, const char *needle)
{
	size_t k = strlen(needle), i;

	if (!text || k == 0 || len < k)
		return 0;
	for (i = 0; i + k <= len; i++)
		if (text[i] == needle[0] && memcmp(text + i, needle, k) == 0)
			return 1;
	return 0;
}

/* Where `needle` starts in the header of `text`, or NULL. */
static const char *find_in_header(const char *text, size_t len, const char *needle)
{
	size_t k = strlen(needle), i, n = len < HEADER_SCAN ? len : HEADER_SCAN;

	for (i = 0; i + k <= n; i++)
		if (memcmp(text + i, needle, k) == 0)
			return text + i + k;
	return NULL;
}

/* A decimal integer (optional '-') at p, within end; 0 on success. */
static int read_int(const char *p, const char *end, json_int_t *out)
{
	json_int_t v = 0;
	int neg = 0, digits = 0;

	if (p < end && *p == '-') {
		neg = 1;
		p++;
	}
	for (; p < end && *p >= '0' && *p <= '9' && digits < 12; p++, digits++)
		v = v * 10 + (*p - '0');
	if (digits == 0)
		return -1;
	*out = neg ? -v : v;
	return 0;
}

int imp_exit_code(const char *text, size_t len, json_int_t *out)
{
	static const char *const needles[] = {
		"Exit code: ", "Process exited with code ", "exit code: ", "Exit code ", NULL
	};
	const char *p;
	size_t i;

	if (!text)
		return 0;
	for (i = 0; needles[i]; i++)
		if ((p = find_in_header(text, len, needles[i])) && read_int(p, text + len, out) == 0)
			return 1;
	return 0;
}

int64_t imp_wall_ms(const char *text, size_t len)
{
	const char *p = text ? find_in_header(text, len, "Wall time: ") : NULL;
	const char *end = text + len;
	int64_t whole = 0, frac = 0, scale = 1000;
	int digits = 0;

	if (!p)
		return -1;
	for (; p < end && *p >= '0' && *p <= '9' && digits < 12; p++, digits++)
		whole = whole * 10 + (*p - '0');
	if (digits == 0)
		return -1;
	if (p < end && *p == '.') {
		for (p++; p < end && *p >= '0' && *p <= '9'; p++) {
			if (scale > 1) {
				scale /= 10;
				frac += (*p - '0') * scale;
			}
		}
	}
	return whole * 1000 + frac;
}

long imp_major_version(const char *v)
{
	long major = 0;
	int digits = 0;

	if (!v)
		return -1;
	for (; *v >= '0' && *v <= '9' && digits < 9; v++, digits++)
		major = major * 10 + (*v - '0');
	return digits ? major : -1;
}
