/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_hook_wire.c: a request on the hook server's socket comes from
 * another process (app/cli/hook_wire.c). Each input is the bytes a client
 * sends, through a socket pair, against a fixed server context; the read
 * must end in one of its three answers without reading past a length it
 * has not bounded, and a match must hand back exactly the event's bytes.
 * The answer the server would send is made from the input too and checked
 * against its layout.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../app/cli/hook_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char context[] = "ledger\0hook\0claude\0\0/w\0HOME=/h";

static uint32_t le32(const char *p)
{
	const unsigned char *u = (const unsigned char *)p;

	return (uint32_t)u[0] | (uint32_t)u[1] << 8 | (uint32_t)u[2] << 16 | (uint32_t)u[3] << 24;
}

static void check_answer(const uint8_t *data, size_t size)
{
	docket_buf b = DOCKET_BUF_INIT;
	char *text = malloc(size + 1);
	size_t half = size / 2, n1, n2;

	if (!text)
		abort();
	memcpy(text, data, size);
	text[size] = '\0';  /* two NUL-terminated texts: the halves, up to their first NUL */
	text[half] = '\0';
	if (hook_wire_answer(&b, 'A', size & 0xff, text, text + half + (size > half)) != 0)
		abort();
	n1 = strlen(text);
	n2 = strlen(text + half + (size > half));
	if (b.len != 6 + 4 + 4 + n1 + 4 + n2 || memcmp(b.ptr, "DKHA1A", 6) != 0 || le32(b.ptr + 6) != (size & 0xff) ||
	    le32(b.ptr + 10) != n1 || memcmp(b.ptr + 14, text, n1) != 0 || le32(b.ptr + 14 + n1) != n2)
		abort();
	if (hook_wire_answer(&b, 'F', 0, NULL, NULL) != 0 || b.len != 6 || memcmp(b.ptr, "DKHA1F", 6) != 0)
		abort();
	docket_buf_dispose(&b);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	docket_buf mine = DOCKET_BUF_INIT, in = DOCKET_BUF_INIT;
	int sv[2], rc;

	if (size > 65536)
		return 0;  /* within a socket pair's buffer: written whole before the read */
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		abort();
	if (size && write(sv[1], data, size) != (ssize_t)size)
		abort();
	shutdown(sv[1], SHUT_WR);
	if (docket_buf_put(&mine, context, sizeof(context)) != 0)
		abort();
	rc = hook_wire_read_request(sv[0], &mine, &in);
	if (rc == 1) {
		/* the header, the context, the length, the event: what was read is the tail */
		size_t head = 5 + 4 + sizeof(context) + 4;

		if (size < head + in.len || le32((const char *)data + 9 + sizeof(context)) != in.len ||
		    memcmp(data + head, in.ptr, in.len) != 0 || in.ptr[in.len] != '\0')
			abort();
	} else if (rc != 0 && rc != -1) {
		abort();
	}
	close(sv[0]);
	close(sv[1]);
	docket_buf_dispose(&mine);
	docket_buf_dispose(&in);
	check_answer(data, size);
	return 0;
}
