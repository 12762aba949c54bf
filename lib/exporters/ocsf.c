/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ocsf.c: events as OCSF 1.9.0 records, one JSON object per line.
 *
 * The mapping (docs/audit.md has the table):
 *   shell                    Process Activity 1007: Launch (1) at dispatch,
 *                            Terminate (2) with exit_code at the outcome
 *   apply_patch, read_file,  File System Activity 1001, one record per
 *   write_file               file: Create 1, Read 2, Update 3, Delete 4, Rename 5
 *   network, mcp, other      API Activity 6003 (activity Other, 99)
 *   approval.requested       Authorize Session 3003, activity Other (99)
 *   approval.settled         Authorize Session 3003, Assign Privileges (1)
 *   policy.revised           Authorize Session 3003, activity Other (99)
 * Calls refused before dispatch get their class's record at the outcome
 * with action Denied and disposition Blocked. Every record carries the
 * security_control profile (action_id, disposition_id), actor, time, and
 * under `unmapped` the docket seq, session, invocation and chain hash.
 *
 * And the record_integrity profile (OCSF 1.9.0): `attestation_list` holds
 * one attestation of the docket event the record comes from:
 *   uid            "<ledger id>:<seq>" (the event; several records of one
 *                  event share it)
 *   chain_uid      the ledger id; authority_uid the log origin
 *                  "docket.dev/ledger/<ledger id>" (with a ledger)
 *   fingerprint    the event's chain hash h[seq] (SHA-256, hex; the
 *                  serialization is "docket-chain": h[seq] = SHA-256(h[seq-1]
 *                  || be64(seq) || stored event bytes), docs/file-format.md)
 *   prev_event     uid "<ledger id>:<seq-1>" and its chain hash (absent for
 *                  seq 1; the fingerprint is left out when the export starts
 *                  after it)
 *   signatures     when a signed-note checkpoint covers the event (the first
 *                  one whose tree size is >= seq): Ed25519 over the C2SP
 *                  tlog-checkpoint, created_time its time, digest its tree
 *                  root (SHA-256, base64); the note itself, its index and
 *                  size are in unmapped.checkpoint, so the SIEM keeps what
 *                  `docket prove` needs to show the event is in that tree.
 * The signature is over the checkpoint (the tree head), not over this OCSF
 * record: OCSF's own serialization of the record is not what docket signs.
 */
#include <string.h>

#include "audit/checkpoint.h"
#include "docket/tlog.h"
#include "export_internal.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/tool.h"
#include "audit/note.h"
#include "util/rfc3339.h"

#define OCSF_VERSION "1.9.0"

enum {
	CLASS_FILE = 1001, CLASS_PROCESS = 1007, CLASS_AUTHORIZE = 3003, CLASS_API = 6003
};
enum {
	ACTION_ALLOWED = 1, ACTION_DENIED = 2
};
enum {
	DISP_ALLOWED = 1, DISP_BLOCKED = 2, DISP_APPROVED = 8, DISP_OTHER = 99
};

/* A signed-note checkpoint: what an attestation's signature names. */
typedef struct ocsf_checkpoint {
	uint64_t index, size;
	char time[40];
	char root_b64[48];
	char *note;
} ocsf_checkpoint;

/* A collector sink (its first two members) plus the attestation state. */
typedef struct ocsf_sink {
	collector_sink cs;        /* first: the sink and its collector */
	char origin[64];
	char prev_hash[65];       /* h[seq - 1] when the export saw it */
	uint64_t prev_seq;
	json_t *attestation;      /* of the event being exported */
	const struct ocsf_checkpoint *cp;  /* the checkpoint that covers it, or NULL */
	ocsf_checkpoint *cps;     /* in index order (so in size order) */
	size_t ncps, cap, next;   /* next: the first that may cover the event */
	int loaded;
} ocsf_sink;

static int category_of(int class_uid)
{
	return class_uid / 1000;
}

static const char *class_name(int class_uid)
{
	switch (class_uid) {
	case CLASS_FILE: return "File System Activity";
	case CLASS_PROCESS: return "Process Activity";
	case CLASS_AUTHORIZE: return "Authorize Session";
	default: return "API Activity";
	}
}

static const char *disposition_name(int id)
{
	switch (id) {
	case DISP_ALLOWED: return "Allowed";
	case DISP_BLOCKED: return "Blocked";
	case DISP_APPROVED: return "Approved";
	default: return "Other";
	}
}

