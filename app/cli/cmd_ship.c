/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_ship.c: `docket ship --to CONNINFO`: send the ledger's events and
 * checkpoints to the fleet database (docs/fleet.md); --follow keeps shipping
 * as the ledger grows.
 */
#include "cli.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "fleet/fleet.h"
#include "util/error.h"

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static json_t *report_json(const docket_ship_report *r)
{
	return json_pack("{s:s, s:I, s:I, s:I, s:b, s:o}",
			 "ledger", r->ledger_id,
			 "shipped", (json_int_t)r->shipped,
			 "high_seq", (json_int_t)r->high_seq,
			 "checkpoints", (json_int_t)r->checkpoints,
			 "refused", r->refused,
			 "incident", r->refused ? json_string(r->incident) : json_null());
}

static int print_report(const docket_ship_report *r, int json, const cli_global *g)
{
	if (json)
		return cli_put_json_line(report_json(r)) < 0 ? -1 : 0;
	if (r->refused) {
		cli_put_color(stdout, g->color_out, CLI_RED, "REFUSED");
		printf(": ledger %s: %s ", r->ledger_id, r->incident);
		if (r->high_seq)
			printf("(the server holds events 1..%llu)\n", (unsigned long long)r->high_seq);
		else
			printf("(the server holds none of its events)\n");
		return 0;
	}
	printf("shipped %llu event%s and %llu checkpoint%s of ledger %s (the server holds 1..%llu)\n",
	       (unsigned long long)r->shipped, r->shipped == 1 ? "" : "s",
	       (unsigned long long)r->checkpoints, r->checkpoints == 1 ? "" : "s", r->ledger_id,
	       (unsigned long long)r->high_seq);
	return 0;
}

typedef struct follow_ctx {
	int json;
	const cli_global *g;
} follow_ctx;

static void on_follow(void *vctx, const docket_ship_report *r, int error)
{
	follow_ctx *c = vctx;

	if (error < 0) {
		cli_error("%s (retrying)", docket_error_last()->message);
		return;
	}
	if (r->shipped || r->checkpoints || r->refused)
		(void)print_report(r, c->json, c->g);
	fflush(stdout);
}

int cmd_ship(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	static const char description[] =
		"Sends every event of the ledger the fleet database does not hold yet, in\n"
		"seq order, in batches of one transaction each, then its checkpoints. The\n"
		"server checks that each batch continues the ledger's hash chain from the\n"
		"head it holds; a batch that does not (a rewritten history) is refused and\n"
		"recorded in docket_incidents: exit 1. Re-running after any interruption\n"
		"continues where the server stopped. CONNINFO is a libpq connection string\n"
		"(postgresql://... or key=value; PG* variables apply; default\n"
		"$DOCKET_FLEET_DB). --follow keeps shipping as the ledger grows (woken by\n"
		"its commits), reconnecting with backoff, until SIGINT/SIGTERM.\n";
	const char *to = NULL, *host = NULL;
	uint64_t batch = 0;
	int json = 0, follow = 0;
	const cli_opt opts[] = {
		{ CLI_OPT_STRING, "to", 0, &to, "CONNINFO", "the fleet database", 0 },
		{ CLI_OPT_STRING, "host", 0, &host, "NAME", "this machine's name in the fleet (default: hostname)", 0 },
		{ CLI_OPT_U64, "batch", 0, &batch, "N", "events per transaction (default 2000)", 0 },
		{ CLI_OPT_SWITCH, "follow", 'f', &follow, NULL, "keep shipping until SIGINT/SIGTERM", 0 },
		CLI_OPT_JSON(&json),
		{ CLI_OPT_END, NULL, 0, NULL, NULL, NULL, 0 }
	};
	docket_ship_options so = DOCKET_SHIP_OPTIONS_INIT;
	docket_follow_options fo = DOCKET_FOLLOW_OPTIONS_INIT;
	docket_ship_report rep;
	docket_ledger *ledger = NULL;
	docket_fleet *fleet = NULL;
	follow_ctx fc = { json, g };
	int rc, error;

	if ((rc = cli_parse(cmd, opts, description, argc, argv)) != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);
	if (batch > 1000000) {
		cli_error("--batch must be at most 1000000");
		return CLI_EXIT_USAGE;
	}
	if (!to)
		to = getenv("DOCKET_FLEET_DB");
	so.host = host;
	so.batch = (size_t)batch;
	if ((rc = cli_open_ledger(&ledger, g, CLI_OPEN_READ)) != CLI_EXIT_OK)
		return rc;
	docket_error_clear();
	if (follow) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_signal;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		fo.ledger_path = g->ledger_path;
		fo.stop = &stop_requested;
		fo.on_round = on_follow;
		fo.ctx = &fc;
		if ((error = docket_fleet_follow(to ? to : "", ledger, &so, &fo, &rep)) < 0)
			rc = cli_fail(error, "cannot ship");
		else
			rc = rep.refused ? CLI_EXIT_FOUND : CLI_EXIT_OK;
		goto cleanup;
	}
	if ((error = docket_fleet_connect(&fleet, to ? to : "")) < 0 ||
	    (error = docket_fleet_ship(fleet, ledger, &so, &rep)) < 0) {
		rc = cli_fail(error, "cannot ship");
		goto cleanup;
	}
	if (print_report(&rep, json, g) < 0) {
		rc = cli_fail(DOCKET_ERROR, "cannot write the output");
		goto cleanup;
	}
	rc = rep.refused ? CLI_EXIT_FOUND : CLI_EXIT_OK;
cleanup:
	docket_fleet_free(fleet);
	docket_ledger_free(ledger);
	return rc;
}
