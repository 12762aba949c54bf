/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pwrcut.c: an LD_PRELOAD shim for the power-loss torture (issue 11).
 *
 * SIGKILL leaves the page cache intact, so a kill cannot show a missing
 * fsync. This shim records, in the order they complete, every write to a
 * ledger's data file (write, writev, pwrite, pwritev, with their bytes),
 * every ftruncate of it and every completed fsync/fdatasync/msync, in a log
 * the torture replays over the file as it was before the process started
 * (torture.c, power_reconstruct): what a power cut could leave is
 * everything before the last completed sync, every write made through a
 * descriptor opened O_DSYNC/O_SYNC (durable when it returns), and any
 * subset of the later writes, each possibly torn at 512-byte sectors. The
 * file-system assumptions are in docs/architecture.md.
 *
 * Environment:
 *   PWRCUT_LOG=PATH    record to PATH (absent: the shim does nothing)
 *   PWRCUT_AT=N        the power cut: SIGKILL this process just before its
 *                      N-th recorded operation (1-based; 0 or absent: never)
 *   PWRCUT_SYNC_AT=N   the power cut comes instead just before the N-th
 *                      sync of the data file (issue 34: aimed at the window
 *                      where a commit's meta page waits for the next sync)
 *   PWRCUT_SLOW_SYNC_MS=M  each sync of the data file first waits M ms, as
 *                      a slow disk does: time for a reply sent too early
 *                      to reach its client before the cut
 *   PWRCUT_NOSYNC=1    the MDB_NOSYNC mutant: fsync/fdatasync/msync of the
 *                      data file do nothing and O_DSYNC/O_SYNC are dropped
 *                      from its opens, which is what MDB_NOSYNC amounts to
 *                      at the system-call level (no data sync, the meta page
 *                      written through the ordinary descriptor)
 *
 * Log record: "PWR1", op ('W' write, 'T' truncate, 'S' sync), flags (bit 0:
 * written through an O_DSYNC descriptor), 2 bytes of padding, be64 offset
 * (the new size for 'T'), be64 length, the bytes ('W'), "END1".
 */
/* the plain names (open, pwrite) are the symbols to interpose; off_t is
 * 64 bits on the hosts this runs on, and the *64 names are aliases */
#undef _FILE_OFFSET_BITS
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

/* the project builds with -fvisibility=hidden: the functions this shim
 * interposes must be exported, or the dynamic linker never sees them */
#pragma GCC visibility push(default)

#define MAX_FD 4096
#define F_DATA 1
#define F_DSYNC 2

static unsigned char fds[MAX_FD];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int log_fd = -1, nosync, active;
static unsigned long cut_at, ops, sync_cut_at, syncs, slow_sync_ms;

static int (*real_open)(const char *, int, ...);
static int (*real_openat)(int, const char *, int, ...);
static int (*real_close)(int);
static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
static ssize_t (*real_writev)(int, const struct iovec *, int);
static ssize_t (*real_pwritev)(int, const struct iovec *, int, off_t);
static int (*real_ftruncate)(int, off_t);
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static int (*real_msync)(void *, size_t, int);

__attribute__((constructor)) static void pwrcut_init(void)
{
	const char *log = getenv("PWRCUT_LOG"), *at = getenv("PWRCUT_AT"), *ns = getenv("PWRCUT_NOSYNC");
	const char *sat = getenv("PWRCUT_SYNC_AT"), *slow = getenv("PWRCUT_SLOW_SYNC_MS");
	static int done;

	if (done)
		return;
	done = 1;

	*(void **)&real_open = dlsym(RTLD_NEXT, "open");
	*(void **)&real_openat = dlsym(RTLD_NEXT, "openat");
	*(void **)&real_close = dlsym(RTLD_NEXT, "close");
	*(void **)&real_write = dlsym(RTLD_NEXT, "write");
	*(void **)&real_pwrite = dlsym(RTLD_NEXT, "pwrite");
	*(void **)&real_writev = dlsym(RTLD_NEXT, "writev");
	*(void **)&real_pwritev = dlsym(RTLD_NEXT, "pwritev");
	*(void **)&real_ftruncate = dlsym(RTLD_NEXT, "ftruncate");
	*(void **)&real_fsync = dlsym(RTLD_NEXT, "fsync");
	*(void **)&real_fdatasync = dlsym(RTLD_NEXT, "fdatasync");
	*(void **)&real_msync = dlsym(RTLD_NEXT, "msync");
	if (!log || !*log)
		return;
	log_fd = real_open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (log_fd < 0)
		abort();
	cut_at = at ? strtoul(at, NULL, 10) : 0;
	sync_cut_at = sat ? strtoul(sat, NULL, 10) : 0;
	slow_sync_ms = slow ? strtoul(slow, NULL, 10) : 0;
	nosync = ns && *ns == '1';
	active = 1;
}

static int is_data_file(const char *path)
{
	const char *slash = strrchr(path, '/');

	return strcmp(slash ? slash + 1 : path, "data.mdb") == 0;
}

static int tracked(int fd)
{
	return active && fd >= 0 && fd < MAX_FD && (fds[fd] & F_DATA);
}

static void put_be64(unsigned char *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		p[i] = (unsigned char)v;
}

/* Count an operation; the power cut comes before the cut_at-th one. */
static void tick(void)
{
	if (cut_at && ++ops == cut_at)
		kill(getpid(), SIGKILL);
}

/* One record, gathered from `iov` (the bytes of a write), in one writev. */
static void record(char op, int flags, uint64_t off, const struct iovec *iov, int n, size_t len)
{
	struct iovec v[66];
	unsigned char head[24];
	size_t left = len;
	int k = 0;

	memcpy(head, "PWR1", 4);
	head[4] = (unsigned char)op;
	head[5] = (unsigned char)flags;
	head[6] = head[7] = 0;
	put_be64(head + 8, off);
	put_be64(head + 16, len);
	v[k].iov_base = head;
	v[k++].iov_len = sizeof(head);
	for (int i = 0; i < n && left > 0 && k < 65; i++) {
		size_t take = iov[i].iov_len < left ? iov[i].iov_len : left;

		v[k].iov_base = iov[i].iov_base;
		v[k++].iov_len = take;
		left -= take;
	}
	if (left)
		abort(); /* more than 64 pieces: not what LMDB writes */
	v[k].iov_base = (void *)"END1";
	v[k++].iov_len = 4;
	if (real_writev(log_fd, v, k) < 0)
		abort();
}

static int opened(const char *path, int flags, int fd)
{
	if (active && fd >= 0 && fd < MAX_FD) {
		fds[fd] = 0;
		if (is_data_file(path) && (flags & O_ACCMODE) != O_RDONLY)
			fds[fd] = F_DATA | ((flags & (O_DSYNC | O_SYNC)) ? F_DSYNC : 0);
	}
	return fd;
}

static int open_flags(const char *path, int flags)
{
	if (active && nosync && is_data_file(path))
		flags &= ~(O_DSYNC | O_SYNC);
	return flags;
}

int open(const char *path, int flags, ...)
{
	mode_t mode = 0;

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;

		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	if (!real_open)
		pwrcut_init();
	return opened(path, open_flags(path, flags), real_open(path, open_flags(path, flags), mode));
}

int open64(const char *path, int flags, ...) __attribute__((alias("open")));

int openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;

		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	if (!real_openat)
		pwrcut_init();
	return opened(path, open_flags(path, flags), real_openat(dirfd, path, open_flags(path, flags), mode));
}

