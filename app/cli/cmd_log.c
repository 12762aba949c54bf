/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_log.c: `docket log`: the events, one line each, or as JSON lines.
 *
 * The human form streams: a first pass over the selected events measures the
 * columns, a second prints them, so that memory stays bounded whatever the
 * size of the ledger. --follow then polls for new events until SIGINT/SIGTERM.
 */
#include "cli.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include "util/alloc.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/json.h"

#define POLL_MS 200
#define SUMMARY_CALL_MAX 60

enum { COL_HOST, COL_SEQ, COL_TIME, COL_TYPE, COL_SESSION, COL_INVOCATION, NCOLS };

/* What --type, --invocation, --status, --since and --until select. */
typedef struct log_filter {
	const char *types;       /* comma list; "tool." or "tool.*" match a family */
	const char *invocation;
	const char *status;      /* an outcome status, approval result or verdict */
	int64_t since_ms, until_ms;
	int has_since_ms, has_until_ms;
	uint64_t until_seq;      /* 0: none; else only seqs before it */
} log_filter;

typedef struct log_ctx {
	size_t width[NCOLS];
	int measure;      /* 1: first pass, only measure */
	int json;
	int color;
	int with_host;    /* fleet log: a HOST column first (the event's "host") */
	uint64_t last_seq;
	int header_done;
	log_filter filter;
} log_ctx;

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

/* Fields every event has, left out of the generic summary. */
static int is_common_key(const char *k)
{
	static const char *const common[] = { "type", "session", "invocation", "seq", "time",
					      "epoch", "hash", "turn", NULL };
	size_t i;

	for (i = 0; common[i]; i++)
		if (strcmp(k, common[i]) == 0)
			return 1;
	return 0;
}

static int summary_generic(docket_buf *b, const json_t *ev)
{
	json_t *rest = json_object();
	const char *k;
	json_t *v;
	int error = 0;

	if (!rest)
		return docket_error_set_oom();
	json_object_foreach((json_t *)ev, k, v) {
		if (!is_common_key(k) && json_object_set(rest, k, v) < 0) {
			error = docket_error_set_oom();
			break;
		}
	}
	if (error == 0 && json_object_size(rest) > 0)
		error = docket_json_dump(b, rest);
	json_decref(rest);
	return error;
}

/*
 * A short description of one event for the human log; `*color` receives the
 * colour of the status word it is about, if any.
 */
