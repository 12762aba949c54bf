/* SPDX-License-Identifier: Apache-2.0 */
/* file.h: writing files whole (the one owner of "every byte" and "atomic replace"). */
#ifndef DOCKET_UTIL_FILE_H
#define DOCKET_UTIL_FILE_H

#include <stddef.h>
#include <sys/types.h>

#include "docket/common.h"

/* Write all `n` bytes to `fd`, retrying short writes and EINTR: 0, or -1
 * with errno set. */
int docket_write_all(int fd, const void *p, size_t n) DOCKET_MUST_USE;

enum {
	DOCKET_REPLACE_SYNC_DIR = 1u << 0   /* fsync the directory after the rename too */
};

/*
 * Replace `path` by `text` atomically and durably: `tmp` (a path in the same
 * directory; NULL: `path`.docket-tmp) is written with `mode`, fsynced and
 * renamed over `path`; with DOCKET_REPLACE_SYNC_DIR the directory is synced
 * after. On failure the temporary file is removed and `path` is untouched:
 * DOCKET_ESTORAGE naming the file and the reason.
 */
int docket_file_replace(const char *path, const char *tmp, const char *text, size_t len, mode_t mode,
			unsigned int flags) DOCKET_MUST_USE;

#endif