int openat64(int dirfd, const char *path, int flags, ...) __attribute__((alias("openat")));

int close(int fd)
{
	if (!real_close)
		pwrcut_init();
	if (active && fd >= 0 && fd < MAX_FD)
		fds[fd] = 0;
	return real_close(fd);
}

/* A write of `iov` at `off` (-1: at the file position) through fd. */
static ssize_t write_op(int fd, const struct iovec *iov, int n, off_t off)
{
	ssize_t r;
	off_t at = off;

	pthread_mutex_lock(&lock);
	tick();
	if (at < 0)
		at = lseek(fd, 0, SEEK_CUR);
	r = off < 0 ? real_writev(fd, iov, n) : real_pwritev(fd, iov, n, off);
	if (r > 0)
		record('W', (fds[fd] & F_DSYNC) ? 1 : 0, (uint64_t)at, iov, n, (size_t)r);
	pthread_mutex_unlock(&lock);
	return r;
}

ssize_t write(int fd, const void *buf, size_t n)
{
	struct iovec v = { (void *)buf, n };

	return tracked(fd) ? write_op(fd, &v, 1, -1) : real_write(fd, buf, n);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	struct iovec v = { (void *)buf, n };

	return tracked(fd) ? write_op(fd, &v, 1, off) : real_pwrite(fd, buf, n, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off) __attribute__((alias("pwrite")));

ssize_t writev(int fd, const struct iovec *iov, int n)
{
	return tracked(fd) ? write_op(fd, iov, n, -1) : real_writev(fd, iov, n);
}

ssize_t pwritev(int fd, const struct iovec *iov, int n, off_t off)
{
	return tracked(fd) ? write_op(fd, iov, n, off) : real_pwritev(fd, iov, n, off);
}

ssize_t pwritev64(int fd, const struct iovec *iov, int n, off_t off) __attribute__((alias("pwritev")));

int ftruncate(int fd, off_t len)
{
	int r;

	if (!tracked(fd))
		return real_ftruncate(fd, len);
	pthread_mutex_lock(&lock);
	tick();
	if ((r = real_ftruncate(fd, len)) == 0)
		record('T', 0, (uint64_t)len, NULL, 0, 0);
	pthread_mutex_unlock(&lock);
	return r;
}

int ftruncate64(int fd, off_t len) __attribute__((alias("ftruncate")));

/* A sync of the data file: everything written to it before is durable. */
static int sync_op(int (*real)(int), int fd)
{
	int r;

	if (nosync)
		return 0;
	if (slow_sync_ms)
		usleep((useconds_t)(slow_sync_ms * 1000));
	pthread_mutex_lock(&lock);
	tick();
	if (sync_cut_at && ++syncs == sync_cut_at)
		kill(getpid(), SIGKILL);
	if ((r = real(fd)) == 0)
		record('S', 0, 0, NULL, 0, 0);
	pthread_mutex_unlock(&lock);
	return r;
}

int fsync(int fd)
{
	return tracked(fd) ? sync_op(real_fsync, fd) : real_fsync(fd);
}

int fdatasync(int fd)
{
	return tracked(fd) ? sync_op(real_fdatasync, fd) : real_fdatasync(fd);
}

/*
 * docket never maps its data file writable (no MDB_WRITEMAP), so an msync
 * in this process can only be LMDB's of that map: it counts as a sync of
 * the data file when one is open.
 */
int msync(void *addr, size_t len, int flags)
{
	int r, any = 0;

	for (int i = 0; active && i < MAX_FD && !any; i++)
		any = (fds[i] & F_DATA) != 0;
	if (!any)
		return real_msync(addr, len, flags);
	if (nosync)
		return 0;
	pthread_mutex_lock(&lock);
	tick();
	if ((r = real_msync(addr, len, flags)) == 0 && (flags & MS_SYNC))
		record('S', 0, 0, NULL, 0, 0);
	pthread_mutex_unlock(&lock);
	return r;
}
