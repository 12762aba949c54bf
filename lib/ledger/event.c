/* SPDX-License-Identifier: Apache-2.0 */
/*
 * event.c: the event codec, JSON (DESIGN §4) <-> docket.v1.Event.
 *
 * from_json is the front door for everything that comes from outside
 * (`docket record`, `docket serve`, importers), so it is strict and bounded.
 * It reads JSON through util/jv.h: a jansson tree (docket_event_from_json)
 * or, for `docket record`'s lines, a simdjson tape (docket_event_from_text),
 * one code for both:
 *
 *   1. Unknown fields are errors at every level (typos must not pass).
 *   2. Every value is type-checked; integers must be JSON integers, in range.
 *   3. Ids (session, invocation, request, turn, parent) are 1..256 bytes with
 *      no control characters; other strings are at most 16 MiB; arrays and
 *      string maps at most 65536 items; no string may contain NUL.
 *   4. The tree under construction is always consistent enough for
 *      docket__v1__event__free_unpacked(): a sub-message is attached to its
 *      parent as soon as it is allocated, string fields hold either the
 *      generated empty default or a docket_malloc'd copy, and a repeated
 *      field's count is raised only after its element is in place. So every
 *      failure, including every failed allocation, frees the partial tree
 *      with docket_event_free() and leaks nothing.
 *
 * to_json (ledger/event_emit.c) writes keys in the order of DESIGN §4: type, time, epoch, session,
 * invocation, turn, body fields, provenance. It omits what from_json treats as
 * "not given": empty strings, zero epoch, empty arrays and string maps, unset
 * optional integers, unspecified enums. Therefore to_json(from_json(X)) is
 * json_equal to X for every valid X, except that these explicitly empty
 * optional values are dropped:
 *   - an empty optional string ("cwd":"", "actor":"", "risk":{"level":""} ...);
 *   - an empty array or map ("workspace_roots":[], "env":{}, "labels":{},
 *     "scope":[], "decision":{"reasons":[],"rules":[]});
 *   - "args":{} (absent args are stored as "{}");
 *   - "decision":{"policy_revision":0} (0 means "not evaluated").
 * Everything else, including "exit_code":0 and "duration_ms":0, survives.
 */
#include "event.h"

#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "util/alloc.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/json.h"
#include "util/jv.h"
#include "util/utf8.h"

#define ID_MAX_LEN 256
#define TEXT_MAX_LEN ((size_t)16 * 1024 * 1024)
#define ARRAY_MAX_ITEMS 65536

#if JSON_INTEGER_IS_LONG_LONG
#define JINT_MIN LLONG_MIN
#define JINT_MAX LLONG_MAX
#else
#define JINT_MIN LONG_MIN
#define JINT_MAX LONG_MAX
#endif

/* ------------------------------------------------------------------ */
/* Enumerations: index = proto enum value, [0] is *_UNSPECIFIED.       */

