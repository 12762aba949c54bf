/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_policy_path.c: normalise arbitrary paths ("PATH\nCWD") and check the
 * result: absolute, no "//", no "." or ".." component, no trailing "/", and
 * normalising it again changes nothing; then glob-match it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *in = malloc(size + 1), *nl, *cwd = "/w";
	docket_buf a = DOCKET_BUF_INIT, b = DOCKET_BUF_INIT;

	if (!in)
		return 0;
	memcpy(in, data, size);
	in[size] = '\0';
	if ((nl = strchr(in, '\n'))) {
		*nl = '\0';
		cwd = nl + 1;
	}
	if (path_normalize(&a, in, cwd, "/home/u") == 0) {
		const char *p = a.ptr;

		if (p[0] != '/' || strstr(p, "//") || strstr(p, "/./") || strstr(p, "/../") ||
		    (a.len > 1 && p[a.len - 1] == '/'))
			abort();
		if ((a.len >= 2 && strcmp(p + a.len - 2, "/.") == 0) ||
		    (a.len >= 3 && strcmp(p + a.len - 3, "/..") == 0))
			abort();
		if (path_normalize(&b, p, NULL, NULL) != 0 || strcmp(a.ptr, b.ptr) != 0)
			abort();
		(void)path_glob_match(cwd, strlen(cwd), p);
		(void)path_glob_match("/**/*.env", 9, p);
		(void)str_glob_match(in, strlen(in), cwd, strlen(cwd));
	}
	docket_buf_dispose(&a);
	docket_buf_dispose(&b);
	free(in);
	return 0;
}
