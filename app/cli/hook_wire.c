/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hook_wire.c: the hook server's reading of a request and making of an
 * answer (hook_wire.h; the format in hook_fast.c's header). A request
 * comes from another process: every length is bounded before anything is
 * allocated, and a short read is the end of it.
 */
#include "hook_wire.h"
#include "hook_wire_shared.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "util/error.h"

static int read_full(int fd, void *dst, size_t n)
{
	char *p = dst;

	while (n) {
		ssize_t r = read(fd, p, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

static int read_u32(int fd, uint32_t *v)
{
	unsigned char le[4];

	if (read_full(fd, le, 4) != 0)
		return -1;
	*v = hook_wire_le32_get(le);
	return 0;
}

/* `n` bytes from fd into `b` (cleared), NUL-terminated: 0, or -1. */
static int read_into(int fd, docket_buf *b, uint32_t n)
{
	docket_buf_clear(b);
	if (docket_buf_reserve(b, (size_t)n + 1) < 0) {
		docket_error_clear();
		return -1;
	}
	if (read_full(fd, b->ptr, n) != 0)
		return -1;
	b->len = n;
	b->ptr[n] = '\0';
	return 0;
}

int hook_wire_read_request(int conn, const docket_buf *mine, docket_buf *in)
{
	docket_buf theirs = DOCKET_BUF_INIT;
	char magic[5];
	uint32_t n;
	int same;

	if (read_full(conn, magic, 5) != 0 || memcmp(magic, "DKHQ1", 5) != 0 || read_u32(conn, &n) != 0 ||
	    n > HOOK_WIRE_CONTEXT_MAX)
		return -1;
	if (n != mine->len)
		return 0;
	if (read_into(conn, &theirs, n) != 0) {
		docket_buf_dispose(&theirs);
		return -1;
	}
	same = n == 0 || memcmp(theirs.ptr, mine->ptr, n) == 0;
	docket_buf_dispose(&theirs);
	if (!same)
		return 0;
	if (read_u32(conn, &n) != 0 || n > HOOK_WIRE_INPUT_MAX || read_into(conn, in, n) != 0)
		return -1;
	return 1;
}

static int put_u32(docket_buf *b, uint32_t v)
{
	unsigned char le[4];

	hook_wire_le32_put(le, v);
	return docket_buf_put(b, le, 4);
}

static int put_text(docket_buf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	int error = put_u32(b, (uint32_t)n);

	return error == 0 && n ? docket_buf_put(b, s, n) : error;
}

int hook_wire_answer(docket_buf *out, char kind, int exit_code, const char *out_text, const char *err_text)
{
	int error;

	docket_buf_clear(out);
	if ((error = docket_buf_put(out, "DKHA1", 5)) < 0 || (error = docket_buf_put(out, &kind, 1)) < 0 ||
	    kind != 'A')
		return error;
	if ((error = put_u32(out, (uint32_t)exit_code)) < 0 || (error = put_text(out, out_text)) < 0)
		return error;
	return put_text(out, err_text);
}
