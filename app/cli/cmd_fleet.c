/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_fleet.c: `docket fleet SUBCOMMAND --db CONNINFO`: the central side of
 * shipping (docs/fleet.md): init (schema and migrations), verify (re-check
 * every ledger held), and the fleet twins of sessions, log and pending.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include "fleet/fleet.h"
#include "util/error.h"

typedef struct fleet_sub {
	const char *name;
	int (*fn)(const cli_command *cmd, const cli_global *g, int argc, char **argv);
	const char *summary;
} fleet_sub;

/* --db, else $DOCKET_FLEET_DB, else libpq's defaults (PG* variables). */
static int connect_db(docket_fleet **out, const char *db)
{
	int error;

	if (!db)
		db = getenv("DOCKET_FLEET_DB");
	docket_error_clear();
	if ((error = docket_fleet_connect(out, db ? db : "")) < 0)
		return cli_fail(error, "cannot connect to the fleet database");
	return CLI_EXIT_OK;
}

#define OPT_DB(ptr) { CLI_OPT_STRING, "db", 0, (ptr), "CONNINFO", "the fleet database (default $DOCKET_FLEET_DB)", 0 }

/* The options of the commands that read the central store. */
typedef struct fleet_args {
	const char *db, *session, *pubkey;
	docket_fleet_filter filter;
	int json;
} fleet_args;

enum {
	FLEET_PUBKEY = 1u << 0,      /* --pubkey KEY.pub */
	FLEET_SESSION_ARG = 1u << 1  /* a SESSION argument */
};

/*
 * Parse --db, --ledger-id, --host, then --session S when `session_help`
 * says what it selects, --pubkey and the SESSION argument when `what` asks
 * for them, --json; then connect. Returns an exit code; *f stays NULL
 * after --help (exit 0: nothing more to do).
 */
static int fleet_open(docket_fleet **f, fleet_args *a, const cli_command *cmd, const char *description,
		      const char *session_help, unsigned what, int argc, char **argv)
{
	cli_opt opts[8];
	size_t n = 0;
	int rc;

	memset(a, 0, sizeof(*a));
	*f = NULL;
	opts[n++] = (cli_opt)OPT_DB(&a->db);
	opts[n++] = (cli_opt){ CLI_OPT_STRING, "ledger-id", 0, &a->filter.ledger_id, "ID", "only the ledger ID", 0 };
	opts[n++] = (cli_opt){ CLI_OPT_STRING, "host", 0, &a->filter.host, "NAME", "only ledgers shipped from host NAME", 0 };
	if (session_help)
		opts[n++] = (cli_opt){ CLI_OPT_STRING, "session", 's', &a->session, "S", session_help, 0 };
	if (what & FLEET_PUBKEY)
		opts[n++] = (cli_opt){ CLI_OPT_STRING, "pubkey", 0, &a->pubkey, "KEY.pub",
				       "check the checkpoints' signatures with this key", 0 };
	opts[n++] = (cli_opt)CLI_OPT_JSON(&a->json);
	if (what & FLEET_SESSION_ARG)
		opts[n++] = (cli_opt){ CLI_OPT_ARG, "SESSION", 0, &a->session, NULL, "the session to show", CLI_OPT_REQUIRED };
	opts[n] = (cli_opt){ CLI_OPT_END, NULL, 0, NULL, NULL, NULL, 0 };
	if ((rc = cli_parse(cmd, opts, description, argc, argv)) != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);
	return connect_db(f, a->db);
}

/* ---- init ---- */

