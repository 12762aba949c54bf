/* SPDX-License-Identifier: Apache-2.0 */
#include "crash.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static _Atomic int configured;     /* 0 unknown, 1 none, 2 armed */
static char armed_name[128];
static long armed_hit = 1;
static long armed_pause_ms;        /* "NAME~MS": pause instead of a kill */
static _Atomic long hits;

static void crash_configure_from(const char *spec)
{
	const char *at, *tilde;
	size_t len;

	if (!spec || !*spec) {
		atomic_store(&configured, 1);
		return;
	}
	at = strchr(spec, '@');
	tilde = strchr(spec, '~');
	len = at ? (size_t)(at - spec) : tilde ? (size_t)(tilde - spec) : strlen(spec);
	if (len >= sizeof(armed_name))
		len = sizeof(armed_name) - 1;
	memcpy(armed_name, spec, len);
	armed_name[len] = '\0';
	armed_hit = at ? strtol(at + 1, NULL, 10) : 1;
	armed_pause_ms = tilde ? strtol(tilde + 1, NULL, 10) : 0;
	atomic_store(&hits, 0);
	atomic_store(&configured, 2);
}

static void crash_configure(void)
{
	crash_configure_from(getenv("DOCKET_CRASH_POINT"));
}

void docket_crash_arm(const char *spec)
{
	crash_configure_from(spec);
}

void docket_crash_point(const char *name)
{
	int state = atomic_load(&configured);

	if (state == 0) {
		crash_configure();
		state = atomic_load(&configured);
	}
	if (state != 2 || strcmp(name, armed_name) != 0)
		return;
	if (atomic_fetch_add(&hits, 1) + 1 < armed_hit)
		return;
	if (armed_pause_ms > 0)
		usleep((useconds_t)armed_pause_ms * 1000);
	else
		kill(getpid(), SIGKILL);
}
