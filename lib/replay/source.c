/* SPDX-License-Identifier: Apache-2.0 */
/*
 * source.c: policy sources for replay. "PATH", "codex:PATH", "claude:PATH"
 * are docket_policy_load's; a "git:REV:PATH" after the optional format
 * prefix reads PATH at REV through libgit2 (git.c). REV ends at the first
 * ':' after "git:", so PATH may contain ':' but REV may not.
 */
#include <string.h>

#include "replay_internal.h"
#include "util/alloc.h"
#include "util/error.h"

/* Split "[codex:|claude:]git:REV:PATH"; 0 when `source` is not a git source. */
static int git_source(const char *source, docket_policy_format *fmt, const char **rev, size_t *rev_len,
		      const char **path)
{
	const char *s = source, *colon;

	*fmt = DOCKET_POLICY_DOCKET;
	if (strncmp(s, "codex:", 6) == 0) {
		*fmt = DOCKET_POLICY_CODEX;
		s += 6;
	} else if (strncmp(s, "claude:", 7) == 0) {
		*fmt = DOCKET_POLICY_CLAUDE;
		s += 7;
	}
	if (strncmp(s, "git:", 4) != 0)
		return 0;
	s += 4;
	colon = strchr(s, ':');
	*rev = s;
	*rev_len = colon ? (size_t)(colon - s) : strlen(s);
	*path = colon ? colon + 1 : "";
	return 1;
}

static int load_git(docket_policy **out, const char *source, docket_policy_format fmt, const char *rev,
		    size_t rev_len, const char *path, const char *repo)
{
	docket_buf r = DOCKET_BUF_INIT, text = DOCKET_BUF_INIT;
	int error;

	if (rev_len == 0 || !*path)
		return docket_error_set(DOCKET_EINVALID, "%s: a git source is git:REV:PATH", source);
	if ((error = docket_buf_put(&r, rev, rev_len)) == 0 &&
	    (error = replay_git_read(&text, repo, r.ptr, path)) == 0)
		error = docket_policy_load_buffer(out, fmt, source, text.ptr ? text.ptr : "", text.len);
	if (error == DOCKET_EINVALID)
		docket_error_prefix("policy at revision %s: ", r.ptr);
	docket_buf_dispose(&r);
	docket_buf_dispose(&text);
	return error;
}

int docket_replay_source_load(docket_policy **out, const char *source, const char *repo)
{
	docket_policy_format fmt;
	const char *rev, *path;
	size_t rev_len;

	*out = NULL;
	if (!git_source(source, &fmt, &rev, &rev_len, &path))
		return docket_policy_load(out, source);
	return load_git(out, source, fmt, rev, rev_len, path, repo);
}