static int fleet_init(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	static const char description[] =
		"Creates the fleet schema in the database, or migrates it to this docket's\n"
		"version: tables docket_ledgers, docket_events (partitioned by month),\n"
		"docket_checkpoints, docket_incidents; views docket_approvals and\n"
		"docket_denials; roles docket_shipper and docket_reader; the ingest\n"
		"functions. Safe to run again. See docs/fleet.md for the roles to grant.\n";
	const char *db = NULL;
	const cli_opt opts[] = {
		OPT_DB(&db),
		{ CLI_OPT_END, NULL, 0, NULL, NULL, NULL, 0 }
	};
	docket_fleet *f = NULL;
	int rc, error, from = 0, to = 0;

	if ((rc = cli_parse(cmd, opts, description, argc, argv)) != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);
	if ((rc = connect_db(&f, db)) != CLI_EXIT_OK)
		return rc;
	if ((error = docket_fleet_init(f, &from, &to)) < 0) {
		rc = cli_fail(error, "cannot create the fleet schema");
		goto cleanup;
	}
	if (from == to)
		printf("fleet schema is at version %d (nothing to do)\n", to);
	else if (from == 0)
		printf("created the fleet schema (version %d)\n", to);
	else
		printf("migrated the fleet schema from version %d to %d\n", from, to);
cleanup:
	docket_fleet_free(f);
	return rc;
}

/* ---- verify ---- */

typedef struct verify_ctx {
	int json;
	int color;
	uint64_t bad;
	uint64_t ledgers;
} verify_ctx;

static int on_verified(void *vctx, const docket_fleet_verify_report *r)
{
	verify_ctx *c = vctx;

	c->ledgers++;
	if (!r->ok)
		c->bad++;
	if (c->json)
		return cli_put_json_line(json_pack("{s:s, s:s, s:b, s:I, s:I, s:I, s:o, s:o}",
			"ledger", r->ledger.ledger_id, "host", r->ledger.host, "ok", r->ok,
			"high_seq", (json_int_t)r->ledger.high_seq,
			"events_checked", (json_int_t)r->events_checked,
			"checkpoints_checked", (json_int_t)r->checkpoints_checked,
			"first_bad_seq", r->first_bad_seq ? json_integer((json_int_t)r->first_bad_seq) : json_null(),
			"problem", r->ok ? json_null() : json_string(r->problem)));
	cli_put_color(stdout, c->color, r->ok ? CLI_GREEN : CLI_RED, r->ok ? "ok" : "FAILED");
	printf(" %s (%s): ", r->ledger.ledger_id, r->ledger.host);
	if (r->ok)
		printf("%llu events, %llu checkpoints verified\n", (unsigned long long)r->events_checked,
		       (unsigned long long)r->checkpoints_checked);
	else if (r->first_bad_seq)
		printf("at seq %llu: %s\n", (unsigned long long)r->first_bad_seq, r->problem);
	else
		printf("%s\n", r->problem);
	return 0;
}

static int fleet_verify(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	static const char description[] =
		"Re-checks every ledger held centrally from the stored bytes: events\n"
		"1..high-water without a gap, the hash chain recomputed from each stored\n"
		"payload, each payload decoding to the event its columns describe, the\n"
		"head recorded at ingest, and every shipped checkpoint against the chain;\n"
		"with --pubkey, every checkpoint must be signed by that key. Exit 1 when a\n"
		"ledger fails.\n";
	fleet_args a;
	verify_ctx c = { 0, g->color_out, 0, 0 };
	docket_fleet *f = NULL;
	int rc, error;

	if ((rc = fleet_open(&f, &a, cmd, description, NULL, FLEET_PUBKEY, argc, argv)) != CLI_EXIT_OK || !f)
		return rc;
	c.json = a.json;
	if ((error = docket_fleet_verify(f, &a.filter, a.pubkey, on_verified, &c)) < 0) {
		rc = cli_fail(error, "cannot verify the fleet");
		goto cleanup;
	}
	if (!a.json && c.ledgers == 0)
		printf("no ledgers\n");
	rc = c.bad ? CLI_EXIT_FOUND : CLI_EXIT_OK;
cleanup:
	docket_fleet_free(f);
	return rc;
}

/* ---- sessions, pending ---- */

static int on_fleet_session(void *vctx, const docket_fleet_ledger *l, const docket_session_info *s)
{
	cli_origin o = { l->ledger_id, l->host };

	return cli_sessions_row(vctx, s, &o);
}

