/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_replay_input.c: `docket replay --from` replays what the fleet
 * database returns: stored payloads and the facts of each call, outside
 * input to the replay engine (docket_replay_run_input). The input is a
 * sequence of records
 *
 *   u8 requests | u8 implied | u8 last_result | u8 intent | be16 len | payload[len]
 *
 * (implied and last_result pick a verdict or result name, a bogus name or
 * NULL; intent names another record as the call's intent, 0xff none). The
 * replay must never crash or leak, must return 0 or a negative code with a
 * message, and must report each call with a known class.
 */
#include <stdlib.h>
#include <string.h>

#include "docket/replay.h"
#include "util/alloc.h"
#include "util/error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_RECORDS 256

static const char *const names[] = {
	NULL, "allowed", "approval_required", "denied", "unsupported", "approved", "approved_for_session",
	"aborted", "superseded", "", "bogus",
};

typedef struct rec {
	docket_replay_input in;
	uint8_t intent;
} rec;

typedef struct feed {
	rec r[MAX_RECORDS];
	size_t n, next;
} feed;

static int next(void *ctx, docket_replay_input *in)
{
	feed *f = ctx;

	if (f->next >= f->n)
		return 1;
	*in = f->r[f->next++].in;
	return 0;
}

static int on_call(void *ctx, const docket_replay_call *c)
{
	(void)ctx;
	if ((unsigned)c->cls > DOCKET_REPLAY_UNDECIDED || !c->session || !c->invocation || !c->tool)
		abort();
	return 0;
}

static void parse(feed *f, const uint8_t *data, size_t size)
{
	size_t at = 0;

	f->n = f->next = 0;
	while (f->n < MAX_RECORDS && size - at >= 6) {
		rec *r = &f->r[f->n];
		size_t len = ((size_t)data[at + 4] << 8) | data[at + 5];

		if (len > size - at - 6)
			len = size - at - 6;
		memset(r, 0, sizeof(*r));
		r->in.seq = f->n + 1;
		r->in.requests = data[at];
		r->in.implied = names[data[at + 1] % (sizeof(names) / sizeof(names[0]))];
		r->in.last_result = names[data[at + 2] % (sizeof(names) / sizeof(names[0]))];
		r->intent = data[at + 3];
		r->in.payload = data + at + 6;
		r->in.len = len;
		f->n++;
		at += 6 + len;
	}
	for (size_t i = 0; i < f->n; i++)
		if (f->r[i].intent != 0xff) {
			const rec *t = &f->r[f->r[i].intent % f->n];

			f->r[i].in.intent = t->in.payload;
			f->r[i].in.intent_len = t->in.len;
		}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char policy_text[] =
		"version: 1\n"
		"approval: on_request\n"
		"commands:\n"
		"  - {pattern: [git, status], decision: allow}\n"
		"  - {pattern: [git, push], decision: ask}\n"
		"  - {pattern: [curl], decision: deny}\n";
	static docket_policy *policy;
	static feed f;
	const docket_policy *p[1];
	int error;

	docket_alloc_install_json();
	if (!policy && docket_policy_load_buffer(&policy, DOCKET_POLICY_DOCKET, "fuzz", policy_text,
						 sizeof(policy_text) - 1) < 0)
		abort();
	parse(&f, data, size);
	p[0] = policy;
	docket_error_clear();
	error = docket_replay_run_input(next, &f, NULL, p, 1, NULL, on_call, NULL);
	if (error > 0 || (error < 0 && !docket_error_last()->message[0]))
		abort();
	return 0;
}
