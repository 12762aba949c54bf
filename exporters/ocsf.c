/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ocsf.c: events as OCSF 1.5.0 records, one JSON object per line.
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
 */
#include <string.h>

#include "export_internal.h"
#include "util/alloc.h"
#include "util/error.h"

#define OCSF_VERSION "1.5.0"

enum {
	CLASS_FILE = 1001, CLASS_PROCESS = 1007, CLASS_AUTHORIZE = 3003, CLASS_API = 6003
};
enum {
	ACTION_ALLOWED = 1, ACTION_DENIED = 2
};
enum {
	DISP_ALLOWED = 1, DISP_BLOCKED = 2, DISP_APPROVED = 8, DISP_OTHER = 99
};

typedef collector_sink ocsf_sink;

static int nomem(void)
{
	return docket_error_set(DOCKET_ENOMEM, "out of memory");
}

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
			"s:{s:s, s:{s:s, s:s, s:s}, s:s, s:s, s:s, s:[s]}}",
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
			"profiles", "security_control");
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
	const json_t *sess = collector_session(&o->c, jstr(ev, "session"));
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
		return nomem();
	}
	json_decref(fields);
	return 0;
}

static int emit(ocsf_sink *o, json_t *rec)
{
	int error;

	if (!rec)
		return nomem();
	error = export_json_line(o->base.out, rec);
	json_decref(rec);
	o->base.stats->records++;
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
	    (category_of((int)json_integer_value(json_object_get(rec, "class_uid"))) == 1 &&
	     json_object_set_new(rec, "device", json_pack("{s:i, s:s}", "type_id", 0, "type", "Unknown")) < 0) ||
	    (inv && jhas(inv, "policy_revision") &&
	     json_object_set_new(rec, "policy", json_pack("{s:s, s:O}", "name", "docket session policy",
				 "version", json_object_get(inv, "policy_revision"))) < 0)) {
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
			return nomem();
		}
	call_disposition(inv, &action, &disposition);
	ok = activity == 2 ? status_ok(ev) : action == ACTION_ALLOWED;
	rec = base_record(&o->base, ev, CLASS_PROCESS, activity, activity == 1 ? "Launch" : "Terminate");
	if (rec && json_object_set_new(rec, "process", json_pack("{s:s, s:s, s:s?}",
			"name", json_string_value(json_array_get(cmd, 0)) ? json_string_value(json_array_get(cmd, 0)) : "shell",
			"cmd_line", line.ptr ? line.ptr : "", "cwd", json_string_value(json_object_get(args, "cwd")))) < 0)
		json_decref(rec), rec = NULL;
	if (rec && activity == 2 && jhas(ev, "exit_code") &&
	    json_object_set(rec, "exit_code", json_object_get(ev, "exit_code")) < 0)
		json_decref(rec), rec = NULL;
	docket_buf_dispose(&line);
	return emit(o, finish_record(o, rec, ev, inv, NULL, action, disposition, ok));
}

static int file_activity(const char *tool, const char *op)
{
	if (strcmp(tool, "read_file") == 0)
		return 2;
	if (strcmp(tool, "write_file") == 0 || strcmp(op, "update") == 0)
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
	rec = base_record(&o->base, ev, CLASS_FILE, activity, file_activity_name(activity));
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
	rec = base_record(&o->base, ev, CLASS_API, 99, "Other");
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
	return strcmp(tool, "apply_patch") == 0 || strcmp(tool, "read_file") == 0 ||
	       strcmp(tool, "write_file") == 0;
}

static int on_dispatched(ocsf_sink *o, const json_t *ev, const json_t *inv)
{
	return strcmp(jstr(inv, "tool"), "shell") == 0 ? process_record(o, ev, inv, 1) : 0;
}

static int on_completed(ocsf_sink *o, const json_t *ev, const json_t *inv)
{
	const char *tool = jstr(inv, "tool");

	if (strcmp(tool, "shell") == 0)
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
		return nomem();
	rec = base_record(&o->base, ev, CLASS_AUTHORIZE, settled ? 1 : 99,
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
	json_t *rec = base_record(&o->base, ev, CLASS_AUTHORIZE, 99, "Policy Revised");

	if (rec && (json_object_set_new(rec, "user", json_pack("{s:s}", "name",
			*jstr(ev, "actor") ? jstr(ev, "actor") : "unknown")) < 0 ||
		    json_object_set_new(rec, "policy", json_pack("{s:s, s:O?, s:s}", "name",
			"docket session policy", "version", json_object_get(ev, "revision"),
			"desc", jstr(ev, "reason"))) < 0))
		json_decref(rec), rec = NULL;
	return emit(o, finish_record(o, rec, ev, NULL, jstr(ev, "actor"), ACTION_ALLOWED, DISP_ALLOWED, 1));
}

static int ocsf_event(export_sink *s, const json_t *ev, int emit_it)
{
	ocsf_sink *o = (ocsf_sink *)s;
	const char *type = jstr(ev, "type");
	const json_t *inv;
	int error;

	if ((error = collector_add(&o->c, ev)) < 0 || !emit_it)
		return error;
	if (strcmp(type, "policy.revised") == 0)
		return policy_record(o, ev);
	if (!(inv = collector_invocation(&o->c, ev)))
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

int sink_ocsf_new(export_sink **out, int64_t since_ms)
{
	return collector_sink_new(out, since_ms, ocsf_event, ocsf_finish);
}
