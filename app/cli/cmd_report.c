/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_report.c: `docket report -o FILE.html`: the audit report. */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "docket/audit.h"
#include "docket/export.h"
#include "fleet/fleet.h"
#include "util/alloc.h"
#include "util/error.h"

/* The pages of FILE.html: FILE.pages beside it, linked as "FILE.pages"
 * (its base name) from the report. */
typedef struct report_pages {
	char *dir, *href;
	docket_report_pages p;
} report_pages;

static int pages_of(report_pages *rp, const char *path)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	size_t n = strlen(path), stem = n >= 5 && strcmp(path + n - 5, ".html") == 0 ? n - 5 : n;
	size_t bstem = stem - (size_t)(base - path);

	memset(rp, 0, sizeof(*rp));
	if (!(rp->dir = docket_malloc(stem + 7)) || !(rp->href = docket_malloc(bstem + 7)))
		return docket_error_set_oom();
	snprintf(rp->dir, stem + 7, "%.*s.pages", (int)stem, path);
	snprintf(rp->href, bstem + 7, "%.*s.pages", (int)bstem, base);
	rp->p.dir = rp->dir;
	rp->p.href = rp->href;
	rp->p.report = base;
	return 0;
}

/* --from: the fleet's events, each with its machine, for the report. */
typedef struct fleet_feed {
	docket_fleet *f;
	docket_fleet_filter filter;
	const char *session;
	docket_json_cb cb;
	void *cbctx;
} fleet_feed;

static int on_fleet_event(void *vctx, const docket_fleet_ledger *l, uint64_t seq, json_t *ev)
{
	fleet_feed *r = vctx;

	if (json_object_set_new(ev, "host", json_string(l->host)) < 0 ||
	    json_object_set_new(ev, "ledger", json_string(l->ledger_id)) < 0)
		return docket_error_set_oom();
	return r->cb(r->cbctx, seq, ev);
}

static int read_fleet(void *vctx, docket_json_cb cb, void *cbctx)
{
	fleet_feed *r = vctx;

	r->cb = cb;
	r->cbctx = cbctx;
	return docket_fleet_events(r->f, &r->filter, r->session, on_fleet_event, r);
}

int cmd_report(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	static const char description[] =
		"Writes one self-contained HTML page (inline CSS and SVG, no script, no\n"
		"external resource) for auditors: sessions, approvals (who, when, how long\n"
		"they waited, the result, the decision source), denials, the policy revision\n"
		"timeline, calls left in doubt or recovered, charts of approval wait times and\n"
		"decisions over time, and the chain head and signed checkpoints.\n"
		"A table of more than 500 rows keeps its first 500 on the page and links the\n"
		"others, on pages in the directory FILE.pages beside it (FILE without .html):\n"
		"every row stays reachable.\n"
		"--from CONNINFO writes it for every ledger held in the fleet database\n"
		"(docs/fleet.md), with a table of the machines and sessions per machine.\n";
	const char *path = NULL, *session = NULL, *since = NULL, *pseudo_key = NULL, *from = NULL;
	fleet_feed feed;
	const cli_opt opts[] = {
		{ CLI_OPT_STRING, "output", 'o', &path, "FILE", "the HTML file to write (required)", 0 },
		{ CLI_OPT_STRING, "session", 's', &session, "S", "only this session", 0 },
		{ CLI_OPT_STRING, "since", 0, &since, "WHEN",
		  "only calls from this time, date, 2h/7d ago, or #seq on", 0 },
		{ CLI_OPT_STRING, "pseudonymize", 0, &pseudo_key, "KEYFILE", "replace identifiers by keyed hashes", 0 },
		{ CLI_OPT_STRING, "from", 0, &from, "CONNINFO", "the fleet database (postgresql://...)", 0 },
		{ CLI_OPT_STRING, "ledger-id", 0, &feed.filter.ledger_id, "ID", "with --from: only ledger ID", 0 },
		{ CLI_OPT_STRING, "host", 0, &feed.filter.host, "NAME", "with --from: only ledgers of host NAME", 0 },
		{ CLI_OPT_END, NULL, 0, NULL, NULL, NULL, 0 }
	};
	docket_export_options o = DOCKET_EXPORT_OPTIONS_INIT;
	docket_pseudonymizer *pseudo = NULL;
	docket_ledger *ledger = NULL;
	report_pages pages = { NULL, NULL, { NULL, NULL, NULL, 0 } };
	char *abs = NULL, *owned = NULL;
	FILE *out = NULL;
	int rc, error;

	memset(&feed, 0, sizeof(feed));
	if ((rc = cli_parse(cmd, opts, description, argc, argv)) != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);
	if ((feed.filter.ledger_id || feed.filter.host) && !from) {
		cli_error("--ledger-id and --host need --from");
		return CLI_EXIT_USAGE;
	}
	if (!path || !*path) {
		cli_error("report needs -o FILE");
		cli_usage_line(stderr, cmd, opts);
		return CLI_EXIT_USAGE;
	}
	if (since && (rc = cli_since(since, &o)) != CLI_EXIT_OK)
		return rc;
	docket_error_clear();
	if (pseudo_key && (error = docket_pseudonymizer_load(&pseudo, pseudo_key)) < 0)
		return cli_fail(error, "cannot load the pseudonymisation key");
	o.session = session;
	o.pseudonymizer = pseudo;
	feed.session = session;
	if (from) {
		if ((error = docket_fleet_connect(&feed.f, from)) < 0) {
			rc = cli_fail(error, "cannot connect to the fleet database");
			goto cleanup;
		}
	} else if ((rc = cli_open_ledger(&ledger, g, CLI_OPEN_READ)) != CLI_EXIT_OK) {
		goto cleanup;
	}
	if (ledger && (rc = cli_session_arg(ledger, &session, &owned)) != CLI_EXIT_OK)
		goto cleanup;
	o.session = session;
	if ((error = pages_of(&pages, path)) < 0) {
		rc = cli_fail(error, "cannot write the report");
		goto cleanup;
	}
	if (!(out = fopen(path, "w"))) {
		cli_error("cannot write %s: %s", path, strerror(errno));
		rc = CLI_EXIT_SYSTEM;
		goto cleanup;
	}
	error = from ? docket_report_html_from(read_fleet, &feed, "fleet database", &o, out)
		     : docket_report_html_pages(ledger, &o, out, &pages.p);
	if (fclose(out) != 0 && error == 0)
		error = docket_error_set(DOCKET_ESTORAGE, "cannot write %s", path);
	if (error < 0) {
		rc = cli_fail(error, "cannot write the report");
		goto cleanup;
	}
	abs = realpath(path, NULL);
	printf("report written to %s\n", abs ? abs : path);
	rc = CLI_EXIT_OK;
cleanup:
	free(abs);
	docket_free(pages.dir);
	docket_free(pages.href);
	docket_free(owned);
	docket_ledger_free(ledger);
	docket_fleet_free(feed.f);
	docket_pseudonymizer_free(pseudo);
	return rc;
}
