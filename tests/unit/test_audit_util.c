/* SPDX-License-Identifier: Apache-2.0 */
/* test_audit_util.c: helpers shared by test_audit.c and test_export.c. */
#include "testutil.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "test_audit_util.h"

docket_ledger *audit_open(const char *dir)
{
	docket_open_options opts = DOCKET_OPEN_OPTIONS_INIT;
	docket_ledger *l = NULL;

	opts.flags = DOCKET_OPEN_CREATE;
	if (docket_ledger_open(&l, dir, &opts) != 0)
		fail_msg("open %s: %s", dir, docket_error_last()->message);
	return l;
}

docket_ledger *audit_new_ledger(char **dir)
{
	*dir = test_mkdtemp();
	return audit_open(*dir);
}

char *audit_path(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = malloc(n);

	assert_non_null(p);
	snprintf(p, n, "%s/%s", dir, name);
	return p;
}

json_t *audit_lines(const char *text)
{
	json_t *arr = json_array();
	const char *line = text;

	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		json_error_t err;
		json_t *v;

		if (len > 0) {
			v = json_loadb(line, len, 0, &err);
			if (!v)
				fail_msg("bad JSON line: %s: %.*s", err.text, (int)len, line);
			json_array_append_new(arr, v);
		}
		line = nl ? nl + 1 : NULL;
	}
	return arr;
}

void audit_record_text(docket_ledger *l, const char *jsonl)
{
	json_t *arr = audit_lines(jsonl);
	size_t n = json_array_size(arr);
	json_t **evs = calloc(n + 1, sizeof(*evs));

	for (size_t i = 0; i < n; i++)
		evs[i] = json_array_get(arr, i);
	if (docket_ledger_append_json(l, evs, n, NULL) != 0)
		fail_msg("append: %s", docket_error_last()->message);
	free(evs);
	json_decref(arr);
}

void audit_record_fixture(docket_ledger *l, const char *rel)
{
	const char *root = getenv("DOCKET_SOURCE_ROOT");
	char path[4096];
	char *text;
	FILE *f;
	long size;

	assert_non_null(root);
	snprintf(path, sizeof(path), "%s/fixtures/%s", root, rel);
	assert_non_null(f = fopen(path, "rb"));
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	fseek(f, 0, SEEK_SET);
	text = calloc(1, (size_t)size + 1);
	assert_int_equal(fread(text, 1, (size_t)size, f), (size_t)size);
	fclose(f);
	audit_record_text(l, text);
	free(text);
}

char *audit_export(docket_ledger *l, const docket_export_options *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int rc;

	assert_non_null(f);
	rc = docket_export(l, o, f, NULL);
	fclose(f);
	if (rc != 0)
		fail_msg("export: %s", docket_error_last()->message);
	return buf;
}

static int file_has(const char *path, const char *needle)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 1 << 16, len = 0, got;
	char *data = malloc(cap);
	int found;

	assert_non_null(f);
	while ((got = fread(data + len, 1, cap - len, f)) > 0) {
		len += got;
		if (len == cap)
			data = realloc(data, cap *= 2);
	}
	fclose(f);
	found = memmem(data, len, needle, strlen(needle)) != NULL;
	free(data);
	return found;
}

int audit_grep_dir(const char *dir, const char *needle)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int found = 0;

	assert_non_null(d);
	while (!found && (e = readdir(d))) {
		char *p = audit_path(dir, e->d_name);
		struct stat st;

		if (stat(p, &st) == 0 && S_ISREG(st.st_mode))
			found = file_has(p, needle);
		free(p);
	}
	closedir(d);
	return found;
}
