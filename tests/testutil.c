/* SPDX-License-Identifier: Apache-2.0 */
#include "testutil.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *test_mkdtemp(void)
{
	const char *tmp = getenv("TMPDIR");
	char path[4096];
	char *dir;

	snprintf(path, sizeof(path), "%s/docket-test-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	dir = mkdtemp(path);
	assert_non_null(dir);
	return strdup(dir);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	return remove(path);
}

void test_rmdir_free(char *dir)
{
	if (!dir)
		return;
	nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(dir);
}

json_t *test_json(const char *text)
{
	json_error_t err;
	json_t *v = json_loads(text, JSON_REJECT_DUPLICATES, &err);

	if (!v)
		fail_msg("bad test JSON (%s): %s", err.text, text);
	return v;
}

char *test_shared_path(const char *rel)
{
	const char *src = getenv("DOCKET_SOURCE_ROOT");
	char path[4096];
	struct stat st;

	if (!src)
		src = ".";
	snprintf(path, sizeof(path), "%s/../shared/corpus/%s", src, rel);
	if (stat(path, &st) != 0)
		return NULL;
	return strdup(path);
}

char *test_doc_block(const char *rel, const char *marker, const char **start, const char **end)
{
	const char *root = getenv("DOCKET_SOURCE_ROOT");
	char path[4096], open_m[128], close_m[128];
	FILE *f;
	char *text = NULL;
	size_t len = 0;

	if (!root)
		skip();
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(open_m, sizeof(open_m), "<!-- %s -->", marker);
	snprintf(close_m, sizeof(close_m), "<!-- /%s -->", marker);
	if (!(f = fopen(path, "r")))
		fail_msg("cannot read %s", path);
	if (getdelim(&text, &len, '\0', f) < 0) {
		fclose(f);
		fail_msg("cannot read %s", path);
	}
	fclose(f);
	*start = strstr(text, open_m);
	*end = *start ? strstr(*start, close_m) : NULL;
	if (!*end)
		fail_msg("%s has no %s ... %s block", rel, open_m, close_m);
	return text;
}
