/* SPDX-License-Identifier: Apache-2.0 */
/*
 * event.h: the event model. An event in memory is the protobuf-c message
 * docket.v1.Event (schema/docket.proto); this module converts it from and to
 * the JSON shapes of DESIGN §4, validating everything that comes from outside.
 */
#ifndef DOCKET_LEDGER_EVENT_H
#define DOCKET_LEDGER_EVENT_H

#include <jansson.h>

#include "docket.pb-c.h"
#include "docket/common.h"
#include "util/buf.h"
#include "util/json_tape.h"

typedef Docket__V1__Event docket_event;

/*
 * Build an event from one JSON object (DESIGN §4). Strict: unknown fields,
 * wrong types, unknown enum strings, missing required fields, bad RFC 3339
 * times are DOCKET_EINVALID with a message naming the field; a failed
 * allocation is DOCKET_ENOMEM. Nothing is leaked on failure and *out is NULL.
 * The result is freed with docket_event_free(). Every allocation goes through
 * docket_malloc. Absent `args` is stored as "{}".
 */
int docket_event_from_json(docket_event **out, const json_t *obj) DOCKET_MUST_USE;

/*
 * docket_event_from_json of one line of JSON text parsed by simdjson (`p`,
 * one per thread; util/json_tape.h) without building a jansson tree: 0 and
 * *out; <0 and the message docket_event_from_json gives for the same object;
 * 1 when simdjson cannot decide (the text is not JSON or not an object, nests
 * deeper than 1,024, or is one jansson reads differently: duplicate keys, a
 * NUL in a key, an integer above INT64_MAX): parse it with jansson then.
 * Same events, same errors (tests/unit/test_event_text.c, fuzz_event_text).
 */
int docket_event_from_text(docket_event **out, docket_json_tape *p, const char *text, size_t len) DOCKET_MUST_USE;

/*
 * The JSON object of an event as DESIGN §4 shows it, plus the fields the
 * ledger assigned that the event carries itself (time, epoch, attempt,
 * token). `seq` and `hash` are added by the reader, not here.
 * to_json(from_json(X)) is json_equal to X except that explicitly empty
 * optional values are dropped (see event.c). DOCKET_ENOMEM on allocation
 * failure, DOCKET_ECORRUPT for an event no valid input produces (no body,
 * enum out of range, invalid UTF-8, stored JSON text that does not parse).
 */
int docket_event_to_json(json_t **out, const docket_event *ev) DOCKET_MUST_USE;

/* What the ledger adds around a stored event: "seq" first, "hash" (lower-case
 * hex) last, and "epoch" after "time" even when it is 0. */
typedef struct docket_event_frame {
	uint64_t seq;
	const char *hash;
} docket_event_frame;

/* docket_event_to_json with the frame (NULL: none), the reader's shape. */
int docket_event_to_json_framed(json_t **out, const docket_event *ev,
				const docket_event_frame *frame) DOCKET_MUST_USE;

/*
 * Append the JSON text of the same object straight to `out`, without a
 * json_t: byte for byte docket_json_dump of docket_event_to_json_framed,
 * with the same errors (ledger/event_emit.c says how). On error `out` is left
 * as it was.
 */
int docket_event_write_json(docket_buf *out, const docket_event *ev,
			    const docket_event_frame *frame) DOCKET_MUST_USE;

void docket_event_free(docket_event *ev);

/* "tool.intent", ... ; "unknown" for an empty body. */
const char *docket_event_type(const docket_event *ev);

/*
 * Enum -> wire string ("approval_required"). *_UNSPECIFIED (0) gives
 * "unspecified", which is not a wire value (to_json omits it); values outside
 * the enum give NULL.
 */
const char *docket_verdict_name(Docket__V1__Verdict v);
const char *docket_approval_result_name(Docket__V1__ApprovalResult v);
const char *docket_outcome_status_name(Docket__V1__OutcomeStatus v);
const char *docket_recovery_mode_name(Docket__V1__RecoveryMode v);
const char *docket_policy_format_name(Docket__V1__PolicyFormat v);

/* Byte offset of the first character an id must not hold (control, line
 * separator, bidi control), or (size_t)-1 when it has none. */
size_t docket_id_unsafe_char(const char *s, size_t len);
const char *docket_platform_name(Docket__V1__Platform v);
const char *docket_recovery_action_name(Docket__V1__RecoveryActionKind v);

/*
 * 1 if `s` is an RFC 3339 UTC timestamp as docket accepts it:
 * YYYY-MM-DDTHH:MM:SS[.F]Z, 1..9 fraction digits, upper-case T and Z, real
 * calendar day, second <= 60 (leap second); 0 otherwise (also for NULL).
 */
int docket_time_valid(const char *s);

#endif