/* A policy revision number as OCSF's policy.version (a string). */
static json_t *revision_string(const json_t *revision)
{
	char text[24];

	snprintf(text, sizeof(text), "%lld", (long long)json_integer_value(revision));
	return json_string(text);
}

/* Remove the null members of `obj` (absent fields stay absent in OCSF). */
static json_t *drop_nulls(json_t *obj)
{
	const char *key;
	json_t *v;
	void *tmp;

	json_object_foreach_safe(obj, tmp, key, v)
		if (json_is_null(v))
			json_object_del(obj, key);
	return obj;
}

/* The record skeleton shared by every class. */
static json_t *base_record(const export_sink *s, const json_t *ev, int class_uid, int activity_id,
			   const char *activity_name)
{
	int64_t ms = event_ms(ev);
	docket_buf uid = DOCKET_BUF_INIT;
	json_t *rec;

	if (docket_buf_printf(&uid, "%s:%lld", s->ledger_id,
			      (long long)json_integer_value(json_object_get(ev, "seq"))) < 0)
		return NULL;
	rec = json_pack("{s:i, s:s, s:i, s:s, s:i, s:s, s:i, s:I, s:i, s:s, "
			"s:{s:s, s:{s:s, s:s, s:s}, s:s, s:s, s:s, s:[s, s]}}",
			"class_uid", class_uid, "class_name", class_name(class_uid),
			"category_uid", category_of(class_uid),
			"category_name", class_uid == CLASS_AUTHORIZE ? "Identity & Access Management"
				: class_uid == CLASS_API ? "Application Activity" : "System Activity",
			"activity_id", activity_id, "activity_name", activity_name,
			"type_uid", class_uid * 100 + activity_id,
			"time", (json_int_t)(ms < 0 ? 0 : ms),
			"severity_id", 1, "severity", "Informational",
			"metadata", "version", OCSF_VERSION,
			"product", "name", "docket", "vendor_name", "docket", "version", DOCKET_EXPORT_VERSION,
			"uid", uid.ptr, "original_time", jstr(ev, "time"), "log_name", "docket",
			"profiles", "security_control", "record_integrity");
	docket_buf_dispose(&uid);
	if (rec && json_object_set_new(rec, "unmapped", drop_nulls(json_pack("{s:O?, s:O?, s:O?, s:O?, s:s, s:O?}",
			"seq", json_object_get(ev, "seq"), "session", json_object_get(ev, "session"),
			"invocation", json_object_get(ev, "invocation"), "hash", json_object_get(ev, "hash"),
			"event_type", jstr(ev, "type"), "redacted", json_object_get(ev, "redacted")))) < 0) {
		json_decref(rec);
		return NULL;
	}
	return rec;
}

/* actor: the approver or policy author when known, the agent runtime, the session. */
static json_t *actor_object(const ocsf_sink *o, const json_t *ev, const char *user)
{
	const json_t *sess = collector_session(&o->cs.c, jstr(ev, "session"));
	json_t *actor = json_pack("{s:s, s:{s:s}}", "app_name", sess && *jstr(sess, "runtime")
				  ? jstr(sess, "runtime") : "agent", "session", "uid", jstr(ev, "session"));

	if (actor && user && *user && json_object_set_new(actor, "user", json_pack("{s:s, s:s}",
			"name", user, "uid", user)) < 0) {
		json_decref(actor);
		return NULL;
	}
	return actor;
}

static int security_control(json_t *rec, int action_id, int disposition_id, int status_ok)
{
	json_t *fields = json_pack("{s:i, s:s, s:i, s:s, s:i, s:s}",
		"action_id", action_id, "action", action_id == ACTION_ALLOWED ? "Allowed" : "Denied",
		"disposition_id", disposition_id, "disposition", disposition_name(disposition_id),
		"status_id", status_ok ? 1 : 2, "status", status_ok ? "Success" : "Failure");

	if (!fields || json_object_update(rec, fields) < 0) {
		json_decref(fields);
		return docket_error_set_oom();
	}
	json_decref(fields);
	return 0;
}

