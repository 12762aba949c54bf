/* SPDX-License-Identifier: Apache-2.0 */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local docket_error last_error;

const docket_error *docket_error_last(void)
{
	return &last_error;
}

void docket_error_clear(void)
{
	last_error.code = 0;
	last_error.invariant = 0;
	last_error.event_index = 0;
	last_error.message[0] = '\0';
}

void docket_error_restore(const docket_error *e)
{
	last_error = *e;
}

void docket_error_set_index(size_t index)
{
	last_error.event_index = index;
}

static int error_vset(int code, int invariant, const char *fmt, va_list ap) DOCKET_PRINTF(3, 0);

static int error_vset(int code, int invariant, const char *fmt, va_list ap)
{
	last_error.code = code;
	last_error.invariant = invariant;
	last_error.event_index = 0;
	vsnprintf(last_error.message, sizeof(last_error.message), fmt, ap);
	return code;
}

int docket_error_set(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	error_vset(code, 0, fmt, ap);
	va_end(ap);
	return code;
}

int docket_error_set_oom(void)
{
	static const char oom[] = "out of memory";

	last_error.code = DOCKET_ENOMEM;
	last_error.invariant = 0;
	last_error.event_index = 0;
	memcpy(last_error.message, oom, sizeof(oom));
	return DOCKET_ENOMEM;
}

int docket_error_invariant(int code, int invariant, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	error_vset(code, invariant, fmt, ap);
	va_end(ap);
	return code;
}

void docket_error_prefix(const char *fmt, ...)
{
	char prefix[256];
	char old[sizeof(last_error.message)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	size_t plen = strnlen(prefix, sizeof(prefix));

	memcpy(old, last_error.message, sizeof(old));
	if (plen >= sizeof(last_error.message))
		plen = sizeof(last_error.message) - 1;
	memcpy(last_error.message, prefix, plen);
	size_t rest = strnlen(old, sizeof(old) - 1);
	if (rest > sizeof(last_error.message) - 1 - plen)
		rest = sizeof(last_error.message) - 1 - plen;
	memcpy(last_error.message + plen, old, rest);
	last_error.message[plen + rest] = '\0';
}

const char *docket_error_kind(int code)
{
	switch (code) {
	case DOCKET_OK: return "ok";
	case DOCKET_EINVALID: return "bad_request";
	case DOCKET_ENOTFOUND: return "not_found";
	case DOCKET_ETRANSITION: return "invalid_transition";
	case DOCKET_ESTALE: return "stale_epoch";
	case DOCKET_ECONFLICT: return "conflict";
	case DOCKET_ESTORAGE:
	case DOCKET_EMAPFULL:
	case DOCKET_ECORRUPT:
	case DOCKET_EVERSION: return "storage";
	case DOCKET_ENOMEM: return "storage";
	case DOCKET_EEXISTS: return "conflict";
	default: return "internal";
	}
}
