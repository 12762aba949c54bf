/* SPDX-License-Identifier: Apache-2.0 */
/*
 * spool_journal.c: the spool's journal, PATH/spool/journal (docs/write-path.md
 * §3, docs/file-format.md "The spool").
 *
 * A hook that cannot record in the ledger appends its events here: one
 * write(2) with O_APPEND of all its records, then ONE fdatasync. (An entry
 * file of its own cost an fsync of the file, a rename and an fsync of the
 * directory: two journal commits of the file system, about 2.3 times one
 * append + fdatasync on this project's disks.) A record:
 *
 *     0x1E  NAME  0x20  JSON  0x0A
 *
 * NAME is an entry name (spool.c: <16 hex ns>-<pid>-<counter>.json), unique
 * per record, so the fold's markers ("spool:<name>" in meta) recognise a
 * record folded before, whichever file held it. JSON is compact (no raw
 * newline, no 0x1E: control characters are escaped). Appends of whole
 * records by one write(2) each do not interleave on a local file system;
 * a record a crash cut short (no 0x0A before the next 0x1E) was never
 * acknowledged (its writer had not synced) and is skipped; an unterminated
 * record at the end is one being written, or the same kind of leftover.
 *
 * Reclaiming: once a fold's commit is durable and every record of the
 * journal is marked folded, the journal is emptied (spool_journal_reclaim,
 * ftruncate: kept, so that the next writer need not create it and sync
 * the directory; older dockets unlinked it, which writers still handle).
 * Writers hold a shared flock on it around their write(2) and check that
 * it is still linked; the reclaimer holds an exclusive one (never waiting
 * for it) and empties it only when the file is still the size it folded. So
 * no record can land in an unlinked journal, and a crash anywhere leaves
 * either the journal (its records marked: folded again as nothing) or no
 * journal.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spool_internal.h"
#include "util/crash.h"
#include "util/error.h"

#define RS '\x1e'
#define OPEN_TRIES 4

static int journal_path(docket_buf *out, const char *dir)
{
	return docket_buf_printf(out, "%s/" SPOOL_JOURNAL, dir);
}

int spool_journal_record(docket_buf *out, const char *name, const char *json, size_t len)
{
	int error;

	if (memchr(json, '\n', len) || memchr(json, RS, len))
		return docket_error_set(DOCKET_EINVALID, "a spool record holds a raw newline");
	if ((error = docket_buf_putc(out, RS)) < 0 || (error = docket_buf_puts(out, name)) < 0 ||
	    (error = docket_buf_putc(out, ' ')) < 0 || (error = docket_buf_put(out, json, len)) < 0)
		return error;
	return docket_buf_putc(out, '\n');
}

static int storage_error(const char *what, const char *path)
{
	return docket_error_set(DOCKET_ESTORAGE, "cannot %s the spool journal %s: %s", what, path, strerror(errno));
}

/* The journal open for appending (created when missing: *created 1). */
static int open_journal(int *out, int *created, const char *path)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);

	*created = 0;
	if (fd < 0 && errno == ENOENT) {
		fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
		*created = fd >= 0;
		if (fd < 0 && errno == EEXIST)
			return 1;  /* another writer made it: open that one */
	}
	if (fd < 0)
		return storage_error("open", path);
	*out = fd;
	return 0;
}

/* One write(2) under a shared lock, into a journal still linked: 0, 1 when
 * it was reclaimed meanwhile (open it again), or an error. */
static int append_locked(int fd, const char *path, const char *bytes, size_t len)
{
	struct stat st;
	ssize_t n;
	int error = 0;

	if (flock(fd, LOCK_SH) != 0)
		return storage_error("lock", path);
	if (fstat(fd, &st) != 0)
		error = storage_error("stat", path);
	else if (st.st_nlink == 0)
		error = 1;
	else if ((n = write(fd, bytes, len)) < 0 || (size_t)n != len)
		/* never written in two parts: a second part could follow another
		 * writer's record; the part written is a torn record, skipped */
		error = n < 0 ? storage_error("write", path)
			: docket_error_set(DOCKET_ESTORAGE, "short write to the spool journal %s", path);
	(void)flock(fd, LOCK_UN);
	return error;
}

int spool_sync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), ok;

	if (fd < 0)
		return -1;
	ok = fsync(fd) == 0;
	close(fd);
	return ok ? 0 : -1;
}