static int emit(ocsf_sink *o, json_t *rec)
{
	int error;

	if (rec && o->attestation &&
	    json_object_set_new(rec, "attestation_list", json_pack("[O]", o->attestation)) < 0) {
		json_decref(rec);
		rec = NULL;
	}
	if (rec && o->cp && json_object_set_new(json_object_get(rec, "unmapped"), "checkpoint",
			json_pack("{s:I, s:I, s:s}", "index", (json_int_t)o->cp->index,
				  "tree_size", (json_int_t)o->cp->size, "note", o->cp->note)) < 0) {
		json_decref(rec);
		rec = NULL;
	}
	if (!rec)
		return docket_error_set_oom();
	error = export_json_line(o->cs.base.out, rec);
	json_decref(rec);
	o->cs.base.stats->records++;
	return error;
}

/*
 * status_detail and message: why a call was denied (its reasons, rule and
 * what the source said, audit_denial_reason), who approved it, or why it
 * failed; never null on a denial.
 */
static int reason_fields(json_t *rec, const json_t *ev, const json_t *inv, int action_id, int status_ok)
{
	docket_buf reason = DOCKET_BUF_INIT, msg = DOCKET_BUF_INIT;
	const char *type = jstr(ev, "type"), *rule;
	int settled = strcmp(type, "approval.settled") == 0, error;

	if (!inv)
		return 0;
	rule = json_string_value(json_array_get(json_object_get(inv, "rules"), 0));
	if ((error = audit_denial_reason(&reason, inv)) < 0)
		goto cleanup;
	if (action_id == ACTION_DENIED) {
		const char *by = settled || call_decision(inv) == D_REJECTED ? "a person" : "policy";

		if (!reason.len && (error = docket_buf_printf(&reason, "%s%s%s", settled ? jstr(ev, "result") : "denied",
				    *jstr(ev, "actor") ? " by " : "", jstr(ev, "actor"))) < 0)
			goto cleanup;
		error = docket_buf_printf(&msg, "%s %s denied by %s: %s", jstr(inv, "tool"), jstr(inv, "summary"),
					  by, reason.ptr);
	} else if (settled) {
		error = docket_buf_printf(&msg, "%s %s %s by %s%s%s", jstr(inv, "tool"), jstr(inv, "summary"),
					  jstr(ev, "result"), *jstr(ev, "actor") ? jstr(ev, "actor") : "an unnamed actor",
					  *jstr(ev, "reason") ? ": " : "", jstr(ev, "reason"));
	} else if (!status_ok) {
		docket_buf_clear(&reason);
		error = docket_buf_printf(&reason, "%s%s%s", jstr(ev, "status"), *jstr(ev, "error") ? ": " : "",
					  jstr(ev, "error"));
		if (error == 0)
			error = docket_buf_printf(&msg, "%s %s: %s", jstr(inv, "tool"), jstr(inv, "summary"), reason.ptr);
	} else {
		docket_buf_clear(&reason);
		error = docket_buf_printf(&msg, "%s %s", jstr(inv, "tool"), jstr(inv, "summary"));
	}
	if (error == 0 && rule)
		error = docket_buf_printf(&msg, " (rule %s)", rule);
	if (error < 0)
		goto cleanup;
	if ((reason.len && json_object_set_new(rec, "status_detail", json_string(reason.ptr)) < 0) ||
	    json_object_set_new(rec, "message", json_string(msg.ptr ? msg.ptr : "")) < 0 ||
	    (jhas(inv, "rules") && json_object_set(json_object_get(rec, "unmapped"), "rules",
						   json_object_get(inv, "rules")) < 0))
		error = docket_error_set_oom();
cleanup:
	docket_buf_dispose(&reason);
	docket_buf_dispose(&msg);
	return error;
}

/* Finish a record: actor, device (system classes), policy, control fields. */
static json_t *finish_record(ocsf_sink *o, json_t *rec, const json_t *ev, const json_t *inv,
			     const char *user, int action_id, int disposition_id, int status_ok)
{
	if (!rec)
		return NULL;
	if (json_object_set_new(rec, "actor", actor_object(o, ev, user)) < 0 ||
	    security_control(rec, action_id, disposition_id, status_ok) < 0 ||
	    reason_fields(rec, ev, inv, action_id, status_ok) < 0 ||
	    (category_of((int)json_integer_value(json_object_get(rec, "class_uid"))) == 1 &&
	     json_object_set_new(rec, "device", json_pack("{s:i, s:s}", "type_id", 0, "type", "Unknown")) < 0) ||
	    (inv && jhas(inv, "policy_revision") &&
	     json_object_set_new(rec, "policy", json_pack("{s:s, s:o}", "name", "docket session policy",
				 "version", revision_string(json_object_get(inv, "policy_revision")))) < 0)) {
		json_decref(rec);
		return NULL;
	}
	if (action_id == ACTION_DENIED &&
	    (json_object_set_new(rec, "severity_id", json_integer(3)) < 0 ||
	     json_object_set_new(rec, "severity", json_string("Medium")) < 0)) {
		json_decref(rec);
		return NULL;
	}
	return rec;
}

