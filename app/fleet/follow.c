/* SPDX-License-Identifier: Apache-2.0 */
/*
 * follow.c: `docket ship --follow`. A loop of rounds:
 *
 *   (no connection) --connect fails--> sleep backoff (x2, capped) --+
 *        |  ^                                                       |
 *        |  +-------------------------------------------------------+
 *        v connected
 *      ship --server gone--> drop the connection, sleep backoff
 *        |   --refused-----> return (the next round would be refused too)
 *        v
 *      wait for a commit: inotify on the ledger directory (data.mdb written),
 *      with a long timeout as a safety net, and SIGINT/SIGTERM
 *
 * A round reads only what the server does not hold, so a restart of either
 * side loses and repeats nothing; memory is one batch.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

#include "fleet_internal.h"
#include "util/error.h"

#define BACKOFF_FIRST_MS 100
#define BACKOFF_MAX_MS 10000
#define SAFETY_WAKE_MS 30000

static int stopped(const docket_follow_options *fo)
{
	return fo->stop && *fo->stop;
}

/* Sleep `ms` or until a signal (which sets *stop). */
static void nap(unsigned ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };

	(void)nanosleep(&ts, NULL);
}

static int watch_open(const char *dir)
{
	int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);

	if (fd < 0)
		return -1;
	if (inotify_add_watch(fd, dir, IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Wait until the ledger's data file changes (or the timeout, or a signal). */
static void wait_commit(int fd, int timeout_ms)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	struct pollfd p = { fd, POLLIN, 0 };

	if (fd < 0) {
		nap((unsigned)timeout_ms);
		return;
	}
	if (poll(&p, 1, timeout_ms) > 0)
		while (read(fd, buf, sizeof(buf)) > 0)
			;  /* drain: one round ships everything committed so far */
}

/* Errors a later round can cure: the server unreachable or gone. */
static int retryable(docket_fleet *f, int error)
{
	return error == DOCKET_ESTORAGE && !docket_fleet_alive(f);
}

int docket_fleet_follow(const char *conninfo, docket_ledger *l, const docket_ship_options *o,
			const docket_follow_options *fo, docket_ship_report *rep)
{
	unsigned max = fo->max_backoff_ms ? fo->max_backoff_ms : BACKOFF_MAX_MS;
	unsigned backoff = BACKOFF_FIRST_MS;
	docket_fleet *f = NULL;
	int fd, error = 0;

	memset(rep, 0, sizeof(*rep));
	fd = fo->ledger_path ? watch_open(fo->ledger_path) : -1;
	while (!stopped(fo)) {
		if (!f && (error = docket_fleet_connect(&f, conninfo)) < 0) {
			if (error != DOCKET_ESTORAGE)
				break;
			goto retry;
		}
		if ((error = docket_fleet_ship(f, l, o, rep)) < 0) {
			if (!retryable(f, error))
				break;
			docket_fleet_free(f);
			f = NULL;
			goto retry;
		}
		if (fo->on_round)
			fo->on_round(fo->ctx, rep, 0);
		if (rep->refused)
			break;
		backoff = BACKOFF_FIRST_MS;
		wait_commit(fd, SAFETY_WAKE_MS);
		continue;
retry:
		if (fo->on_round)
			fo->on_round(fo->ctx, rep, error);
		error = 0;
		nap(backoff);
		backoff = backoff * 2 > max ? max : backoff * 2;
	}
	if (fd >= 0)
		close(fd);
	docket_fleet_free(f);
	return error;
}