static int on_fleet_pending(void *vctx, const docket_fleet_ledger *l, const docket_pending_info *p)
{
	cli_origin o = { l->ledger_id, l->host };

	return cli_pending_row(vctx, p, &o);
}

/* The shared body of `fleet sessions` and `fleet pending`. */
static int fleet_listing(const cli_command *cmd, const cli_global *g, int argc, char **argv, int pending)
{
	static const char sessions_help[] =
		"Lists the sessions of every ledger held centrally, as `docket sessions`\n"
		"lists them on their machine, with the host first. --json rows are the\n"
		"local ones plus \"ledger\" (the ledger id) and \"host\".\n";
	static const char pending_help[] =
		"Lists the tool calls without an outcome in every ledger held centrally,\n"
		"as `docket pending` lists them on their machine, with the host first.\n"
		"--json rows are the local ones plus \"ledger\" and \"host\".\n";
	cli_listing list = { 0, NULL, 0 };
	fleet_args a;
	docket_fleet *f = NULL;
	int rc, error;

	if ((rc = fleet_open(&f, &a, cmd, pending ? pending_help : sessions_help, "only session S", 0,
			     argc, argv)) != CLI_EXIT_OK || !f)
		return rc;
	rc = pending ? cli_pending_begin(&list, a.json, 1) : cli_sessions_begin(&list, a.json, 1);
	if (rc != CLI_EXIT_OK)
		goto cleanup;
	error = pending ? docket_fleet_pending(f, &a.filter, a.session, on_fleet_pending, &list)
			: docket_fleet_sessions(f, &a.filter, a.session, on_fleet_session, &list);
	if (error < 0) {
		rc = cli_fail(error, "cannot read the fleet database");
		goto cleanup;
	}
	cli_listing_end(&list, g->color_out, pending ? "no pending calls\n" : "no sessions\n");
	rc = CLI_EXIT_OK;
cleanup:
	cli_listing_dispose(&list);
	docket_fleet_free(f);
	return rc;
}

static int fleet_sessions(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	return fleet_listing(cmd, g, argc, argv, 0);
}

static int fleet_pending(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	return fleet_listing(cmd, g, argc, argv, 1);
}

/* ---- show ---- */

/* The ledgers that hold the session (at most 2 are kept: 2 is ambiguous). */
typedef struct where {
	size_t n;
	char ledger[33];
	char host[256];
} where;

static int on_where(void *vctx, const docket_fleet_ledger *l, const docket_session_info *s)
{
	where *w = vctx;

	(void)s;
	if (w->n++ == 0) {
		snprintf(w->ledger, sizeof(w->ledger), "%s", l->ledger_id);
		snprintf(w->host, sizeof(w->host), "%s", l->host);
	}
	return 0;
}

/* The central events for a local printer; with `tag`, each gets "ledger"
 * and "host" (log), else it is exactly the machine's own object (show). */
typedef struct fleet_read {
	docket_fleet *f;
	docket_fleet_filter filter;
	const char *session;
	int tag;
	docket_json_cb cb;
	void *cbctx;
} fleet_read;

static int on_show_event(void *vctx, const docket_fleet_ledger *l, uint64_t seq, json_t *ev)
{
	fleet_read *r = vctx;

	if (r->tag && (json_object_set_new(ev, "ledger", json_string(l->ledger_id)) < 0 ||
		       json_object_set_new(ev, "host", json_string(l->host)) < 0))
		return docket_error_set_oom();
	return r->cb(r->cbctx, seq, ev);
}

static int read_fleet(void *vctx, docket_json_cb cb, void *cbctx)
{
	fleet_read *r = vctx;

	r->cb = cb;
	r->cbctx = cbctx;
	return docket_fleet_events(r->f, &r->filter, r->session, on_show_event, r);
}

/* ---- log ---- */

