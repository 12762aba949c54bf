/* SPDX-License-Identifier: Apache-2.0 */
/* file.c: writing files whole (util/file.h). */
#include "util/file.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/crash.h"
#include "util/error.h"

int docket_write_all(int fd, const void *p, size_t n)
{
	for (size_t off = 0; off < n;) {
		ssize_t w = write(fd, (const char *)p + off, n - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = EIO;
			return -1;
		}
		off += (size_t)w;
	}
	return 0;
}

/* fsync the directory holding `path`. */
static int sync_parent(const char *path)
{
	docket_buf dir = DOCKET_BUF_INIT;
	int fd = -1, ok = 0;

	if (docket_buf_put(&dir, path, strlen(path) + 1) == 0 &&
	    (fd = open(dirname(dir.ptr), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0)
		ok = fsync(fd) == 0;
	if (fd >= 0)
		close(fd);
	docket_buf_dispose(&dir);
	return ok ? 0 : docket_error_set(DOCKET_ESTORAGE, "cannot sync the directory of %s", path);
}

int docket_file_replace(const char *path, const char *tmp, const char *text, size_t len, mode_t mode,
			unsigned int flags)
{
	docket_buf name = DOCKET_BUF_INIT;
	int fd = -1, error = 0, bad;

	if (!tmp) {
		if ((error = docket_buf_printf(&name, "%s.docket-tmp", path)) < 0)
			return error;
		tmp = name.ptr;
	}
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)) < 0) {
		error = docket_error_set(DOCKET_ESTORAGE, "cannot write %s: %s", tmp, strerror(errno));
		goto done;
	}
	bad = fchmod(fd, mode) != 0 || docket_write_all(fd, text, len) != 0 || fsync(fd) != 0;
	bad |= close(fd) != 0;
	if (!bad)
		docket_crash_point("file.before_rename");
	if (bad || rename(tmp, path) != 0) {
		error = docket_error_set(DOCKET_ESTORAGE, "cannot write %s: %s", path, strerror(errno));
		unlink(tmp);
		goto done;
	}
	if (flags & DOCKET_REPLACE_SYNC_DIR)
		error = sync_parent(path);
done:
	docket_buf_dispose(&name);
	return error;
}