/* allowed / approved by a person / refused: the control's view of a call. */
static void call_disposition(const json_t *inv, int *action, int *disposition)
{
	const char *result = jstr(inv, "result");
	int dispatched = jhas(inv, "dispatches");

	*action = dispatched ? ACTION_ALLOWED : ACTION_DENIED;
	if (!dispatched)
		*disposition = DISP_BLOCKED;
	else if (strcmp(result, "approved") == 0 || strcmp(result, "approved_for_session") == 0)
		*disposition = DISP_APPROVED;
	else
		*disposition = DISP_ALLOWED;
}

static int status_ok(const json_t *ev)
{
	const char *st = jstr(ev, "status");

	return !*st || strcmp(st, "ok") == 0;
}

/* ---- tool classes ------------------------------------------------------ */

static int process_record(ocsf_sink *o, const json_t *ev, const json_t *inv, int activity)
{
	const json_t *args = json_object_get(inv, "args"), *cmd = json_object_get(args, "command");
	docket_buf line = DOCKET_BUF_INIT;
	const json_t *arg;
	json_t *rec;
	size_t i;
	int action, disposition, ok;

	json_array_foreach(cmd, i, arg)
		if (docket_buf_printf(&line, "%s%s", i ? " " : "", json_string_value(arg) ? json_string_value(arg) : "") < 0) {
			docket_buf_dispose(&line);
			return docket_error_set_oom();
		}
	call_disposition(inv, &action, &disposition);
	ok = activity == 2 ? status_ok(ev) : action == ACTION_ALLOWED;
	rec = base_record(&o->cs.base, ev, CLASS_PROCESS, activity, activity == 1 ? "Launch" : "Terminate");
	if (rec && json_object_set_new(rec, "process", json_pack("{s:s, s:s, s:s?}",
			"name", json_string_value(json_array_get(cmd, 0)) ? json_string_value(json_array_get(cmd, 0)) : DOCKET_TOOL_SHELL,
			"cmd_line", line.ptr ? line.ptr : "",
			"working_directory", json_string_value(json_object_get(args, "cwd")))) < 0)
		json_decref(rec), rec = NULL;
	if (rec && activity == 2 && jhas(ev, "exit_code") &&
	    json_object_set(rec, "exit_code", json_object_get(ev, "exit_code")) < 0)
		json_decref(rec), rec = NULL;
	docket_buf_dispose(&line);
	return emit(o, finish_record(o, rec, ev, inv, NULL, action, disposition, ok));
}

static int file_activity(const char *tool, const char *op)
{
	if (docket_tool_kind_of(tool) == DOCKET_TOOL_KIND_READ_FILE)
		return 2;
	if (docket_tool_kind_of(tool) == DOCKET_TOOL_KIND_WRITE_FILE || strcmp(op, "update") == 0)
		return 3;
	if (strcmp(op, "add") == 0)
		return 1;
	if (strcmp(op, "delete") == 0)
		return 4;
	if (strcmp(op, "move") == 0)
		return 5;
	return 99;
}

static const char *file_activity_name(int id)
{
	static const char *const names[] = { "Unknown", "Create", "Read", "Update", "Delete", "Rename" };

	return id >= 1 && id <= 5 ? names[id] : "Other";
}

static int file_record(ocsf_sink *o, const json_t *ev, const json_t *inv, const json_t *change)
{
	const char *path = jstr(change, "path"), *base = strrchr(path, '/');
	int activity = file_activity(jstr(inv, "tool"), jstr(change, "op"));
	int action, disposition;
	json_t *rec;

	call_disposition(inv, &action, &disposition);
	rec = base_record(&o->cs.base, ev, CLASS_FILE, activity, file_activity_name(activity));
	if (rec && json_object_set_new(rec, "file", json_pack("{s:s, s:s, s:i, s:s}", "path", path,
			"name", base ? base + 1 : path, "type_id", 1, "type", "Regular File")) < 0)
		json_decref(rec), rec = NULL;
	if (rec && *jstr(change, "to") && json_object_set_new(rec, "file_result",
			json_pack("{s:s, s:i}", "path", jstr(change, "to"), "type_id", 1)) < 0)
		json_decref(rec), rec = NULL;
	return emit(o, finish_record(o, rec, ev, inv, NULL, action, disposition,
				     action == ACTION_ALLOWED && status_ok(ev)));
}