static int event_summary(docket_buf *b, const json_t *ev, const char **color)
{
	const char *type = docket_json_str(ev, "type");
	int64_t n;
	int error = 0;

	*color = NULL;
	if (!type)
		return summary_generic(b, ev);
	if (strcmp(type, "runtime.started") == 0) {
		const char *rt = docket_json_str(ev, "runtime");

		error = docket_buf_puts(b, rt ? rt : "runtime");
		if (error == 0 && cli_jint(ev, "epoch", &n) == 0)
			error = docket_buf_printf(b, ", epoch %lld", (long long)n);
	} else if (strcmp(type, "session.opened") == 0) {
		const char *parts[3];
		size_t i, k = 0;

		parts[0] = docket_json_str(ev, "runtime");
		parts[1] = docket_json_str(ev, "platform");
		parts[2] = docket_json_str(ev, "cwd");
		for (i = 0; i < 3 && error == 0; i++)
			if (parts[i])
				error = docket_buf_printf(b, "%s%s", k++ ? " " : "", parts[i]);
	} else if (strcmp(type, "policy.revised") == 0) {
		const char *fmt = docket_json_str(ev, "format");
		const char *actor = docket_json_str(ev, "actor");
		const char *reason = docket_json_str(ev, "reason");

		if (cli_jint(ev, "revision", &n) < 0)
			n = 0;
		error = docket_buf_printf(b, "revision %lld", (long long)n);
		if (error == 0 && fmt)
			error = docket_buf_printf(b, " (%s)", fmt);
		if (error == 0 && actor)
			error = docket_buf_printf(b, " by %s", actor);
		if (error == 0 && reason)
			error = docket_buf_printf(b, ": %s", reason);
	} else if (strcmp(type, "tool.intent") == 0) {
		const char *tool = docket_json_str(ev, "tool");
		const json_t *dec = json_object_get(ev, "decision");
		const char *verdict = docket_json_str(dec, "verdict");
		const char *source = docket_json_str(dec, "source");
		char *call = NULL;

		if ((error = cli_call_summary(&call, tool, json_object_get(ev, "args"),
					      SUMMARY_CALL_MAX)) < 0)
			return error;
		error = docket_buf_printf(b, "%s%s%s", tool ? tool : "?", call[0] ? ": " : "", call);
		docket_free(call);
		if (error == 0 && verdict) {
			error = docket_buf_printf(b, " => %s", verdict);
			if (error == 0 && source)
				error = docket_buf_printf(b, " (%s)", source);
			*color = cli_status_color(verdict);
		}
	} else if (strcmp(type, "approval.requested") == 0) {
		const char *req = docket_json_str(ev, "request");
		const char *reviewer = docket_json_str(ev, "reviewer");
		const json_t *risk = json_object_get(ev, "risk");
		const char *level = docket_json_str(risk, "level");

		error = docket_buf_printf(b, "request %s", req ? req : "?");
		if (error == 0 && reviewer)
			error = docket_buf_printf(b, " to %s", reviewer);
		if (error == 0 && level)
			error = docket_buf_printf(b, ", risk %s", level);
	} else if (strcmp(type, "approval.settled") == 0) {
		const char *req = docket_json_str(ev, "request");
		const char *result = docket_json_str(ev, "result");
		const char *actor = docket_json_str(ev, "actor");

		error = docket_buf_printf(b, "request %s %s", req ? req : "?",
					  result ? result : "?");
		if (error == 0 && actor)
			error = docket_buf_printf(b, " by %s", actor);
		*color = cli_status_color(result);
	} else if (strcmp(type, "tool.dispatched") == 0) {
		if (cli_jint(ev, "attempt", &n) == 0)
			error = docket_buf_printf(b, "attempt %lld", (long long)n);
	} else if (strcmp(type, "tool.completed") == 0) {
		const char *status = docket_json_str(ev, "status");

		error = docket_buf_puts(b, status ? status : "?");
		if (error == 0 && cli_jint(ev, "exit_code", &n) == 0)
			error = docket_buf_printf(b, ", exit %lld", (long long)n);
		if (error == 0 && cli_jint(ev, "duration_ms", &n) == 0) {
			char d[32];

			cli_duration(d, sizeof(d), n);
			error = docket_buf_printf(b, ", %s", d);
		}
		*color = cli_status_color(status);
	} else if (strcmp(type, "recovery.action") == 0) {
		const char *action = docket_json_str(ev, "action"), *detail = docket_json_str(ev, "detail");
		const char *verdict = docket_json_str(json_object_get(ev, "decision"), "verdict");

		error = docket_buf_puts(b, action ? action : "?");
		if (error == 0 && cli_jint(ev, "attempt", &n) == 0)
			error = docket_buf_printf(b, ", attempt %lld", (long long)n);
		if (error == 0 && verdict)
			error = docket_buf_printf(b, " -> %s", verdict);
		if (error == 0 && detail)
			error = docket_buf_printf(b, ": %s", detail);
		*color = CLI_YELLOW;
	} else if (strcmp(type, "session.closed") == 0) {
		const char *reason = docket_json_str(ev, "reason");

		if (reason)
			error = docket_buf_puts(b, reason);
	} else {
		error = summary_generic(b, ev);
	}
	if (error == 0 && !b->ptr)
		error = docket_buf_puts(b, "");
	return error;
}

static void put_cell(FILE *f, int color, const char *col, const char *s, size_t width,
		     int right, int pad_after)
{
	size_t len = strlen(s);
	size_t pad = width > len ? width - len : 0;

	if (right)
		fprintf(f, "%*s", (int)pad, "");
	cli_put_color(f, color, col, s);
	if (!right && pad_after)
		fprintf(f, "%*s", (int)pad, "");
	fputs("  ", f);
}

