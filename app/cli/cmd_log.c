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

typedef struct log_ctx {
	size_t width[NCOLS];
	int measure;      /* 1: first pass, only measure */
	int json;
	int color;
	int with_host;    /* fleet log: a HOST column first (the event's "host") */
	uint64_t last_seq;
	int header_done;
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
		return docket_error_set(DOCKET_ENOMEM, "out of memory");
	json_object_foreach((json_t *)ev, k, v) {
		if (!is_common_key(k) && json_object_set(rest, k, v) < 0) {
			error = docket_error_set(DOCKET_ENOMEM, "out of memory");
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
	const char *type = cli_jstr(ev, "type");
	int64_t n;
	int error = 0;

	*color = NULL;
	if (!type)
		return summary_generic(b, ev);
	if (strcmp(type, "runtime.started") == 0) {
		const char *rt = cli_jstr(ev, "runtime");

		error = docket_buf_puts(b, rt ? rt : "runtime");
		if (error == 0 && cli_jint(ev, "epoch", &n) == 0)
			error = docket_buf_printf(b, ", epoch %lld", (long long)n);
	} else if (strcmp(type, "session.opened") == 0) {
		const char *parts[3];
		size_t i, k = 0;

		parts[0] = cli_jstr(ev, "runtime");
		parts[1] = cli_jstr(ev, "platform");
		parts[2] = cli_jstr(ev, "cwd");
		for (i = 0; i < 3 && error == 0; i++)
			if (parts[i])
				error = docket_buf_printf(b, "%s%s", k++ ? " " : "", parts[i]);
	} else if (strcmp(type, "policy.revised") == 0) {
		const char *fmt = cli_jstr(ev, "format");
		const char *actor = cli_jstr(ev, "actor");
		const char *reason = cli_jstr(ev, "reason");

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
		const char *tool = cli_jstr(ev, "tool");
		const json_t *dec = json_object_get(ev, "decision");
		const char *verdict = cli_jstr(dec, "verdict");
		const char *source = cli_jstr(dec, "source");
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
		const char *req = cli_jstr(ev, "request");
		const char *reviewer = cli_jstr(ev, "reviewer");
		const json_t *risk = json_object_get(ev, "risk");
		const char *level = cli_jstr(risk, "level");

		error = docket_buf_printf(b, "request %s", req ? req : "?");
		if (error == 0 && reviewer)
			error = docket_buf_printf(b, " to %s", reviewer);
		if (error == 0 && level)
			error = docket_buf_printf(b, ", risk %s", level);
	} else if (strcmp(type, "approval.settled") == 0) {
		const char *req = cli_jstr(ev, "request");
		const char *result = cli_jstr(ev, "result");
		const char *actor = cli_jstr(ev, "actor");

		error = docket_buf_printf(b, "request %s %s", req ? req : "?",
					  result ? result : "?");
		if (error == 0 && actor)
			error = docket_buf_printf(b, " by %s", actor);
		*color = cli_status_color(result);
	} else if (strcmp(type, "tool.dispatched") == 0) {
		if (cli_jint(ev, "attempt", &n) == 0)
			error = docket_buf_printf(b, "attempt %lld", (long long)n);
	} else if (strcmp(type, "tool.completed") == 0) {
		const char *status = cli_jstr(ev, "status");

		error = docket_buf_puts(b, status ? status : "?");
		if (error == 0 && cli_jint(ev, "exit_code", &n) == 0)
			error = docket_buf_printf(b, ", exit %lld", (long long)n);
		if (error == 0 && cli_jint(ev, "duration_ms", &n) == 0) {
			char d[32];

			cli_duration(d, sizeof(d), n);
			error = docket_buf_printf(b, ", %s", d);
		}
		*color = cli_status_color(status);
	} else if (strcmp(type, "session.closed") == 0) {
		const char *reason = cli_jstr(ev, "reason");

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

static int log_event(void *vctx, uint64_t seq, json_t *ev)
{
	log_ctx *ctx = vctx;
	char seqs[24];
	const char *time = cli_jstr(ev, "time");
	const char *type = cli_jstr(ev, "type");
	const char *session = cli_jstr(ev, "session");
	const char *inv = cli_jstr(ev, "invocation");
	const char *host = ctx->with_host ? cli_jstr(ev, "host") : NULL;
	docket_buf summary = DOCKET_BUF_INIT;
	const char *color = NULL;
	int error;

	ctx->last_seq = seq;
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
		"epoch and hash). --follow keeps watching for new events until interrupted.\n";
	const char *session = NULL;
	uint64_t since = 0;
	int json = 0, follow = 0;
	const cli_opt opts[] = {
		{ CLI_OPT_STRING, "session", 's', &session, "S", "only events of session S", 0 },
		{ CLI_OPT_U64, "since", 0, &since, "SEQ", "start at seq SEQ", 0 },
		CLI_OPT_JSON(&json),
		{ CLI_OPT_SWITCH, "follow", 'f', &follow, NULL,
		  "keep polling for new events until SIGINT/SIGTERM", 0 },
		{ CLI_OPT_END, NULL, 0, NULL, NULL, NULL, 0 }
	};
	docket_read_options ro = DOCKET_READ_OPTIONS_INIT;
	docket_ledger *ledger = NULL;
	log_ctx ctx;
	int rc, error;

	if ((rc = cli_parse(cmd, opts, description, argc, argv)) != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);
	if ((rc = cli_open_ledger(&ledger, g, CLI_OPEN_READ)) != CLI_EXIT_OK)
		return rc;

	log_ctx_init(&ctx, json, g->color_out, 0);
	ro.session = session;
	ro.since = since;

	if (session) {
		/* a session that does not exist is a usage error, not an empty log */
		if ((rc = cli_check_session(ledger, session)) != CLI_EXIT_OK)
			goto cleanup;
	}
	if (!json) {
		ctx.measure = 1;
		docket_error_clear();
		if ((error = docket_ledger_read_json(ledger, &ro, log_event, &ctx)) < 0) {
			rc = cli_fail(error, "cannot read the ledger");
			goto cleanup;
		}
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
	if ((error = docket_ledger_read_json(ledger, &ro, log_event, &ctx)) < 0) {
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
	docket_ledger_free(ledger);
	return rc;
}
