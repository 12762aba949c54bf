// SPDX-License-Identifier: Apache-2.0
/*
 * event_pack.c: an event's stored bytes: docket.v1.Event packed as protobuf
 * (whole, or past its time and epoch, which only the append assigns) and
 * unpacked, and where the packing's time/epoch prefix ends (re-send digests
 * hash what follows it). The JSON side of the event model is event.c.
 */
#include <string.h>

#include "ledger_internal.h"
#include "util/alloc.h"
#include "util/error.h"

/* protobuf-c returns NULL for bad bytes and for a failed allocation alike. */
int ledger_unpack_error(const char *what)
{
	if (docket_alloc_take_failure())
		return docket_error_set(DOCKET_ENOMEM, "out of memory decoding %s", what);
	return docket_error_set(DOCKET_ECORRUPT, "%s does not decode", what);
}

int event_pack(docket_buf *out, const docket_event *ev)
{
	size_t n = docket__v1__event__get_packed_size(ev);
	int error;

	docket_buf_clear(out);
	if ((error = docket_buf_reserve(out, n)) < 0)
		return error;
	out->len = docket__v1__event__pack(ev, (uint8_t *)out->ptr);
	return 0;
}

/* protobuf's varint (wire format) at `p`; its length. */
static size_t pb_varint(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	for (; v > 0x7f; v >>= 7)
		p[n++] = (uint8_t)(v | 0x80);
	p[n++] = (uint8_t)v;
	return n;
}

int event_pack_rest(docket_buf *out, docket_event *ev)
{
	char *time = ev->time;
	uint64_t epoch = ev->epoch;
	size_t n;
	int error;

	ev->time = (char *)protobuf_c_empty_string;
	ev->epoch = 0;
	n = docket__v1__event__get_packed_size(ev);
	if ((error = docket_buf_reserve(out, n)) == 0)
		out->len += docket__v1__event__pack(ev, (uint8_t *)out->ptr + out->len);
	ev->time = time;
	ev->epoch = epoch;
	return error;
}

/*
 * The packing of `ev` from its packing without time and epoch (`rest`,
 * event_pack_rest): fields 1 (time) and 2 (epoch) first, as protobuf-c
 * packs them, each left out when it holds its default (proto3).
 */
int event_pack_onto(docket_buf *out, const docket_event *ev, const uint8_t *rest, size_t len)
{
	size_t tlen = ev->time ? strlen(ev->time) : 0;
	uint8_t *p;
	int error;

	docket_buf_clear(out);
	if ((error = docket_buf_reserve(out, 2 + 2 * 10 + tlen + len)) < 0)
		return error;
	p = (uint8_t *)out->ptr;
	if (tlen) {
		*p++ = 1 << 3 | PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED;
		p += pb_varint(p, tlen);
		memcpy(p, ev->time, tlen);
		p += tlen;
	}
	if (ev->epoch) {
		*p++ = 2 << 3 | PROTOBUF_C_WIRE_TYPE_VARINT;
		p += pb_varint(p, ev->epoch);
	}
	memcpy(p, rest, len);
	out->len = (size_t)(p + len - (uint8_t *)out->ptr);
	return 0;
}

int event_unpack_in(docket_event **out, ProtobufCAllocator *alloc, const uint8_t *data, size_t len)
{
	docket_alloc_take_failure();
	*out = docket__v1__event__unpack(alloc, len, data);
	if (!*out)
		return ledger_unpack_error("event payload");
	if ((*out)->body_case == DOCKET__V1__EVENT__BODY__NOT_SET) {
		docket__v1__event__free_unpacked(*out, alloc);
		*out = NULL;
		return docket_error_set(DOCKET_ECORRUPT, "event has no body");
	}
	return 0;
}

int event_unpack(docket_event **out, const uint8_t *data, size_t len)
{
	return event_unpack_in(out, &docket_pb_allocator, data, len);
}

static size_t varint_len(uint64_t v)
{
	size_t n = 1;

	while (v > 0x7f) {
		v >>= 7;
		n++;
	}
	return n;
}

/*
 * Length of the packing of `time` (field 1) and `epoch` (field 2) at the
 * start of the packed event, or (size_t)-1 if the bytes are not what is
 * expected. protobuf-c packs fields in field-number order and leaves out
 * proto3 fields holding their default, so the packing of the event with
 * time and epoch cleared is exactly the rest of the payload.
 */
size_t event_time_epoch_prefix(const docket_event *ev, const uint8_t *p, size_t len)
{
	size_t n = 0, tlen = ev->time ? strlen(ev->time) : 0;

	if (tlen) {
		if (len < 1 || p[0] != (1 << 3 | PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED))
			return (size_t)-1;
		n = 1 + varint_len(tlen) + tlen;
	}
	if (ev->epoch) {
		if (n >= len || p[n] != (2 << 3 | PROTOBUF_C_WIRE_TYPE_VARINT))
			return (size_t)-1;
		n += 1 + varint_len(ev->epoch);
	}
	return n <= len ? n : (size_t)-1;
}