static void measure(size_t *w, const char *s)
{
	size_t len = strlen(s);

	if (len > *w)
		*w = len;
}

/* 1 when `type` is in the comma list `types`: an entry matches its exact
 * type, or, ending in "." or ".*", every type of that family. */
static int type_listed(const char *types, const char *type)
{
	while (*types) {
		size_t n = strcspn(types, ","), m = n;

		if (m > 0 && types[m - 1] == '*')
			m--;
		if (m > 0 && types[m - 1] == '.' ? strncmp(types, type, m) == 0
						    : m == strlen(type) && strncmp(types, type, m) == 0)
			return 1;
		types += n + (types[n] == ',');
	}
	return 0;
}

/* The status word of an event: an outcome's status, an approval's result,
 * an intent's verdict. */
static const char *status_word(const json_t *ev)
{
	const char *s = docket_json_str(ev, "status");

	if (!s)
		s = docket_json_str(ev, "result");
	if (!s)
		s = docket_json_str(json_object_get(ev, "decision"), "verdict");
	return s;
}

static int wanted(const log_filter *f, const json_t *ev)
{
	const char *inv = docket_json_str(ev, "invocation"), *status = status_word(ev);
	int64_t ms;

	if (f->types && !type_listed(f->types, docket_json_str(ev, "type") ? docket_json_str(ev, "type") : ""))
		return 0;
	if (f->invocation && (!inv || strcmp(inv, f->invocation) != 0))
		return 0;
	if (f->status && (!status || strcmp(status, f->status) != 0))
		return 0;
	if (f->has_since_ms || f->has_until_ms) {
		/* imported events keep their own times: filter, never stop early */
		if (cli_time_parse(docket_json_str(ev, "time"), &ms) < 0)
			return 0;
		if ((f->has_since_ms && ms < f->since_ms) || (f->has_until_ms && ms >= f->until_ms))
			return 0;
	}
	return 1;
}

static int log_event(void *vctx, uint64_t seq, json_t *ev)
{
	log_ctx *ctx = vctx;
	char seqs[24];
	const char *time = docket_json_str(ev, "time");
	const char *type = docket_json_str(ev, "type");
	const char *session = docket_json_str(ev, "session");
	const char *inv = docket_json_str(ev, "invocation");
	const char *host = ctx->with_host ? docket_json_str(ev, "host") : NULL;
	docket_buf summary = DOCKET_BUF_INIT;
	const char *color = NULL;
	int error;

	if (ctx->filter.until_seq && seq >= ctx->filter.until_seq)
		return 1;  /* stop: seqs only grow */
	ctx->last_seq = seq;
	if (!wanted(&ctx->filter, ev))
		return 0;
	if (ctx->json) {
		if (cli_json_line(stdout, ev) < 0)
			return docket_error_set(DOCKET_ESTORAGE, "cannot write output");
		return 0;
	}
	snprintf(seqs, sizeof(seqs), "%llu", (unsigned long long)seq);
	if (!time)
		time = "-";
	if (!type)
		type = "?";
	if (!session)
		session = "-";
	if (!inv)
		inv = "-";
	if (!host)
		host = "-";
	if (ctx->measure) {
		measure(&ctx->width[COL_HOST], host);
		measure(&ctx->width[COL_SEQ], seqs);
		measure(&ctx->width[COL_TIME], time);
		measure(&ctx->width[COL_TYPE], type);
		measure(&ctx->width[COL_SESSION], session);
		measure(&ctx->width[COL_INVOCATION], inv);
		return 0;
	}
	if ((error = event_summary(&summary, ev, &color)) < 0)
		return error;
	if (!ctx->header_done) {
		ctx->header_done = 1;
		if (ctx->with_host)
			put_cell(stdout, ctx->color, CLI_BOLD, "HOST", ctx->width[COL_HOST], 0, 1);
		put_cell(stdout, ctx->color, CLI_BOLD, "SEQ", ctx->width[COL_SEQ], 1, 1);
		put_cell(stdout, ctx->color, CLI_BOLD, "TIME", ctx->width[COL_TIME], 0, 1);
		put_cell(stdout, ctx->color, CLI_BOLD, "TYPE", ctx->width[COL_TYPE], 0, 1);
		put_cell(stdout, ctx->color, CLI_BOLD, "SESSION", ctx->width[COL_SESSION], 0, 1);
		put_cell(stdout, ctx->color, CLI_BOLD, "INVOCATION", ctx->width[COL_INVOCATION], 0, 1);
		cli_put_color(stdout, ctx->color, CLI_BOLD, "SUMMARY");
		putchar('\n');
	}
	if (ctx->with_host)
		put_cell(stdout, ctx->color, NULL, host, ctx->width[COL_HOST], 0, 1);
	put_cell(stdout, ctx->color, CLI_DIM, seqs, ctx->width[COL_SEQ], 1, 1);
	put_cell(stdout, ctx->color, NULL, time, ctx->width[COL_TIME], 0, 1);
	put_cell(stdout, ctx->color, NULL, type, ctx->width[COL_TYPE], 0, 1);
	put_cell(stdout, ctx->color, NULL, session, ctx->width[COL_SESSION], 0, 1);
	put_cell(stdout, ctx->color, NULL, inv, ctx->width[COL_INVOCATION], 0, 1);
	cli_put_color(stdout, ctx->color, color, summary.ptr);
	putchar('\n');
	docket_buf_dispose(&summary);
	if (ferror(stdout))
		return docket_error_set(DOCKET_ESTORAGE, "cannot write output");
	return 0;
}