static int fleet_log(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	static const char description[] =
		"Lists the events held centrally, ledger by ledger (in ledger-id order),\n"
		"each in seq order, as `docket log` lists them, with the host first.\n"
		"--json writes each event as `docket log --json` wrote it on its machine,\n"
		"plus \"ledger\" (the ledger id) and \"host\".\n";
	fleet_args a;
	fleet_read r;
	docket_fleet *f = NULL;
	int rc, error;

	if ((rc = fleet_open(&f, &a, cmd, description, "only events of session S", 0, argc, argv)) != CLI_EXIT_OK || !f)
		return rc;
	memset(&r, 0, sizeof(r));
	r.f = f;
	r.filter = a.filter;
	r.session = a.session;
	r.tag = 1;
	if ((error = cli_log_print(read_fleet, &r, a.json, g->color_out, 1)) < 0)
		rc = cli_fail(error, "cannot read the fleet's events");
	docket_fleet_free(f);
	return rc;
}

static int fleet_show(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	static const char description[] =
		"Shows one session held centrally as `docket show` shows it on its machine.\n"
		"A session id found on more than one ledger needs --ledger-id or --host.\n"
		"--json is the local object plus \"ledger\" and \"host\".\n";
	where w = { 0, "", "" };
	fleet_args a;
	fleet_read r;
	cli_origin o;
	docket_fleet *f = NULL;
	const char *session;
	int rc, error;

	if ((rc = fleet_open(&f, &a, cmd, description, NULL, FLEET_SESSION_ARG, argc, argv)) != CLI_EXIT_OK || !f)
		return rc;
	session = a.session;
	if ((error = docket_fleet_sessions(f, &a.filter, session, on_where, &w)) < 0) {
		rc = cli_fail(error, "cannot read the fleet database");
		goto cleanup;
	}
	if (w.n != 1) {
		if (w.n == 0)
			cli_error("no session '%s' in the fleet database", session);
		else
			cli_error("session '%s' is on %zu ledgers: choose one with --ledger-id or --host", session, w.n);
		rc = CLI_EXIT_USAGE;
		goto cleanup;
	}
	memset(&r, 0, sizeof(r));
	r.f = f;
	r.filter.ledger_id = w.ledger;
	r.session = session;
	o.ledger = w.ledger;
	o.host = w.host;
	rc = cli_show_session(read_fleet, &r, session, a.json, g->color_out, &o);
cleanup:
	docket_fleet_free(f);
	return rc;
}

static const fleet_sub subs[] = {
	{ "init", fleet_init, "create or migrate the fleet schema" },
	{ "verify", fleet_verify, "re-check every ledger held: chain, payloads, checkpoints" },
	{ "log", fleet_log, "list the events held, ledger by ledger" },
	{ "sessions", fleet_sessions, "list the sessions of every ledger held" },
	{ "pending", fleet_pending, "list the tool calls without an outcome, fleet-wide" },
	{ "show", fleet_show, "show one session held centrally as a timeline" },
};

#define NSUBS (sizeof(subs) / sizeof(subs[0]))

static void fleet_usage(FILE *f)
{
	fputs("usage: docket fleet SUBCOMMAND --db CONNINFO [options]\n\n"
	      "The central side of `docket ship` (docs/fleet.md).\n\nsubcommands:\n", f);
	for (size_t i = 0; i < NSUBS; i++)
		fprintf(f, "  %-9s %s\n", subs[i].name, subs[i].summary);
}

int cmd_fleet(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	cli_command sub;
	char name[64];

	if (argc < 2) {
		cli_error("fleet needs a subcommand");
		fleet_usage(stderr);
		return CLI_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		fleet_usage(stdout);
		return CLI_EXIT_OK;
	}
	for (size_t i = 0; i < NSUBS; i++) {
		if (strcmp(argv[1], subs[i].name) != 0)
			continue;
		snprintf(name, sizeof(name), "%s %s", cmd->name, subs[i].name);
		sub.name = name;
		sub.fn = cmd->fn;
		sub.summary = subs[i].summary;
		return subs[i].fn(&sub, g, argc - 1, argv + 1);
	}
	cli_error("unknown fleet subcommand '%s'", argv[1]);
	fleet_usage(stderr);
	return CLI_EXIT_USAGE;
}