static int file_records(ocsf_sink *o, const json_t *ev, const json_t *inv)
{
	const json_t *args = json_object_get(inv, "args"), *changes = json_object_get(args, "changes");
	const json_t *change;
	size_t i;
	int error = 0;

	if (!json_is_array(changes))
		return file_record(o, ev, inv, args);
	json_array_foreach(changes, i, change)
		if ((error = file_record(o, ev, inv, change)) < 0)
			break;
	return error;
}

static int api_record(ocsf_sink *o, const json_t *ev, const json_t *inv)
{
	const json_t *args = json_object_get(inv, "args");
	const char *tool = jstr(inv, "tool");
	const char *service = *jstr(args, "server") ? jstr(args, "server")
			    : *jstr(args, "host") ? jstr(args, "host") : tool;
	int action, disposition;
	json_t *rec;

	call_disposition(inv, &action, &disposition);
	rec = base_record(&o->cs.base, ev, CLASS_API, 99, "Other");
	if (rec && json_object_set_new(rec, "api", json_pack("{s:s, s:{s:s}}",
			"operation", *jstr(args, "tool") ? jstr(args, "tool") : tool,
			"service", "name", service)) < 0)
		json_decref(rec), rec = NULL;
	if (rec && json_object_set_new(rec, "src_endpoint", json_pack("{s:s}", "name", "agent runtime")) < 0)
		json_decref(rec), rec = NULL;
	if (rec && *jstr(args, "url") && json_object_set_new(rec, "dst_endpoint",
			json_pack("{s:s}", "name", jstr(args, "url"))) < 0)
		json_decref(rec), rec = NULL;
	return emit(o, finish_record(o, rec, ev, inv, NULL, action, disposition,
				     action == ACTION_ALLOWED && status_ok(ev)));
}

static int is_file_tool(const char *tool)
{
	docket_tool_kind k = docket_tool_kind_of(tool);

	return k == DOCKET_TOOL_KIND_APPLY_PATCH || k == DOCKET_TOOL_KIND_READ_FILE || k == DOCKET_TOOL_KIND_WRITE_FILE;
}

static int on_dispatched(ocsf_sink *o, const json_t *ev, const json_t *inv)
{
	return docket_tool_kind_of(jstr(inv, "tool")) == DOCKET_TOOL_KIND_SHELL ? process_record(o, ev, inv, 1) : 0;
}

static int on_completed(ocsf_sink *o, const json_t *ev, const json_t *inv)
{
	const char *tool = jstr(inv, "tool");

	if (docket_tool_kind_of(tool) == DOCKET_TOOL_KIND_SHELL)
		return process_record(o, ev, inv, jhas(inv, "dispatches") ? 2 : 1);
	if (is_file_tool(tool))
		return file_records(o, ev, inv);
	return api_record(o, ev, inv);
}

/* ---- authorisation ----------------------------------------------------- */

static int approval_record(ocsf_sink *o, const json_t *ev, const json_t *inv, int settled)
{
	const char *result = jstr(ev, "result");
	int granted = strcmp(result, "approved") == 0 || strcmp(result, "approved_for_session") == 0;
	docket_buf priv = DOCKET_BUF_INIT;
	json_t *rec;
	int disposition = !settled ? DISP_OTHER : granted ? DISP_APPROVED : DISP_BLOCKED;

	if (docket_buf_printf(&priv, "%s: %s", jstr(inv, "tool"), jstr(inv, "summary")) < 0)
		return docket_error_set_oom();
	rec = base_record(&o->cs.base, ev, CLASS_AUTHORIZE, settled ? 1 : 99,
			  settled ? "Assign Privileges" : "Approval Requested");
	if (rec && json_object_set_new(rec, "privileges", json_pack("[s]", priv.ptr)) < 0)
		json_decref(rec), rec = NULL;
	if (rec && json_object_set_new(rec, "user", json_pack("{s:s, s:s}", "name",
			settled ? jstr(ev, "actor") : jstr(ev, "reviewer"),
			"type", settled ? "Approver" : "Reviewer")) < 0)
		json_decref(rec), rec = NULL;
	if (rec && settled && jhas(inv, "wait_ms") &&
	    (json_object_set(rec, "duration", json_object_get(inv, "wait_ms")) < 0 ||
	     json_object_set_new(rec, "start_time", json_integer(event_ms(ev) -
			json_integer_value(json_object_get(inv, "wait_ms")))) < 0))
		json_decref(rec), rec = NULL;
	docket_buf_dispose(&priv);
	return emit(o, finish_record(o, rec, ev, inv, settled ? jstr(ev, "actor") : NULL,
				     !settled || granted ? ACTION_ALLOWED : ACTION_DENIED, disposition,
				     !settled || granted));
}

