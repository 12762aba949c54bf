/* SPDX-License-Identifier: Apache-2.0 */
/*
 * intent_decode.c: a tool.intent's payload read straight from the wire
 * (schema/docket.proto: Event, ToolIntent, Decision), for replay's scan,
 * where protobuf-c's descriptor-driven unpack was a tenth of the CPU.
 *
 * Invariant: what it decodes is the message protobuf-c's unpack gives for
 * the same bytes, field by field, allocated through the same allocator
 * (so docket__v1__event__free_unpacked frees it). It decodes only the
 * common case and says so: any other field, a field given twice, a wire
 * type the schema does not give it, a bad varint or length answers 1, and
 * the caller unpacks with protobuf-c (which decides what the bytes are).
 * tests/unit/test_replay.c compares the two on events of every shape and on
 * damaged bytes.
 */
#include <string.h>

#include "replay_internal.h"
#include "util/error.h"

#define WT_VARINT 0
#define WT_LEN 2

typedef struct wire {
	const uint8_t *p, *end;
	ProtobufCAllocator *a;
} wire;

/* A varint of at most 10 bytes; false at the end or past 10 bytes. */
static bool get_varint(wire *w, uint64_t *v)
{
	if (w->p < w->end && !(*w->p & 0x80)) {
		*v = *w->p++;   /* tags, enums, short lengths: one byte */
		return true;
	}
	*v = 0;
	for (unsigned shift = 0; shift < 70 && w->p < w->end; shift += 7) {
		uint8_t b = *w->p++;

		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

/* The next field: its number, wire type and, for a length-delimited one, its bytes. */
static bool get_field(wire *w, unsigned *field, unsigned *wt, uint64_t *v, const uint8_t **bytes)
{
	uint64_t tag;

	if (!get_varint(w, &tag) || tag >> 3 == 0 || tag >> 3 > 0x1fffffff)
		return false;
	*field = (unsigned)(tag >> 3);
	*wt = (unsigned)(tag & 7);
	if (*wt == WT_VARINT)
		return get_varint(w, v);
	if (*wt != WT_LEN || !get_varint(w, v) || *v > (uint64_t)(w->end - w->p))
		return false;
	*bytes = w->p;
	w->p += *v;
	return true;
}

/* The field once, with its wire type: a bit of *seen per field number. */
static bool first_as(uint32_t *seen, unsigned field, unsigned wt, unsigned want)
{
	uint32_t bit = 1u << (field & 31);

	if (wt != want || (*seen & bit))
		return false;
	*seen |= bit;
	return true;
}

static char *string_of(wire *w, const uint8_t *bytes, uint64_t n)
{
	char *s = w->a->alloc(w->a->allocator_data, (size_t)n + 1);

	if (s) {
		memcpy(s, bytes, (size_t)n);
		s[n] = '\0';
	}
	return s;
}

static void *message_of(wire *w, size_t size)
{
	return w->a->alloc(w->a->allocator_data, size);
}

/* The repeated strings' counts (fields 3 and 4), protobuf-c sizes their arrays so. */
static void count_repeated(const uint8_t *p, const uint8_t *end, size_t *n3, size_t *n4)
{
	wire w = { p, end, NULL };
	unsigned field, wt;
	uint64_t v;
	const uint8_t *bytes;

	*n3 = *n4 = 0;
	while (w.p < w.end && get_field(&w, &field, &wt, &v, &bytes)) {
		*n3 += field == 3;
		*n4 += field == 4;
	}
}

/* 1: not the common case; -1: out of memory. */
static int decision_of(wire *outer, Docket__V1__Decision **out, const uint8_t *p, uint64_t len)
{
	wire w = { p, p + len, outer->a };
	Docket__V1__Decision *d = message_of(&w, sizeof(*d));
	size_t nr, nu;
	uint32_t seen = 0;
	unsigned field, wt;
	uint64_t v;
	const uint8_t *bytes = NULL;
	int error = 0;

	if (!d)
		return -1;
	docket__v1__decision__init(d);
	*out = d;
	count_repeated(w.p, w.end, &nr, &nu);
	if ((nr && !(d->reasons = message_of(&w, nr * sizeof(char *)))) ||
	    (nu && !(d->rules = message_of(&w, nu * sizeof(char *)))))
		return -1;
	while (error == 0 && w.p < w.end) {
		if (!get_field(&w, &field, &wt, &v, &bytes))
			return 1;
		if (field == 1 && first_as(&seen, field, wt, WT_VARINT))
			d->verdict = (Docket__V1__Verdict)(int32_t)(uint32_t)v;
		else if (field == 2 && first_as(&seen, field, wt, WT_LEN))
			error = (d->source = string_of(&w, bytes, v)) ? 0 : -1;
		else if (field == 3 && wt == WT_LEN)
			error = (d->reasons[d->n_reasons++] = string_of(&w, bytes, v)) ? 0 : -1;
		else if (field == 4 && wt == WT_LEN)
			error = (d->rules[d->n_rules++] = string_of(&w, bytes, v)) ? 0 : -1;
		else if (field == 5 && first_as(&seen, field, wt, WT_VARINT))
			d->policy_revision = (uint32_t)v;
		else
			return 1;
	}
	return error;
}

static int tool_intent_of(wire *outer, Docket__V1__ToolIntent **out, const uint8_t *p, uint64_t len)
{
	wire w = { p, p + len, outer->a };
	Docket__V1__ToolIntent *ti = message_of(&w, sizeof(*ti));
	uint32_t seen = 0;
	unsigned field, wt;
	uint64_t v;
	const uint8_t *bytes = NULL;
	int error = 0;

	if (!ti)
		return -1;
	docket__v1__tool_intent__init(ti);
	*out = ti;
	while (error == 0 && w.p < w.end) {
		if (!get_field(&w, &field, &wt, &v, &bytes))
			return 1;
		if (field == 1 && first_as(&seen, field, wt, WT_LEN))
			error = (ti->tool = string_of(&w, bytes, v)) ? 0 : -1;
		else if (field == 2 && first_as(&seen, field, wt, WT_LEN))
			error = (ti->args_json = string_of(&w, bytes, v)) ? 0 : -1;
		else if (field == 3 && first_as(&seen, field, wt, WT_VARINT))
			ti->recovery = (Docket__V1__RecoveryMode)(int32_t)(uint32_t)v;
		else if (field == 4 && first_as(&seen, field, wt, WT_LEN))
			error = decision_of(&w, &ti->decision, bytes, v);
		else
			return 1;
	}
	return error;
}

/* An Event string field (time, session, invocation, turn), or NULL. */
static char **event_string(Docket__V1__Event *ev, unsigned field)
{
	switch (field) {
	case 1: return &ev->time;
	case 3: return &ev->session;
	case 4: return &ev->invocation;
	case 5: return &ev->turn;
	default: return NULL;
	}
}

static int event_fields(wire *w, Docket__V1__Event *ev)
{
	uint32_t seen = 0;
	unsigned field, wt;
	uint64_t v;
	const uint8_t *bytes = NULL;
	char **s;
	int error = 0;

	while (error == 0 && w->p < w->end) {
		if (!get_field(w, &field, &wt, &v, &bytes))
			return 1;
		if ((s = event_string(ev, field)) && first_as(&seen, field, wt, WT_LEN))
			error = (*s = string_of(w, bytes, v)) ? 0 : -1;
		else if (field == 2 && first_as(&seen, field, wt, WT_VARINT))
			ev->epoch = v;
		else if (field == 6 && first_as(&seen, field, wt, WT_LEN))
			/* rare (imported events): protobuf-c's own unpack */
			error = (ev->provenance = docket__v1__provenance__unpack(w->a, (size_t)v, bytes)) ? 0 : 1;
		else if (field == DOCKET__V1__EVENT__BODY_TOOL_INTENT && first_as(&seen, field, wt, WT_LEN)) {
			ev->body_case = DOCKET__V1__EVENT__BODY_TOOL_INTENT;
			error = tool_intent_of(w, &ev->tool_intent, bytes, v);
		} else
			return 1;
	}
	return error != 0 ? error : ev->body_case == DOCKET__V1__EVENT__BODY_TOOL_INTENT ? 0 : 1;
}

int intent_decode(docket_event **out, ProtobufCAllocator *a, const uint8_t *p, size_t len)
{
	wire w = { p, p + len, a };
	Docket__V1__Event *ev = a->alloc(a->allocator_data, sizeof(*ev));
	int rc;

	*out = NULL;
	if (!ev)
		return docket_error_set_oom();
	docket__v1__event__init(ev);
	if ((rc = event_fields(&w, ev)) == 0) {
		*out = ev;
		return 0;
	}
	docket__v1__event__free_unpacked(ev, a);
	return rc < 0 ? docket_error_set_oom() : 1;
}