static const char *const verdict_names[] = {
	NULL, "allowed", "approval_required", "denied", "unsupported",
};
static const char *const approval_result_names[] = {
	NULL, "approved", "approved_for_session", "denied", "aborted",
	"expired", "closed", "superseded",
};
static const char *const outcome_status_names[] = {
	NULL, "ok", "error", "timeout", "cancelled", "denied", "unsupported",
	"indeterminate",
};
static const char *const recovery_mode_names[] = {
	NULL, "replay_safe", "idempotent", "reconcile", "never_auto_retry",
};
static const char *const policy_format_names[] = {
	NULL, "docket", "codex", "claude", "opaque",
};
static const char *const platform_names[] = {
	NULL, "linux", "macos", "windows",
};
static const char *const recovery_action_names[] = {
	NULL, "evaluate", "reprompt", "close", "dispatch", "redispatch",
	"reconcile", "park", "indeterminate",
};
/* approval.requested `reviewer` is a string field with a closed set. */
static const char *const reviewer_names[] = {
	NULL, "user", "auto_review",
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

typedef struct enum_table {
	const char *const *names;
	size_t count;
} enum_table;

#define ENUM_TABLE(a) { (a), COUNT(a) }

static const enum_table verdict_table = ENUM_TABLE(verdict_names);
static const enum_table approval_result_table = ENUM_TABLE(approval_result_names);
static const enum_table outcome_status_table = ENUM_TABLE(outcome_status_names);
static const enum_table recovery_mode_table = ENUM_TABLE(recovery_mode_names);
static const enum_table policy_format_table = ENUM_TABLE(policy_format_names);
static const enum_table platform_table = ENUM_TABLE(platform_names);
static const enum_table recovery_action_table = ENUM_TABLE(recovery_action_names);
static const enum_table reviewer_table = ENUM_TABLE(reviewer_names);

static const char *enum_name(const enum_table *t, int v)
{
	if (v == 0)
		return "unspecified";
	if (v < 0 || (size_t)v >= t->count)
		return NULL;
	return t->names[v];
}

const char *docket_verdict_name(Docket__V1__Verdict v)
{
	return enum_name(&verdict_table, (int)v);
}

const char *docket_approval_result_name(Docket__V1__ApprovalResult v)
{
	return enum_name(&approval_result_table, (int)v);
}

const char *docket_outcome_status_name(Docket__V1__OutcomeStatus v)
{
	return enum_name(&outcome_status_table, (int)v);
}

const char *docket_recovery_mode_name(Docket__V1__RecoveryMode v)
{
	return enum_name(&recovery_mode_table, (int)v);
}

const char *docket_policy_format_name(Docket__V1__PolicyFormat v)
{
	return enum_name(&policy_format_table, (int)v);
}

const char *docket_platform_name(Docket__V1__Platform v)
{
	return enum_name(&platform_table, (int)v);
}

const char *docket_recovery_action_name(Docket__V1__RecoveryActionKind v)
{
	return enum_name(&recovery_action_table, (int)v);
}

/* ------------------------------------------------------------------ */
/* Event types.                                                        */

enum presence { OPTIONAL, REQUIRED, FORBIDDEN };

static const char *const runtime_started_keys[] = { "runtime", "uid", NULL };
static const char *const session_opened_keys[] = {
	"runtime", "platform", "cwd", "workspace_roots", "env", "parent", "labels", NULL,
};
static const char *const policy_revised_keys[] = {
	"revision", "format", "policy", "actor", "reason", NULL,
};
static const char *const tool_intent_keys[] = {
	"tool", "args", "recovery", "decision", NULL,
};
static const char *const approval_requested_keys[] = {
	"request", "reviewer", "prompt", "risk", "scope", "decision", NULL,
};
static const char *const approval_settled_keys[] = {
	"request", "result", "actor", "reason", "decision", NULL,
};
static const char *const tool_dispatched_keys[] = { "attempt", "token", "policy_revision", "verdict", NULL };
static const char *const tool_completed_keys[] = {
	"status", "exit_code", "output", "duration_ms", "error", NULL,
};
static const char *const session_closed_keys[] = { "reason", NULL };
static const char *const recovery_action_keys[] = { "action", "detail", "decision", NULL };
static const char *const ledger_incident_keys[] = { "kind", "file", "entry", "error", NULL };

static const char *const common_keys[] = {
	"type", "time", "epoch", "session", "invocation", "turn", "provenance", NULL,
};
static const char *const decision_keys[] = {
	"verdict", "source", "reasons", "rules", "policy_revision", NULL,
};
static const char *const risk_keys[] = { "level", "category", "summary", NULL };
static const char *const provenance_keys[] = { "file", "line", NULL };

typedef struct event_kind {
	const char *name;
	Docket__V1__Event__BodyCase body;
	enum presence session;
	enum presence invocation;
	const char *const *keys;
} event_kind;

static const event_kind event_kinds[] = {
	{ "runtime.started", DOCKET__V1__EVENT__BODY_RUNTIME_STARTED, FORBIDDEN, FORBIDDEN, runtime_started_keys },
	{ "session.opened", DOCKET__V1__EVENT__BODY_SESSION_OPENED, REQUIRED, FORBIDDEN, session_opened_keys },
	{ "policy.revised", DOCKET__V1__EVENT__BODY_POLICY_REVISED, REQUIRED, FORBIDDEN, policy_revised_keys },
	{ "tool.intent", DOCKET__V1__EVENT__BODY_TOOL_INTENT, REQUIRED, REQUIRED, tool_intent_keys },
	{ "approval.requested", DOCKET__V1__EVENT__BODY_APPROVAL_REQUESTED, REQUIRED, REQUIRED, approval_requested_keys },
	{ "approval.settled", DOCKET__V1__EVENT__BODY_APPROVAL_SETTLED, REQUIRED, REQUIRED, approval_settled_keys },
	{ "tool.dispatched", DOCKET__V1__EVENT__BODY_TOOL_DISPATCHED, REQUIRED, REQUIRED, tool_dispatched_keys },
	{ "tool.completed", DOCKET__V1__EVENT__BODY_TOOL_COMPLETED, REQUIRED, REQUIRED, tool_completed_keys },
	{ "session.closed", DOCKET__V1__EVENT__BODY_SESSION_CLOSED, REQUIRED, FORBIDDEN, session_closed_keys },
	{ "recovery.action", DOCKET__V1__EVENT__BODY_RECOVERY_ACTION, REQUIRED, REQUIRED, recovery_action_keys },
	{ "ledger.incident", DOCKET__V1__EVENT__BODY_LEDGER_INCIDENT, FORBIDDEN, FORBIDDEN, ledger_incident_keys },
};

static const event_kind *kind_by_body(Docket__V1__Event__BodyCase body)
{
	for (size_t i = 0; i < COUNT(event_kinds); i++)
		if (event_kinds[i].body == body)
			return &event_kinds[i];
	return NULL;
}

const char *docket_event_type(const docket_event *ev)
{
	const event_kind *k = ev ? kind_by_body(ev->body_case) : NULL;

	return k ? k->name : "unknown";
}

void docket_event_free(docket_event *ev)
{
	if (ev)
		docket__v1__event__free_unpacked(ev, &docket_pb_allocator);
}

/* ------------------------------------------------------------------ */
/* RFC 3339 UTC timestamps.                                            */

static int digits(const char *s, size_t n, int *out)
{
	int v = 0;

	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

static int days_in_month(int year, int month)
{
	static const int days[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };

	if (month == 2 && ((year % 4 == 0 && year % 100 != 0) || year % 400 == 0))
		return 29;
	return days[month - 1];
}

/*
 * YYYY-MM-DDTHH:MM:SS[.F{1,9}]Z, upper-case T and Z only: docket writes UTC
 * and keeps times as given, so one spelling keeps them comparable as strings.
 */
int docket_time_valid(const char *s)
{
	int year, month, day, hour, min, sec;
	size_t i;

	if (!s || strnlen(s, 21) < 20)
		return 0;
	if (digits(s, 4, &year) < 0 || s[4] != '-' ||
	    digits(s + 5, 2, &month) < 0 || s[7] != '-' ||
	    digits(s + 8, 2, &day) < 0 || s[10] != 'T' ||
	    digits(s + 11, 2, &hour) < 0 || s[13] != ':' ||
	    digits(s + 14, 2, &min) < 0 || s[16] != ':' ||
	    digits(s + 17, 2, &sec) < 0)
		return 0;
	if (month < 1 || month > 12 || day < 1 || day > days_in_month(year, month) ||
	    hour > 23 || min > 59 || sec > 60)
		return 0;
	i = 19;
	if (s[i] == '.') {
		size_t start = ++i;

		while (s[i] >= '0' && s[i] <= '9' && i - start < 10)
			i++;
		if (i == start || i - start > 9)
			return 0;
	}
	return s[i] == 'Z' && s[i + 1] == '\0';
}

/* ------------------------------------------------------------------ */
/* from_json                                                           */

typedef struct parse_ctx {
	const char *type; /* event type for messages, "event" before it is known */
	const docket_jv_ops *ops; /* the parser the JSON came from (util/jv.h) */
} parse_ctx;

typedef docket_jv jv;

#define PRESENT(v) ((v).p != NULL)

static jv jget(const parse_ctx *c, jv obj, const char *key)
{
	return c->ops->get(obj, key);
}

static docket_jv_type jtype(const parse_ctx *c, jv v)
{
	return c->ops->type(v);
}

static const char *jstring(const parse_ctx *c, jv v, size_t *len)
{
	return c->ops->string(v, len);
}

/* A printable, bounded rendering of outside text for error messages. */
static const char *shown(char *out, size_t size, const char *s, size_t len)
{
	size_t o = 0;

	for (size_t i = 0; i < len && o + 4 < size; i++) {
		unsigned char c = (unsigned char)s[i];

		out[o++] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
	}
	if (o + 4 >= size && len > o) {
		/* cut at a character boundary: messages end up in JSON, which wants UTF-8 */
		while (o > 0 && ((unsigned char)out[o - 1] & 0xc0) == 0x80)
			o--;
		if (o > 0 && (unsigned char)out[o - 1] >= 0xc0)
			o--;
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
	return out;
}

static int field_error(const parse_ctx *c, const char *prefix, const char *key,
		       const char *fmt, ...) DOCKET_PRINTF(4, 5);

static int field_error(const parse_ctx *c, const char *prefix, const char *key,
		       const char *fmt, ...)
{
	char detail[512];
	char name[80];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	shown(name, sizeof(name), key, strlen(key));
	return docket_error_set(DOCKET_EINVALID, "%s: field \"%s%s%s\": %s", c->type,
				prefix ? prefix : "", prefix ? "." : "", name, detail);
}

static int missing(const parse_ctx *c, const char *prefix, const char *key)
{
	return docket_error_set(DOCKET_EINVALID, "%s: missing required field \"%s%s%s\"",
				c->type, prefix ? prefix : "", prefix ? "." : "", key);
}

static int wrong_type(const parse_ctx *c, const char *prefix, const char *key,
		      const char *expected, jv v)
{
	return field_error(c, prefix, key, "expected %s, got %s", expected,
			   docket_jv_type_name(jtype(c, v)));
}

/* Every key of `obj` must be in one of the NULL-terminated lists. */
static int check_keys(const parse_ctx *c, jv obj, const char *prefix,
		      const char *const *a, const char *const *b)
{
	docket_jv_iter it;
	const char *key;
	jv v;

	for (c->ops->iter(obj, &it); c->ops->next(&it, &key, &v);) {
		bool known = false;
		char name[80];

		for (const char *const *k = a; !known && k && *k; k++)
			known = strcmp(*k, key) == 0;
		for (const char *const *k = b; !known && k && *k; k++)
			known = strcmp(*k, key) == 0;
		if (!known)
			return docket_error_set(DOCKET_EINVALID, "%s: unknown field \"%s%s%s\"",
						c->type, prefix ? prefix : "", prefix ? "." : "",
						shown(name, sizeof(name), key, strlen(key)));
	}
	return 0;
}

enum string_kind {
	TEXT,     /* any string up to 16 MiB, may be empty */
	NONEMPTY, /* 1 byte .. 16 MiB */
	ID,       /* 1 .. 256 bytes, no control characters */
};

/*
 * Where an id holds a character that would spoof a terminal or log line:
 * C0, DEL, C1 (U+0080..U+009F), the line and paragraph separators
 * U+2028/U+2029, and the bidi controls U+061C, U+200E/F, U+202A..U+202E,
 * U+2066..U+2069. Returns the byte offset, or (size_t)-1 when it has none.
 * `s` is valid UTF-8 (jansson checked it).
 */
size_t docket_id_unsafe_char(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;

	for (size_t i = 0; i < len; i++) {
		unsigned char ch = u[i];

		if (ch < 0x20 || ch == 0x7f)
			return i;
		if (ch == 0xc2 && i + 1 < len && u[i + 1] >= 0x80 && u[i + 1] <= 0x9f)
			return i;
		if (ch == 0xd8 && i + 1 < len && u[i + 1] == 0x9c)
			return i; /* U+061C arabic letter mark */
		if (ch == 0xe2 && i + 2 < len) {
			unsigned cp = 0x2000u | ((u[i + 1] & 0x3fu) << 6) | (u[i + 2] & 0x3fu);

			if (u[i + 1] >= 0x80 && u[i + 1] <= 0x81 &&
			    (cp == 0x200e || cp == 0x200f || (cp >= 0x2028 && cp <= 0x202e) ||
			     (cp >= 0x2066 && cp <= 0x2069)))
				return i;
		}
	}
	return (size_t)-1;
}

/* Check one JSON string value; `what` is "" or " item N" for messages. */
static int check_string(const parse_ctx *c, const char *prefix, const char *key,
			const char *what, jv v, enum string_kind kind)
{
	const char *s;
	size_t len;

	if (jtype(c, v) != DOCKET_JV_STRING)
		return field_error(c, prefix, key, "%sexpected string, got %s", what,
				   docket_jv_type_name(jtype(c, v)));
	s = jstring(c, v, &len);
	if (strlen(s) != len)
		return field_error(c, prefix, key, "%sstring contains NUL (\\u0000)", what);
	if (kind == ID) {
		if (len == 0 || len > ID_MAX_LEN)
			return field_error(c, prefix, key, "%sid must be 1..%d bytes, got %zu",
					   what, ID_MAX_LEN, len);
		size_t at = docket_id_unsafe_char(s, len);

		if (at != (size_t)-1)
			return field_error(c, prefix, key,
					   "%sid contains a control, line-separator or bidi character at byte %zu "
					   "(ids are shown by `docket log`; they must not reorder or break lines)",
					   what, at);
	} else {
		if (kind == NONEMPTY && len == 0)
			return field_error(c, prefix, key, "%smust not be empty", what);
		if (len > TEXT_MAX_LEN)
			return field_error(c, prefix, key, "%sstring longer than %zu bytes",
					   what, TEXT_MAX_LEN);
	}
	return 0;
}

/* Copy a checked JSON string into a tree field (empty stays the default). */
static int store_string(const parse_ctx *c, char **field, jv v)
{
	size_t len;
	const char *s = jstring(c, v, &len);
	char *copy;

	if (len == 0)
		return 0;
	if (!(copy = docket_strndup(s, len)))
		return docket_error_set_oom();
	*field = copy;
	return 0;
}

static int get_string(const parse_ctx *c, jv obj, const char *prefix,
		      const char *key, enum string_kind kind, bool required, char **field)
{
	jv v = jget(c, obj, key);
	int error;

	if (!PRESENT(v))
		return required ? missing(c, prefix, key) : 0;
	if ((error = check_string(c, prefix, key, "", v, kind)) < 0)
		return error;
	return store_string(c, field, v);
}

static int get_int(const parse_ctx *c, jv obj, const char *prefix,
		   const char *key, json_int_t min, json_int_t max, bool required,
		   bool *present, json_int_t *out)
{
	jv v = jget(c, obj, key);
	json_int_t n;

	*present = false;
	if (!PRESENT(v))
		return required ? missing(c, prefix, key) : 0;
	if (jtype(c, v) != DOCKET_JV_INTEGER)
		return wrong_type(c, prefix, key, "integer", v);
	n = c->ops->integer(v);
	if (n < min || n > max)
		return field_error(c, prefix, key, "%" JSON_INTEGER_FORMAT " out of range %"
				   JSON_INTEGER_FORMAT "..%" JSON_INTEGER_FORMAT, n, min, max);
	*present = true;
	*out = n;
	return 0;
}

static int get_enum(const parse_ctx *c, jv obj, const char *prefix,
		    const char *key, const enum_table *t, bool required, int *out)
{
	jv v = jget(c, obj, key);
	char expected[256];
	char value[80];
	size_t used = 0, len;
	const char *s;
	int error;

	*out = 0;
	if (!PRESENT(v))
		return required ? missing(c, prefix, key) : 0;
	if ((error = check_string(c, prefix, key, "", v, TEXT)) < 0)
		return error;
	s = jstring(c, v, &len);
	for (size_t i = 1; i < t->count; i++) {
		if (strcmp(s, t->names[i]) == 0) {
			*out = (int)i;
			return 0;
		}
	}
	expected[0] = '\0';
	for (size_t i = 1; i < t->count; i++) {
		int n = snprintf(expected + used, sizeof(expected) - used, "%s%s",
				 i > 1 ? ", " : "", t->names[i]);

		if (n < 0 || (size_t)n >= sizeof(expected) - used)
			break;
		used += (size_t)n;
	}
	return field_error(c, prefix, key, "unknown value \"%s\" (expected %s)",
			   shown(value, sizeof(value), s, len), expected);
}

/* Optional array of strings into a repeated string field. */
static int get_string_array(const parse_ctx *c, jv obj, const char *prefix,
			    const char *key, char ***field, size_t *n_field)
{
	jv v = jget(c, obj, key);
	docket_jv_iter it;
	const char *none;
	size_t count, i;
	jv item;
	int error;

	if (!PRESENT(v))
		return 0;
	if (jtype(c, v) != DOCKET_JV_ARRAY)
		return wrong_type(c, prefix, key, "array", v);
	count = c->ops->size(v);
	if (count > ARRAY_MAX_ITEMS)
		return field_error(c, prefix, key, "more than %d items", ARRAY_MAX_ITEMS);
	if (count == 0)
		return 0;
	for (c->ops->iter(v, &it), i = 0; c->ops->next(&it, &none, &item); i++) {
		char what[40];

		snprintf(what, sizeof(what), "item %zu: ", i);
		if ((error = check_string(c, prefix, key, what, item, TEXT)) < 0)
			return error;
	}
	if (!(*field = docket_malloc(count * sizeof(char *))))
		return docket_error_set_oom();
	for (c->ops->iter(v, &it), i = 0; c->ops->next(&it, &none, &item); i++) {
		size_t len;
		const char *s = jstring(c, item, &len);
		char *copy = docket_strndup(s, len);

		if (!copy)
			return docket_error_set_oom();
		(*field)[i] = copy;
		*n_field = i + 1;
	}
	return 0;
}

/* Optional object of string values into a repeated KeyValue, in order. */
static int get_string_map(const parse_ctx *c, jv obj, const char *prefix,
			  const char *key, Docket__V1__KeyValue ***field, size_t *n_field)
{
	jv v = jget(c, obj, key);
	docket_jv_iter it;
	const char *k;
	size_t count, i;
	jv item;
	int error;

	if (!PRESENT(v))
		return 0;
	if (jtype(c, v) != DOCKET_JV_OBJECT)
		return wrong_type(c, prefix, key, "object", v);
	count = c->ops->size(v);
	if (count > ARRAY_MAX_ITEMS)
		return field_error(c, prefix, key, "more than %d entries", ARRAY_MAX_ITEMS);
	if (count == 0)
		return 0;
	for (c->ops->iter(v, &it); c->ops->next(&it, &k, &item);) {
		char what[120];
		char name[80];

		snprintf(what, sizeof(what), "entry \"%s\": ", shown(name, sizeof(name), k, strlen(k)));
		if (strlen(k) > TEXT_MAX_LEN)
			return field_error(c, prefix, key, "%skey too long", what);
		if ((error = check_string(c, prefix, key, what, item, TEXT)) < 0)
			return error;
	}
	if (!(*field = docket_malloc(count * sizeof(Docket__V1__KeyValue *))))
		return docket_error_set_oom();
	i = 0;
	for (c->ops->iter(v, &it); c->ops->next(&it, &k, &item);) {
		Docket__V1__KeyValue *kv = docket_malloc(sizeof(*kv));

		if (!kv)
			return docket_error_set_oom();
		docket__v1__key_value__init(kv);
		(*field)[i] = kv;
		*n_field = ++i;
		if (*k && !(kv->key = docket_strdup(k)))
			return docket_error_set_oom();
		if ((error = store_string(c, &kv->value, item)) < 0)
			return error;
	}
	return 0;
}

/* A JSON value stored as its compact text (args, policy). */
static int store_json_text(const parse_ctx *c, const char *key, jv v, char **field)
{
	docket_buf buf = DOCKET_BUF_INIT;
	int error;

	if ((error = c->ops->dump(&buf, v)) < 0) {
		docket_buf_dispose(&buf);
		return error;
	}
	if (buf.len > TEXT_MAX_LEN) {
		docket_buf_dispose(&buf);
		return field_error(c, NULL, key, "serialised value longer than %zu bytes",
				   TEXT_MAX_LEN);
	}
	if (!buf.ptr)
		return docket_error_set_oom();
	*field = buf.ptr; /* docket_buf memory is docket_malloc'd: the tree owns it now */
	return 0;
}

static int parse_decision(const parse_ctx *c, jv v, const char *key,
			  Docket__V1__Decision **field)
{
	Docket__V1__Decision *d;
	json_int_t n = 0;
	bool present;
	int verdict;
	int error;

	if (jtype(c, v) != DOCKET_JV_OBJECT)
		return wrong_type(c, NULL, key, "object", v);
	if ((error = check_keys(c, v, key, decision_keys, NULL)) < 0)
		return error;
	if (!(d = docket_malloc(sizeof(*d))))
		return docket_error_set_oom();
	docket__v1__decision__init(d);
	*field = d;
	if ((error = get_enum(c, v, key, "verdict", &verdict_table, true, &verdict)) < 0)
		return error;
	d->verdict = (Docket__V1__Verdict)verdict;
	if ((error = get_string(c, v, key, "source", TEXT, false, &d->source)) < 0 ||
	    (error = get_string_array(c, v, key, "reasons", &d->reasons, &d->n_reasons)) < 0 ||
	    (error = get_string_array(c, v, key, "rules", &d->rules, &d->n_rules)) < 0 ||
	    (error = get_int(c, v, key, "policy_revision", 0, UINT32_MAX, false, &present, &n)) < 0)
		return error;
	d->policy_revision = (uint32_t)n;
	return 0;
}

static int parse_runtime_started(const parse_ctx *c, jv obj, docket_event *ev)
{
	Docket__V1__RuntimeStarted *b = docket_malloc(sizeof(*b));
	json_int_t n = 0;
	bool present;
	int error;

	if (!b)
		return docket_error_set_oom();
	docket__v1__runtime_started__init(b);
	ev->runtime_started = b;
	ev->body_case = DOCKET__V1__EVENT__BODY_RUNTIME_STARTED;
	if ((error = get_string(c, obj, NULL, "runtime", NONEMPTY, true, &b->runtime)) < 0 ||
	    (error = get_int(c, obj, NULL, "uid", 0, (json_int_t)UINT32_MAX - 1, false, &present, &n)) < 0)
		return error;
	b->uid = (uint32_t)n;
	b->uid_set = present;
	return 0;
}

static int parse_session_opened(const parse_ctx *c, jv obj, docket_event *ev)
{
	Docket__V1__SessionOpened *b = docket_malloc(sizeof(*b));
	int platform;
	int error;

	if (!b)
		return docket_error_set_oom();
	docket__v1__session_opened__init(b);
	ev->session_opened = b;
	ev->body_case = DOCKET__V1__EVENT__BODY_SESSION_OPENED;
	if ((error = get_string(c, obj, NULL, "runtime", TEXT, false, &b->runtime)) < 0 ||
	    (error = get_enum(c, obj, NULL, "platform", &platform_table, false, &platform)) < 0)
		return error;
	b->platform = (Docket__V1__Platform)platform;
	if ((error = get_string(c, obj, NULL, "cwd", TEXT, false, &b->cwd)) < 0 ||
	    (error = get_string_array(c, obj, NULL, "workspace_roots", &b->workspace_roots,
				      &b->n_workspace_roots)) < 0 ||
	    (error = get_string_map(c, obj, NULL, "env", &b->env, &b->n_env)) < 0 ||
	    (error = get_string(c, obj, NULL, "parent", ID, false, &b->parent)) < 0 ||
	    (error = get_string_map(c, obj, NULL, "labels", &b->labels, &b->n_labels)) < 0)
		return error;
	return 0;
}

static int parse_policy_revised(const parse_ctx *c, jv obj, docket_event *ev)
{
	Docket__V1__PolicyRevised *b = docket_malloc(sizeof(*b));
	jv policy;
	json_int_t revision = 0;
	bool present;
	int format;
	int error;

	if (!b)
		return docket_error_set_oom();
	docket__v1__policy_revised__init(b);
	ev->policy_revised = b;
	ev->body_case = DOCKET__V1__EVENT__BODY_POLICY_REVISED;
	if ((error = get_int(c, obj, NULL, "revision", 1, UINT32_MAX, true, &present, &revision)) < 0)
		return error;
	b->revision = (uint32_t)revision;
	if ((error = get_enum(c, obj, NULL, "format", &policy_format_table, true, &format)) < 0)
		return error;
	b->format = (Docket__V1__PolicyFormat)format;
	if (!PRESENT(policy = jget(c, obj, "policy")))
		return missing(c, NULL, "policy");
	if (jtype(c, policy) == DOCKET_JV_NULL)
		return field_error(c, NULL, "policy", "must not be null");
	if ((error = store_json_text(c, "policy", policy, &b->policy_json)) < 0 ||
	    (error = get_string(c, obj, NULL, "actor", TEXT, false, &b->actor)) < 0 ||
	    (error = get_string(c, obj, NULL, "reason", TEXT, false, &b->reason)) < 0)
		return error;
	return 0;
}

static int parse_tool_intent(const parse_ctx *c, jv obj, docket_event *ev)
{
	Docket__V1__ToolIntent *b = docket_malloc(sizeof(*b));
	jv args, decision;
	int recovery;
	int error;

	if (!b)
		return docket_error_set_oom();
	docket__v1__tool_intent__init(b);
	ev->tool_intent = b;
	ev->body_case = DOCKET__V1__EVENT__BODY_TOOL_INTENT;
	if ((error = get_string(c, obj, NULL, "tool", NONEMPTY, true, &b->tool)) < 0)
		return error;
	if (PRESENT(args = jget(c, obj, "args"))) {
		if (jtype(c, args) != DOCKET_JV_OBJECT)
			return wrong_type(c, NULL, "args", "object", args);
		if ((error = store_json_text(c, "args", args, &b->args_json)) < 0)
			return error;
	} else if (!(b->args_json = docket_strdup("{}"))) {
		return docket_error_set_oom();
	}
	if ((error = get_enum(c, obj, NULL, "recovery", &recovery_mode_table, false, &recovery)) < 0)
		return error;
	b->recovery = (Docket__V1__RecoveryMode)recovery;
	if (PRESENT(decision = jget(c, obj, "decision")) &&
	    (error = parse_decision(c, decision, "decision", &b->decision)) < 0)
		return error;
	return 0;
}

static int parse_approval_requested(const parse_ctx *c, jv obj, docket_event *ev)
{
	Docket__V1__ApprovalRequested *b = docket_malloc(sizeof(*b));
	jv risk;
	int reviewer;
	int error;

	if (!b)
		return docket_error_set_oom();
	docket__v1__approval_requested__init(b);
	ev->approval_requested = b;
	ev->body_case = DOCKET__V1__EVENT__BODY_APPROVAL_REQUESTED;
	if ((error = get_string(c, obj, NULL, "request", ID, true, &b->request)) < 0 ||
	    (error = get_enum(c, obj, NULL, "reviewer", &reviewer_table, false, &reviewer)) < 0)
		return error;
	if (reviewer && !(b->reviewer = docket_strdup(reviewer_names[reviewer])))
		return docket_error_set_oom();
	if ((error = get_string(c, obj, NULL, "prompt", TEXT, false, &b->prompt)) < 0)
		return error;
	if (PRESENT(risk = jget(c, obj, "risk"))) {
		Docket__V1__Risk *r;

		if (jtype(c, risk) != DOCKET_JV_OBJECT)
			return wrong_type(c, NULL, "risk", "object", risk);
		if ((error = check_keys(c, risk, "risk", risk_keys, NULL)) < 0)
			return error;
		if (!(r = docket_malloc(sizeof(*r))))
			return docket_error_set_oom();
		docket__v1__risk__init(r);
		b->risk = r;
		if ((error = get_string(c, risk, "risk", "level", TEXT, false, &r->level)) < 0 ||
		    (error = get_string(c, risk, "risk", "category", TEXT, false, &r->category)) < 0 ||
		    (error = get_string(c, risk, "risk", "summary", TEXT, false, &r->summary)) < 0)
			return error;
	}
	if ((error = get_string_array(c, obj, NULL, "scope", &b->scope, &b->n_scope)) < 0)
		return error;
	if (PRESENT(risk = jget(c, obj, "decision")))
		return parse_decision(c, risk, "decision", &b->decision);
	return 0;
}

static int parse_approval_settled(const parse_ctx *c, jv obj, docket_event *ev)
{
	Docket__V1__ApprovalSettled *b = docket_malloc(sizeof(*b));
	jv decision;
	int result;
	int error;

	if (!b)
		return docket_error_set_oom();
	docket__v1__approval_settled__init(b);
	ev->approval_settled = b;
	ev->body_case = DOCKET__V1__EVENT__BODY_APPROVAL_SETTLED;
	if ((error = get_string(c, obj, NULL, "request", ID, true, &b->request)) < 0 ||
	    (error = get_enum(c, obj, NULL, "result", &approval_result_table, true, &result)) < 0)
		return error;
	b->result = (Docket__V1__ApprovalResult)result;
	if ((error = get_string(c, obj, NULL, "actor", TEXT, false, &b->actor)) < 0 ||
	    (error = get_string(c, obj, NULL, "reason", TEXT, false, &b->reason)) < 0)
		return error;
	decision = jget(c, obj, "decision");
	if (b->result == DOCKET__V1__APPROVAL_RESULT__APPROVAL_RESULT_SUPERSEDED) {
		if (!PRESENT(decision))
			return docket_error_set(DOCKET_EINVALID,
						"%s: missing required field \"decision\" "
						"(required with result superseded)", c->type);
	} else if (PRESENT(decision)) {
		return field_error(c, NULL, "decision",
				   "not allowed with result \"%s\" (only with superseded)",
				   approval_result_names[result]);
	}
	if (PRESENT(decision) && (error = parse_decision(c, decision, "decision", &b->decision)) < 0)
		return error;
	return 0;
}

static int parse_tool_dispatched(const parse_ctx *c, jv obj, docket_event *ev)
{
	Docket__V1__ToolDispatched *b = docket_malloc(sizeof(*b));
	json_int_t attempt = 0, revision = 0;
	bool present;
	int verdict;
	int error;

	if (!b)
		return docket_error_set_oom();
	docket__v1__tool_dispatched__init(b);
	ev->tool_dispatched = b;
	ev->body_case = DOCKET__V1__EVENT__BODY_TOOL_DISPATCHED;
	if ((error = get_int(c, obj, NULL, "attempt", 1, UINT32_MAX, false, &present, &attempt)) < 0 ||
	    (error = get_int(c, obj, NULL, "policy_revision", 1, UINT32_MAX, false, &present, &revision)) < 0 ||
	    (error = get_enum(c, obj, NULL, "verdict", &verdict_table, false, &verdict)) < 0)
		return error;
	b->attempt = (uint32_t)attempt;
	b->policy_revision = (uint32_t)revision;
	b->verdict = (Docket__V1__Verdict)verdict;
	return get_string(c, obj, NULL, "token", TEXT, false, &b->token);
}

static int parse_tool_completed(const parse_ctx *c, jv obj, docket_event *ev)
{
	Docket__V1__ToolCompleted *b = docket_malloc(sizeof(*b));
	json_int_t n = 0;
	bool present;
	int status;
	int error;

	if (!b)
		return docket_error_set_oom();
	docket__v1__tool_completed__init(b);
	ev->tool_completed = b;
	ev->body_case = DOCKET__V1__EVENT__BODY_TOOL_COMPLETED;
	if ((error = get_enum(c, obj, NULL, "status", &outcome_status_table, true, &status)) < 0)
		return error;
	b->status = (Docket__V1__OutcomeStatus)status;
	if ((error = get_int(c, obj, NULL, "exit_code", JINT_MIN, JINT_MAX,
			     false, &present, &n)) < 0)
		return error;
	b->exit_code = (int64_t)n;
	b->exit_code_set = present;
	if ((error = get_string(c, obj, NULL, "output", TEXT, false, &b->output)) < 0 ||
	    (error = get_int(c, obj, NULL, "duration_ms", 0, JINT_MAX, false, &present, &n)) < 0)
		return error;
	b->duration_ms = present ? (uint64_t)n : 0;
	b->duration_ms_set = present;
	return get_string(c, obj, NULL, "error", TEXT, false, &b->error);
}

static int parse_session_closed(const parse_ctx *c, jv obj, docket_event *ev)
{
	Docket__V1__SessionClosed *b = docket_malloc(sizeof(*b));

	if (!b)
		return docket_error_set_oom();
	docket__v1__session_closed__init(b);
	ev->session_closed = b;
	ev->body_case = DOCKET__V1__EVENT__BODY_SESSION_CLOSED;
	return get_string(c, obj, NULL, "reason", TEXT, false, &b->reason);
}

static int parse_recovery_action(const parse_ctx *c, jv obj, docket_event *ev)
{
	Docket__V1__RecoveryAction *b = docket_malloc(sizeof(*b));
	jv decision;
	int action;
	int error;

	if (!b)
		return docket_error_set_oom();
	docket__v1__recovery_action__init(b);
	ev->recovery_action = b;
	ev->body_case = DOCKET__V1__EVENT__BODY_RECOVERY_ACTION;
	if ((error = get_enum(c, obj, NULL, "action", &recovery_action_table, true, &action)) < 0)
		return error;
	b->action = (Docket__V1__RecoveryActionKind)action;
	if ((error = get_string(c, obj, NULL, "detail", TEXT, false, &b->detail)) < 0)
		return error;
	/* evaluate records the verdict the current policy gives (DESIGN §6) */
	decision = jget(c, obj, "decision");
	if (PRESENT(decision) && b->action != DOCKET__V1__RECOVERY_ACTION_KIND__RECOVERY_ACTION_EVALUATE)
		return field_error(c, NULL, "decision", "only allowed with action \"evaluate\"");
	return PRESENT(decision) ? parse_decision(c, decision, "decision", &b->decision) : 0;
}

static int parse_presence(const parse_ctx *c, jv obj, const char *key,
			  enum presence rule, char **field)
{
	if (rule == FORBIDDEN) {
		if (PRESENT(jget(c, obj, key)))
			return field_error(c, NULL, key, "not allowed on %s", c->type);
		return 0;
	}
	return get_string(c, obj, NULL, key, ID, rule == REQUIRED, field);
}

static int parse_common(const parse_ctx *c, jv obj, const event_kind *kind,
			docket_event *ev)
{
	jv v;
	json_int_t n = 0;
	bool present;
	int error;

	if (PRESENT(v = jget(c, obj, "time"))) {
		char shown_time[80];
		const char *s;
		size_t len;

		if ((error = check_string(c, NULL, "time", "", v, TEXT)) < 0)
			return error;
		s = jstring(c, v, &len);
		if (!docket_time_valid(s))
			return field_error(c, NULL, "time",
					   "\"%s\" is not an RFC 3339 UTC time (e.g. 2025-11-17T15:30:28Z)",
					   shown(shown_time, sizeof(shown_time), s, len));
		if ((error = store_string(c, &ev->time, v)) < 0)
			return error;
	}
	if ((error = get_int(c, obj, NULL, "epoch", 1, JINT_MAX, false, &present, &n)) < 0)
		return error;
	ev->epoch = present ? (uint64_t)n : 0;
	if ((error = parse_presence(c, obj, "session", kind->session, &ev->session)) < 0 ||
	    (error = parse_presence(c, obj, "invocation", kind->invocation, &ev->invocation)) < 0 ||
	    (error = get_string(c, obj, NULL, "turn", ID, false, &ev->turn)) < 0)
		return error;
	if (PRESENT(v = jget(c, obj, "provenance"))) {
		Docket__V1__Provenance *p;

		if (jtype(c, v) != DOCKET_JV_OBJECT)
			return wrong_type(c, NULL, "provenance", "object", v);
		if ((error = check_keys(c, v, "provenance", provenance_keys, NULL)) < 0)
			return error;
		if (!(p = docket_malloc(sizeof(*p))))
			return docket_error_set_oom();
		docket__v1__provenance__init(p);
		ev->provenance = p;
		if ((error = get_string(c, v, "provenance", "file", TEXT, true, &p->file)) < 0 ||
		    (error = get_int(c, v, "provenance", "line", 0, JINT_MAX, true,
				     &present, &n)) < 0)
			return error;
		p->line = (uint64_t)n;
	}
	return 0;
}

static int parse_ledger_incident(const parse_ctx *c, jv obj, docket_event *ev)
{
	Docket__V1__LedgerIncident *b = docket_malloc(sizeof(*b));
	int error;

	if (!b)
		return docket_error_set_oom();
	docket__v1__ledger_incident__init(b);
	ev->ledger_incident = b;
	ev->body_case = DOCKET__V1__EVENT__BODY_LEDGER_INCIDENT;
	if ((error = get_string(c, obj, NULL, "kind", ID, true, &b->kind)) < 0 ||
	    (error = get_string(c, obj, NULL, "file", TEXT, false, &b->file)) < 0 ||
	    (error = get_string(c, obj, NULL, "entry", TEXT, false, &b->entry)) < 0)
		return error;
	return get_string(c, obj, NULL, "error", TEXT, false, &b->error);
}

static int parse_body(const parse_ctx *c, jv obj, const event_kind *kind,
		      docket_event *ev)
{
	switch (kind->body) {
	case DOCKET__V1__EVENT__BODY_RUNTIME_STARTED: return parse_runtime_started(c, obj, ev);
	case DOCKET__V1__EVENT__BODY_SESSION_OPENED: return parse_session_opened(c, obj, ev);
	case DOCKET__V1__EVENT__BODY_POLICY_REVISED: return parse_policy_revised(c, obj, ev);
	case DOCKET__V1__EVENT__BODY_TOOL_INTENT: return parse_tool_intent(c, obj, ev);
	case DOCKET__V1__EVENT__BODY_APPROVAL_REQUESTED: return parse_approval_requested(c, obj, ev);
	case DOCKET__V1__EVENT__BODY_APPROVAL_SETTLED: return parse_approval_settled(c, obj, ev);
	case DOCKET__V1__EVENT__BODY_TOOL_DISPATCHED: return parse_tool_dispatched(c, obj, ev);
	case DOCKET__V1__EVENT__BODY_TOOL_COMPLETED: return parse_tool_completed(c, obj, ev);
	case DOCKET__V1__EVENT__BODY_SESSION_CLOSED: return parse_session_closed(c, obj, ev);
	case DOCKET__V1__EVENT__BODY_RECOVERY_ACTION: return parse_recovery_action(c, obj, ev);
	case DOCKET__V1__EVENT__BODY_LEDGER_INCIDENT: return parse_ledger_incident(c, obj, ev);
	default: break;
	}
	return docket_error_set(DOCKET_ERROR, "event kind table out of sync");
}

static const event_kind *kind_by_name(const char *name)
{
	for (size_t i = 0; i < COUNT(event_kinds); i++)
		if (strcmp(event_kinds[i].name, name) == 0)
			return &event_kinds[i];
	return NULL;
}

/* An event from a JSON object read through `ops` (docket_event_from_json). */
static int event_from_jv(docket_event **out, const docket_jv_ops *ops, jv obj)
{
	parse_ctx c = { "event", ops };
	const event_kind *kind;
	docket_event *ev = NULL;
	const char *name;
	size_t len;
	jv type;
	int error;

	*out = NULL;
	if (jtype(&c, obj) != DOCKET_JV_OBJECT)
		return docket_error_set(DOCKET_EINVALID, "event: expected object, got %s",
					PRESENT(obj) ? docket_jv_type_name(jtype(&c, obj)) : "nothing");
	if (!PRESENT(type = jget(&c, obj, "type")))
		return missing(&c, NULL, "type");
	if ((error = check_string(&c, NULL, "type", "", type, TEXT)) < 0)
		return error;
	name = jstring(&c, type, &len);
	if (!(kind = kind_by_name(name))) {
		char shown_name[80];

		return field_error(&c, NULL, "type", "unknown event type \"%s\" (expected "
				   "runtime.started, session.opened, policy.revised, tool.intent, "
				   "approval.requested, approval.settled, tool.dispatched, "
				   "tool.completed, session.closed, recovery.action)",
				   shown(shown_name, sizeof(shown_name), name, len));
	}
	c.type = kind->name;
	if ((error = check_keys(&c, obj, NULL, common_keys, kind->keys)) < 0)
		return error;

	if (!(ev = docket_malloc(sizeof(*ev))))
		return docket_error_set_oom();
	docket__v1__event__init(ev);
	if ((error = parse_common(&c, obj, kind, ev)) < 0 ||
	    (error = parse_body(&c, obj, kind, ev)) < 0) {
		docket_event_free(ev);
		return error;
	}
	*out = ev;
	return 0;
}

int docket_event_from_json(docket_event **out, const json_t *obj)
{
	return event_from_jv(out, &docket_jv_jansson, docket_jv_of_json(obj));
}

int docket_event_from_text(docket_event **out, docket_json_tape *p, const char *text, size_t len)
{
	docket_tape_doc doc;
	jv root;

	*out = NULL;
	if (docket_json_tape_parse(p, text, len, &doc) < 0 || docket_jv_tape_root(&doc, &root) < 0 ||
	    docket_jv_tape.type(root) != DOCKET_JV_OBJECT)
		return 1;
	return event_from_jv(out, &docket_jv_tape, root);
}