static int policy_record(ocsf_sink *o, const json_t *ev)
{
	json_t *rec = base_record(&o->cs.base, ev, CLASS_AUTHORIZE, 99, "Policy Revised");

	if (rec && (json_object_set_new(rec, "user", json_pack("{s:s}", "name",
			*jstr(ev, "actor") ? jstr(ev, "actor") : "unknown")) < 0 ||
		    json_object_set_new(rec, "policy", json_pack("{s:s, s:o, s:s}", "name",
			"docket session policy", "version", revision_string(json_object_get(ev, "revision")),
			"desc", jstr(ev, "reason"))) < 0))
		json_decref(rec), rec = NULL;
	return emit(o, finish_record(o, rec, ev, NULL, jstr(ev, "actor"), ACTION_ALLOWED, DISP_ALLOWED, 1));
}

/* ---- record_integrity ---------------------------------------------------- */

static json_t *fingerprint(const char *value, int base64)
{
	return json_pack("{s:i, s:s, s:i, s:s, s:i, s:s, s:s}", "algorithm_id", 3, "algorithm", "SHA-256",
			 "encoding_id", base64 ? 2 : 1, "encoding", base64 ? "Base64" : "Hex",
			 "serialization_id", 99, "serialization", base64 ? "RFC 6962" : "docket-chain",
			 "value", value);
}

static int add_checkpoint(void *ctx, const checkpoint_record *r)
{
	ocsf_sink *o = ctx;
	ocsf_checkpoint *c;
	docket_buf root = DOCKET_BUF_INIT;
	int error;

	if (r->version != 2)
		return 0;  /* a checkpoint from before signed notes: it signs no tree */
	if (o->ncps == o->cap) {
		size_t ncap = o->cap ? 2 * o->cap : 8;
		ocsf_checkpoint *grown = docket_realloc(o->cps, ncap * sizeof(*grown));

		if (!grown)
			return docket_error_set_oom();
		o->cps = grown;
		o->cap = ncap;
	}
	c = &o->cps[o->ncps];
	memset(c, 0, sizeof(*c));
	if ((error = note_b64_put(&root, r->root, sizeof(r->root))) < 0)
		goto cleanup;
	if (!(c->note = docket_malloc(strlen(r->note) + 1))) {
		error = docket_error_set_oom();
		goto cleanup;
	}
	memcpy(c->note, r->note, strlen(r->note) + 1);
	c->index = r->index;
	c->size = r->seq;
	snprintf(c->time, sizeof(c->time), "%s", r->time);
	snprintf(c->root_b64, sizeof(c->root_b64), "%s", root.ptr);
	o->ncps++;
cleanup:
	docket_buf_dispose(&root);
	return error;
}

static int load_checkpoints(ocsf_sink *o)
{
	int error;

	o->loaded = 1;
	if (!o->cs.base.ledger)
		return 0;
	if ((error = docket_tlog_origin(o->origin, o->cs.base.ledger)) < 0)
		return error;
	return checkpoint_each(o->cs.base.ledger, add_checkpoint, o);
}

/* The signed checkpoint that covers event `seq`, or NULL. */
static const ocsf_checkpoint *covering(ocsf_sink *o, uint64_t seq)
{
	while (o->next < o->ncps && o->cps[o->next].size < seq)
		o->next++;
	return o->next < o->ncps ? &o->cps[o->next] : NULL;
}

