/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli_select.c: what the read commands select by: a session named by its
 * id or a unique prefix of it (a prefix of a session and of its subagents'
 * "SESSION/agent-x" names the session), and --since/--until in the one time syntax
 * of util/timespec.h.
 */
#include "cli.h"

#include <string.h>
#include <time.h>

#include "util/alloc.h"
#include "util/buf.h"
#include "util/error.h"

#define CANDIDATES_SHOWN 5

typedef struct prefix_scan {
	const char *prefix;
	size_t len, matches;
	size_t nested;      /* matches that are sessions inside `first` ("first/agent-x") */
	char *first;
	docket_buf names;   /* the first CANDIDATES_SHOWN matches, for the message */
	int error;
} prefix_scan;

static int on_session(void *vctx, const docket_session_info *info)
{
	prefix_scan *p = vctx;

	if (strncmp(info->session, p->prefix, p->len) != 0)
		return 0;
	/* sessions come in id order: a subagent's "PARENT/agent-x" follows its parent */
	if (p->first && strncmp(info->session, p->first, strlen(p->first)) == 0 &&
	    info->session[strlen(p->first)] == '/')
		p->nested++;
	if (++p->matches == 1 && !(p->first = docket_strdup(info->session)))
		return p->error = docket_error_set_oom();
	if (p->matches <= CANDIDATES_SHOWN &&
	    docket_buf_printf(&p->names, "%s%s", p->names.len ? ", " : "", info->session) < 0)
		return p->error = docket_error_set_oom();
	return 0;
}

int cli_session_arg(docket_ledger *ledger, const char **session, char **owned)
{
	prefix_scan p;
	int rc, error;

	*owned = NULL;
	if (!*session)
		return CLI_EXIT_OK;
	docket_error_clear();
	if ((rc = cli_session_exists(ledger, *session)) != 0)
		return rc < 0 ? cli_fail(rc, "cannot read the session") : CLI_EXIT_OK;
	memset(&p, 0, sizeof(p));
	p.prefix = *session;
	p.len = strlen(*session);
	if ((error = docket_ledger_sessions(ledger, on_session, &p)) < 0 || p.error < 0) {
		rc = cli_fail(error < 0 ? error : p.error, "cannot read the sessions");
	} else if (p.matches == 0 || p.len == 0) {
		cli_error("no session '%s' in the ledger", *session);
		rc = CLI_EXIT_USAGE;
	} else if (p.matches > 1 && p.matches != p.nested + 1) {
		cli_error("session prefix '%s' is ambiguous: %zu sessions match (%s%s)", *session, p.matches,
			  p.names.ptr, p.matches > CANDIDATES_SHOWN ? ", ..." : "");
		rc = CLI_EXIT_USAGE;
	} else {
		*session = *owned = p.first;
		p.first = NULL;
		rc = CLI_EXIT_OK;
	}
	docket_free(p.first);
	docket_buf_dispose(&p.names);
	return rc;
}

int cli_since(const char *arg, docket_export_options *opts)
{
	docket_timespec when;
	int rc;

	if ((rc = cli_timespec_arg("--since", arg, &when)) != CLI_EXIT_OK)
		return rc;
	if (when.kind == DOCKET_TIMESPEC_SEQ)
		opts->since_seq = when.seq;
	else
		opts->since_ms = when.ms;
	return CLI_EXIT_OK;
}

int cli_timespec_arg(const char *option, const char *arg, docket_timespec *out)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	if (docket_timespec_parse(out, arg, (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000) < 0) {
		cli_error("%s: '%s' is not %s", option, arg, docket_timespec_forms);
		return CLI_EXIT_USAGE;
	}
	return CLI_EXIT_OK;
}