int spool_journal_append(const char *dir, const char *bytes, size_t len)
{
	docket_buf path = DOCKET_BUF_INIT;
	int error, fd = -1, created = 0;

	if ((error = journal_path(&path, dir)) < 0)
		return error;
	error = 1;
	for (int tries = 0; error == 1 && tries < OPEN_TRIES; tries++) {
		if ((error = open_journal(&fd, &created, path.ptr)) != 0)
			continue;
		if ((error = append_locked(fd, path.ptr, bytes, len)) != 0) {
			close(fd);
			fd = -1;
		}
	}
	if (error == 1)
		error = docket_error_set(DOCKET_ESTORAGE, "the spool journal %s keeps being replaced", path.ptr);
	if (error == 0) {
		docket_crash_point("spool.before_sync");
		/* one sync: the records; a journal this writer created also needs
		 * its name in the directory */
		if (fdatasync(fd) != 0)
			error = storage_error("sync", path.ptr);
		else if (created && spool_sync_dir(dir) != 0)
			error = docket_error_set(DOCKET_ESTORAGE, "cannot sync %s: %s", dir, strerror(errno));
	}
	if (fd >= 0)
		close(fd);
	docket_buf_dispose(&path);
	return error;
}

/* 1 when name[0..len) can be an entry name (spool.c's form, bounded). */
static int name_ok(const char *name, size_t len)
{
	if (len == 0 || len >= SPOOL_NAME_MAX || name[0] == '.')
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'z') || name[i] == '-' ||
		      name[i] == '.'))
			return 0;
	return 1;
}

size_t spool_journal_parse(const char *buf, size_t len, spool_journal_fn fn, void *ctx, int *stop)
{
	size_t pos = 0, n = 0;

	*stop = 0;
	while (pos < len && *stop == 0) {
		const char *start, *nl, *next, *sp;
		size_t left;

		if (buf[pos] != RS) {
			const char *rs = memchr(buf + pos, RS, len - pos);

			pos = rs ? (size_t)(rs - buf) : len;  /* not a record: the rest of a torn one */
			continue;
		}
		start = buf + pos + 1;
		left = len - pos - 1;
		if (!(nl = memchr(start, '\n', left)))
			break;  /* unterminated at the end: being written, or left by a crash */
		if ((next = memchr(start, RS, (size_t)(nl - start)))) {
			pos = (size_t)(next - buf);  /* cut short by a crash: never acknowledged */
			continue;
		}
		pos = (size_t)(nl - buf) + 1;
		sp = memchr(start, ' ', (size_t)(nl - start));
		if (!sp || !name_ok(start, (size_t)(sp - start)))
			continue;  /* no name: nothing can mark it, and no writer made it */
		n++;
		*stop = fn(ctx, start, (size_t)(sp - start), sp + 1, (size_t)(nl - sp - 1));
	}
	return n;
}

int spool_journal_read(docket_buf *out, spool_journal_seen *seen, const char *dir)
{
	docket_buf path = DOCKET_BUF_INIT;
	struct stat st;
	FILE *f;
	int error, fd;

	memset(seen, 0, sizeof(*seen));
	if ((error = journal_path(&path, dir)) < 0)
		return error;
	if ((fd = open(path.ptr, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0) {
		error = errno == ENOENT ? 0 : storage_error("open", path.ptr);
		goto done;
	}
	if (fstat(fd, &st) != 0 || !(f = fdopen(fd, "rb"))) {
		error = storage_error("read", path.ptr);
		close(fd);
		goto done;
	}
	seen->present = 1;
	seen->dev = st.st_dev;
	seen->ino = st.st_ino;
	error = docket_buf_read_stream(out, f);
	seen->size = out->len;
	fclose(f);
done:
	docket_buf_dispose(&path);
	return error;
}

static int count_record(void *ctx, const char *name, size_t name_len, const char *json, size_t len)
{
	(void)ctx;
	(void)name;
	(void)name_len;
	(void)json;
	(void)len;
	return 0;
}

int spool_journal_count(const char *dir, size_t *out)
{
	docket_buf text = DOCKET_BUF_INIT;
	spool_journal_seen seen;
	int stop, error;

	*out = 0;
	if ((error = spool_journal_read(&text, &seen, dir)) == 0 && text.len)
		*out = spool_journal_parse(text.ptr, text.len, count_record, NULL, &stop);
	docket_buf_dispose(&text);
	return error;
}

void spool_journal_reclaim(const char *dir, const spool_journal_seen *seen)
{
	docket_buf path = DOCKET_BUF_INIT;
	struct stat st;
	int fd;

	if (!seen->present || seen->size == 0 || journal_path(&path, dir) < 0 ||
	    (fd = open(path.ptr, O_WRONLY | O_CLOEXEC | O_NOFOLLOW)) < 0) {
		docket_error_clear();
		docket_buf_dispose(&path);
		return;
	}
	/* a writer appending now keeps it: the next fold reclaims it */
	if (flock(fd, LOCK_EX | LOCK_NB) == 0 && fstat(fd, &st) == 0 && st.st_dev == seen->dev &&
	    st.st_ino == seen->ino && st.st_nlink > 0 && (uint64_t)st.st_size == seen->size) {
		docket_crash_point("spool.before_reclaim");
		/* emptied, not unlinked: the next hook appends to it without
		 * creating it (no fsync of the directory: one sync per event) */
		(void)ftruncate(fd, 0);
	}
	close(fd);
	docket_buf_dispose(&path);
}
