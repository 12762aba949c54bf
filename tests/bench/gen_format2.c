/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gen_format2.c: the stream of issue 12 (gen_format2.h).
 */
#include "gen_format2.h"

#include <stdarg.h>
#include <stdio.h>

typedef struct out {
	docket_buf *text;
	size_t *events;
} out;

static int put_line(out *s, const char *fmt, ...) DOCKET_PRINTF(2, 3);

static int put_line(out *s, const char *fmt, ...)
{
	char tmp[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(tmp) - 1)
		return -1;
	tmp[n++] = '\n';
	(*s->events)++;
	return docket_buf_put(s->text, tmp, (size_t)n);
}

static const char *const commands[] = {
	"\"git\",\"status\",\"--short\"", "\"npm\",\"test\"", "\"ls\",\"-la\",\"src\"",
	"\"git\",\"diff\",\"--stat\"", "\"cargo\",\"build\"", "\"rg\",\"-n\",\"TODO\",\"src\"",
	"\"cat\",\"README.md\"", "\"make\",\"-j2\"",
};

static int gen_call(out *s, size_t i, size_t sessions)
{
	unsigned sess = (unsigned)(i % sessions), k = (unsigned)((i * 2654435761u) >> 7) % 8;
	int ask = i % 5 == 3, rc = 0;
	char id[64];

	snprintf(id, sizeof(id), "\"session\":\"sess-%04u\",\"invocation\":\"call_%07zu\"", sess, i);
	rc |= put_line(s, "{\"type\":\"tool.intent\",%s,\"tool\":\"shell\",\"args\":{\"command\":[%s]},"
		       "\"recovery\":\"idempotent\",\"decision\":{\"verdict\":\"%s\",\"source\":\"policy\"}}",
		       id, commands[k], ask ? "approval_required" : "allowed");
	if (ask) {
		rc |= put_line(s, "{\"type\":\"approval.requested\",%s,\"request\":\"r%zu\",\"reviewer\":\"user\"}",
			       id, i);
		rc |= put_line(s, "{\"type\":\"approval.settled\",%s,\"request\":\"r%zu\",\"result\":\"approved\","
			       "\"actor\":\"user:dev\"}", id, i);
	}
	rc |= put_line(s, "{\"type\":\"tool.dispatched\",%s}", id);
	rc |= put_line(s, "{\"type\":\"tool.completed\",%s,\"status\":\"ok\",\"exit_code\":0,"
		       "\"duration_ms\":%zu}", id, 3 + i % 400);
	return rc;
}

int gen_format2(docket_buf *text, size_t calls, size_t sessions, size_t *events)
{
	out s = { text, events };
	int rc;

	*events = 0;
	rc = put_line(&s, "{\"type\":\"runtime.started\",\"runtime\":\"docket-bench/1\"}");
	for (size_t i = 0; i < sessions && rc == 0; i++)
		rc = put_line(&s, "{\"type\":\"session.opened\",\"session\":\"sess-%04zu\",\"runtime\":\"codex/0.171.0\","
			      "\"platform\":\"linux\",\"cwd\":\"/home/dev/src/project-%zu\"}", i, i % 17);
	for (size_t i = 0; i < calls && rc == 0; i++)
		rc = gen_call(&s, i, sessions);
	for (size_t i = 0; i < sessions && rc == 0; i++)
		rc = put_line(&s, "{\"type\":\"session.closed\",\"session\":\"sess-%04zu\"}", i);
	return rc == 0 ? 0 : -1;
}