static void log_ctx_init(log_ctx *ctx, int json, int color, int with_host)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->json = json;
	ctx->color = color;
	ctx->with_host = with_host;
	ctx->width[COL_HOST] = strlen("HOST");
	ctx->width[COL_SEQ] = strlen("SEQ");
	ctx->width[COL_TIME] = strlen("TIME");
	ctx->width[COL_TYPE] = strlen("TYPE");
	ctx->width[COL_SESSION] = strlen("SESSION");
	ctx->width[COL_INVOCATION] = strlen("INVOCATION");
}

int cli_log_print(cli_event_read read, void *rctx, int json, int color, int with_host)
{
	log_ctx ctx;
	int error;

	log_ctx_init(&ctx, json, color, with_host);
	if (!json) {
		ctx.measure = 1;
		if ((error = read(rctx, log_event, &ctx)) < 0)
			return error;
		ctx.measure = 0;
	}
	return read(rctx, log_event, &ctx);
}

static void sleep_ms(long ms)
{
	struct timespec ts;

	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	/* a signal cuts the sleep short; the loop then sees stop_requested */
	nanosleep(&ts, NULL);
}

int cmd_log(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	static const char description[] =
		"Lists events in seq order: seq, time, type, session, invocation and a short\n"
		"summary. --json writes each event as one JSON line (as recorded, plus seq, time,\n"
		"epoch and hash). --follow keeps watching for new events until interrupted.\n"
		"--since and --until take an RFC 3339 time, a date (2026-04-01, midnight UTC),\n"
		"a relative time (90s, 45m, 2h, 7d, 2w ago) or a seq (#123); --since is\n"
		"inclusive, --until exclusive. --status denied lists only the denials (outcomes,\n"
		"approval results and verdicts with that word). A damaged ledger: the events\n"
		"before the damage are listed, then the error (exit 3).\n";
	const char *session = NULL, *since_arg = NULL, *until_arg = NULL;
	int json = 0, follow = 0;
	log_filter filter;
	const cli_opt opts[] = {
		{ CLI_OPT_STRING, "session", 's', &session, "S", "only events of session S (or a unique prefix)", 0 },
		{ CLI_OPT_STRING, "invocation", 'i', &filter.invocation, "ID", "only events of tool call ID", 0 },
		{ CLI_OPT_STRING, "type", 't', &filter.types, "T,...",
		  "only these event types (tool.intent, or tool. for the family)", 0 },
		{ CLI_OPT_STRING, "status", 0, &filter.status, "WORD",
		  "only events with this status, result or verdict (e.g. denied)", 0 },
		{ CLI_OPT_STRING, "since", 0, &since_arg, "WHEN", "from this time or #seq on", 0 },
		{ CLI_OPT_STRING, "until", 0, &until_arg, "WHEN", "before this time or #seq", 0 },
		CLI_OPT_JSON(&json),
		{ CLI_OPT_SWITCH, "follow", 'f', &follow, NULL,
		  "keep polling for new events until SIGINT/SIGTERM", 0 },
		{ CLI_OPT_END, NULL, 0, NULL, NULL, NULL, 0 }
	};
	docket_read_options ro = DOCKET_READ_OPTIONS_INIT;
	docket_ledger *ledger = NULL;
	docket_timespec since, until;
	char *owned = NULL;
	log_ctx ctx;
	int rc, error, measured = 0;

	memset(&filter, 0, sizeof(filter));
	if ((rc = cli_parse(cmd, opts, description, argc, argv)) != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);
	if ((since_arg && (rc = cli_timespec_arg("--since", since_arg, &since)) != CLI_EXIT_OK) ||
	    (until_arg && (rc = cli_timespec_arg("--until", until_arg, &until)) != CLI_EXIT_OK))
		return rc;
	if ((rc = cli_open_ledger(&ledger, g, CLI_OPEN_READ)) != CLI_EXIT_OK)
		return rc;

	log_ctx_init(&ctx, json, g->color_out, 0);
	if (since_arg && since.kind == DOCKET_TIMESPEC_SEQ)
		ro.since = since.seq;
	else if (since_arg)
		filter.since_ms = since.ms, filter.has_since_ms = 1;
	if (until_arg && until.kind == DOCKET_TIMESPEC_SEQ)
		filter.until_seq = until.seq;
	else if (until_arg)
		filter.until_ms = until.ms, filter.has_until_ms = 1;
	ctx.filter = filter;

	/* a session that does not exist is a usage error, not an empty log */
	if ((rc = cli_session_arg(ledger, &session, &owned)) != CLI_EXIT_OK)
		goto cleanup;
	ro.session = session;
	if (!json) {
		ctx.measure = 1;
		docket_error_clear();
		/* a damaged ledger: the good events are still printed (the
		 * second pass stops at the same place), then the error */
		measured = docket_ledger_read_json(ledger, &ro, log_event, &ctx);
		ctx.measure = 0;
		if (follow) {
			/* later events were not measured: leave room for the usual sizes */
			if (ctx.width[COL_SEQ] < 6)
				ctx.width[COL_SEQ] = 6;
			if (ctx.width[COL_TIME] < strlen("2025-01-01T00:00:00.000Z"))
				ctx.width[COL_TIME] = strlen("2025-01-01T00:00:00.000Z");
			if (ctx.width[COL_TYPE] < strlen("approval.requested"))
				ctx.width[COL_TYPE] = strlen("approval.requested");
		}
	}
	docket_error_clear();
	if ((error = docket_ledger_read_json(ledger, &ro, log_event, &ctx)) < 0 || (error = measured) < 0) {
		fflush(stdout);
		rc = cli_fail(error, "cannot read the ledger");
		goto cleanup;
	}
	if (follow) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_signal;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		while (!stop_requested) {
			if (fflush(stdout) == EOF)
				break;
			sleep_ms(POLL_MS);
			if (stop_requested)
				break;
			if (ctx.last_seq > 0)
				ro.since = ctx.last_seq + 1;
			docket_error_clear();
			if ((error = docket_ledger_read_json(ledger, &ro, log_event, &ctx)) < 0) {
				rc = cli_fail(error, "cannot read the ledger");
				goto cleanup;
			}
		}
	}
	rc = CLI_EXIT_OK;

cleanup:
	docket_free(owned);
	docket_ledger_free(ledger);
	return rc;
}