static json_t *signatures(const ocsf_checkpoint *cp)
{
	int64_t ms = 0;

	if (docket_time_parse_ms(cp->time, DOCKET_TIME_UTC_ONLY, &ms) < 0)
		ms = 0;
	return json_pack("[{s:i, s:s, s:i, s:s, s:I, s:o}]", "algorithm_id", 99, "algorithm", "Ed25519",
			 "serialization_id", 99, "serialization", "C2SP tlog-checkpoint signed note",
			 "created_time", (json_int_t)ms, "digest", fingerprint(cp->root_b64, 1));
}

/* The attestation of `ev` (and its checkpoint under unmapped, by emit). */
static int attest(ocsf_sink *o, const json_t *ev)
{
	uint64_t seq = (uint64_t)json_integer_value(json_object_get(ev, "seq"));
	const char *hash = jstr(ev, "hash");
	const ocsf_checkpoint *cp;
	docket_buf uid = DOCKET_BUF_INIT, prev = DOCKET_BUF_INIT;
	json_t *a;
	int error;

	json_decref(o->attestation);
	o->attestation = NULL;
	if (!o->loaded && (error = load_checkpoints(o)) < 0)
		return error;
	if ((error = docket_buf_printf(&uid, "%s:%llu", o->cs.base.ledger_id, (unsigned long long)seq)) < 0 ||
	    (seq > 1 && (error = docket_buf_printf(&prev, "%s:%llu", o->cs.base.ledger_id,
						    (unsigned long long)seq - 1)) < 0))
		goto cleanup;
	a = json_pack("{s:s, s:s, s:o}", "uid", uid.ptr, "chain_uid", o->cs.base.ledger_id,
		      "fingerprint", fingerprint(hash, 0));
	if (a && o->origin[0] && json_object_set_new(a, "authority_uid", json_string(o->origin)) < 0)
		json_decref(a), a = NULL;
	if (a && seq > 1 &&
	    json_object_set_new(a, "prev_event", o->prev_seq == seq - 1
		? json_pack("{s:s, s:o}", "uid", prev.ptr, "fingerprint", fingerprint(o->prev_hash, 0))
		: json_pack("{s:s}", "uid", prev.ptr)) < 0)
		json_decref(a), a = NULL;
	if (a && (cp = covering(o, seq)) && json_object_set_new(a, "signatures", signatures(cp)) < 0)
		json_decref(a), a = NULL;
	o->cp = a ? covering(o, seq) : NULL;
	if (!(o->attestation = a))
		error = docket_error_set_oom();
cleanup:
	docket_buf_dispose(&uid);
	docket_buf_dispose(&prev);
	return error;
}

static int ocsf_event(export_sink *s, const json_t *ev, int emit_it)
{
	ocsf_sink *o = (ocsf_sink *)s;
	const char *type = jstr(ev, "type");
	const json_t *inv;
	int error;

	if ((error = collector_add(&o->cs.c, ev)) < 0)
		return error;
	if (emit_it && (error = attest(o, ev)) < 0)
		return error;
	o->prev_seq = (uint64_t)json_integer_value(json_object_get(ev, "seq"));
	snprintf(o->prev_hash, sizeof(o->prev_hash), "%s", jstr(ev, "hash"));
	if (!emit_it)
		return 0;
	if (strcmp(type, "policy.revised") == 0)
		return policy_record(o, ev);
	if (!(inv = collector_invocation(&o->cs.c, ev)))
		return 0;
	if (strcmp(type, "tool.dispatched") == 0)
		return on_dispatched(o, ev, inv);
	if (strcmp(type, "tool.completed") == 0)
		return on_completed(o, ev, inv);
	if (strcmp(type, "approval.requested") == 0)
		return approval_record(o, ev, inv, 0);
	if (strcmp(type, "approval.settled") == 0)
		return approval_record(o, ev, inv, 1);
	return 0;
}

static int ocsf_finish(export_sink *s)
{
	(void)s;
	return 0;
}

static void ocsf_free(export_sink *s)
{
	ocsf_sink *o = (ocsf_sink *)s;

	for (size_t i = 0; i < o->ncps; i++)
		docket_free(o->cps[i].note);
	docket_free(o->cps);
	json_decref(o->attestation);
	collector_dispose(&o->cs.c);
	docket_free(o);
}

int sink_ocsf_new(export_sink **out, int64_t since_ms)
{
	return collector_sink_make(out, sizeof(ocsf_sink), since_ms, ocsf_event, ocsf_finish, ocsf_free);
}
