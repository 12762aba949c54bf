/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_verify.c: `docket verify`: check chain, frames and projections; with
 * --pubkey the signed checkpoints, with --git a git archive (docs/audit.md). */
#include "cli.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "docket/audit.h"
#include "docket/export.h"
#include "docket/tlog.h"
#include "ledger/spool.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/file.h"

typedef struct verify_args {
	const char *pubkey;
	const char *witness;     /* the one JSON checkpoint record among the witnesses */
	cli_list witnesses;      /* --witness: records and checkpoint notes */
	const char *notes[CLI_LIST_MAX];
	size_t nnotes;
	cli_list keys;           /* --witness-key */
	uint64_t required;       /* --witnesses N (default: all the keys) */
	const char *git;
	int json;
} verify_args;

static void print_chain(const docket_verify_report *report, const cli_global *g)
{
	if (report->ok) {
		cli_put_color(stdout, g->color_out, CLI_GREEN, "ok");
		printf(": %llu event%s verified (hash chain, frames, %s)\n",
		       (unsigned long long)report->events_checked,
		       report->events_checked == 1 ? "" : "s",
		       report->old_indexes ? "not the indexes: an older docket wrote them; "
					     "`docket reindex` rebuilds them" : "indexes");
		return;
	}
	const char *problem = report->problem[0] ? report->problem : "verification failed";
	const char *range = strstr(problem, "of seqs ");
	unsigned long long lo, hi, n;
	int skip = 0;

	cli_put_color(stdout, g->color_out, CLI_RED, "FAILED");
	/* the problem may begin with the seq again ("seq 1693: ...") */
	if (sscanf(problem, "seq %llu: %n", &n, &skip) == 1 && skip > 0 && n == report->first_bad_seq)
		problem += skip;
	if (range && sscanf(range, "of seqs %llu-%llu", &lo, &hi) == 2 && lo < hi)
		/* a segment's stored chain hash disagrees: any of its events may be
		 * the altered one, so the first docket cannot vouch for is its first */
		printf(" from seq %llu (seqs %llu-%llu cannot be vouched for)", lo, lo, hi);
	else if (report->first_bad_seq)
		printf(" at seq %llu", (unsigned long long)report->first_bad_seq);
	printf(": %s\n", problem);
	if (report->events_checked > 0)
		printf("%llu event%s checked\n", (unsigned long long)report->events_checked,
		       report->events_checked == 1 ? "" : "s");
}

static void print_seal(const docket_seal_report *s, const cli_global *g)
{
	if (!s->ok) {
		cli_put_color(stdout, g->color_out, CLI_RED, "FAILED");
		printf(": %s\n", s->problem);
		return;
	}
	cli_put_color(stdout, g->color_out, CLI_GREEN, "ok");
	printf(": %llu checkpoint%s signed by key %.16s..., events 1..%llu covered, "
	       "%llu after the last checkpoint\n",
	       (unsigned long long)s->checkpoints, s->checkpoints == 1 ? "" : "s", s->key_id,
	       (unsigned long long)s->covered_seq,
	       (unsigned long long)(s->head_seq - s->covered_seq));
	if (s->witness_checked) {
		cli_put_color(stdout, g->color_out, CLI_GREEN, "ok");
		printf(": the witness matches the ledger's checkpoint\n");
	}
}

static void print_notes(const docket_witness_report *w, const verify_args *a, const cli_global *g)
{
	cli_put_color(stdout, g->color_out, w->ok ? CLI_GREEN : CLI_RED, w->ok ? "ok" : "FAILED");
	if (!w->ok) {
		printf(": %s\n", w->problem);
		return;
	}
	printf(": %zu witnessed checkpoint%s match%s the ledger's tree (events 1..%llu witnessed)",
	       w->notes, w->notes == 1 ? "" : "s", w->notes == 1 ? "es" : "", (unsigned long long)w->largest_size);
	if (a->keys.n)
		printf(", co-signed by %zu of %zu witness key%s (%zu required)", w->cosigners, a->keys.n,
		       a->keys.n == 1 ? "" : "s", w->required);
	printf("\n");
}

static void print_git(const docket_git_report *r, const cli_global *g)
{
	cli_put_color(stdout, g->color_out, r->ok ? CLI_GREEN : CLI_RED, r->ok ? "ok" : "FAILED");
	if (r->ok)
		printf(": git archive agrees (%llu commit%s, %llu events, head seq %llu)\n",
		       (unsigned long long)r->commits, r->commits == 1 ? "" : "s",
		       (unsigned long long)r->events_checked, (unsigned long long)r->head_seq);
	else
		printf(": git archive: %s\n", r->problem);
}

static json_t *chain_json(const docket_verify_report *report)
{
	return json_pack("{s:b, s:I, s:b, s:o, s:o}",
			 "ok", report->ok,
			 "events_checked", (json_int_t)report->events_checked,
			 "indexes_checked", !report->old_indexes,
			 "first_bad_seq", report->first_bad_seq
				 ? json_integer((json_int_t)report->first_bad_seq) : json_null(),
			 "problem", report->ok ? json_null() : json_string(report->problem));
}

static int add_seal_json(json_t *j, const docket_seal_report *s)
{
	return json_object_set_new(j, "checkpoints", json_pack("{s:b, s:I, s:I, s:I, s:s, s:b, s:o}",
		"ok", s->ok, "checked", (json_int_t)s->checkpoints,
		"covered_seq", (json_int_t)s->covered_seq, "head_seq", (json_int_t)s->head_seq,
		"key_id", s->key_id, "witness", s->witness_checked,
		"problem", s->ok ? json_null() : json_string(s->problem)));
}

static int add_notes_json(json_t *j, const docket_witness_report *w)
{
	return json_object_set_new(j, "witnesses", json_pack("{s:b, s:I, s:I, s:I, s:I, s:o}",
		"ok", w->ok, "notes", (json_int_t)w->notes, "cosigners", (json_int_t)w->cosigners,
		"required", (json_int_t)w->required, "witnessed_size", (json_int_t)w->largest_size,
		"problem", w->ok ? json_null() : json_string(w->problem)));
}

static int add_git_json(json_t *j, const docket_git_report *r)
{
	return json_object_set_new(j, "git", json_pack("{s:b, s:I, s:I, s:I, s:o}",
		"ok", r->ok, "commits", (json_int_t)r->commits,
		"events_checked", (json_int_t)r->events_checked, "head_seq", (json_int_t)r->head_seq,
		"problem", r->ok ? json_null() : json_string(r->problem)));
}

/* The optional checks after a good chain; returns <0 when one could not run. */
static int run_extra(docket_ledger *ledger, const verify_args *a, docket_seal_report *seal,
		     docket_witness_report *notes, docket_git_report *git)
{
	int error;

	if (a->pubkey && (error = docket_ledger_verify_seal(ledger, a->pubkey, a->witness, seal)) < 0)
		return error;
	if (a->nnotes && (error = docket_ledger_verify_notes(ledger, a->pubkey, a->notes, a->nnotes,
							      a->keys.v, a->keys.n, (size_t)a->required,
							      notes)) < 0)
		return error;
	if (a->git && (error = docket_git_verify(ledger, a->git, git)) < 0)
		return error;
	return 0;
}

static int report_all(const verify_args *a, const cli_global *g, const docket_verify_report *chain,
		      const docket_seal_report *seal, const docket_witness_report *notes,
		      const docket_git_report *git, int ok)
{
	size_t spooled = 0;
	json_t *j;

	/* hook records waiting in the spool are not in the chain yet (docs/write-path.md §3) */
	if (docket_spool_count(g->ledger_path, &spooled) < 0)
		docket_error_clear();
	if (!a->json) {
		print_chain(chain, g);
		if (spooled)
			printf("spool: %zu record%s of hooks not in the chain yet (the ledger's writer lock was "
			       "held); the next write folds them\n", spooled, spooled == 1 ? "" : "s");
		if (chain->ok && a->pubkey)
			print_seal(seal, g);
		if (chain->ok && a->nnotes)
			print_notes(notes, a, g);
		if (chain->ok && a->git)
			print_git(git, g);
		return CLI_EXIT_OK;
	}
	j = chain_json(chain);
	if (j && chain->ok && a->pubkey && add_seal_json(j, seal) < 0)
		json_decref(j), j = NULL;
	if (j && chain->ok && a->nnotes && add_notes_json(j, notes) < 0)
		json_decref(j), j = NULL;
	if (j && chain->ok && a->git && add_git_json(j, git) < 0)
		json_decref(j), j = NULL;
	if (j && (a->pubkey || a->git) && json_object_set_new(j, "ok", json_boolean(ok)) < 0)
		json_decref(j), j = NULL;
	if (j && spooled && json_object_set_new(j, "spool_entries", json_integer((json_int_t)spooled)) < 0)
		json_decref(j), j = NULL;
	return cli_print_json(j);
}

/*
 * What the reading child tells its parent. The data file may be damaged in
 * ways LMDB does not check (it trusts its pages), so verify reads it in a
 * child process: a crash there is a finding about the file, exit 1, not a
 * signal (docs/audit.md).
 */
typedef struct verify_outcome {
	int stage;        /* 0 open failed, 1 verify could not run, 2 extra checks could not run, 3 done */
	int error;        /* the DOCKET_E* code of a failed stage */
	docket_error err; /* its message */
	docket_verify_report report;
	docket_seal_report seal;
	docket_witness_report notes;
	docket_git_report git;
} verify_outcome;

static void verify_in_child(const cli_global *g, const verify_args *a, verify_outcome *o)
{
	docket_open_options opts = DOCKET_OPEN_OPTIONS_INIT;
	docket_ledger *ledger = NULL;

	cli_fold_spool(g);  /* readers fold first */
	opts.flags = CLI_OPEN_READ;
	opts.map_size_max = g->map_max;
	docket_error_clear();
	o->stage = 0;
	if ((o->error = docket_ledger_open(&ledger, g->ledger_path, &opts)) < 0)
		goto out;
	o->stage = 1;
	if ((o->error = docket_ledger_verify(ledger, &o->report)) < 0)
		goto out;
	o->report.problem[sizeof(o->report.problem) - 1] = '\0';
	o->stage = 2;
	if (o->report.ok && (o->error = run_extra(ledger, a, &o->seal, &o->notes, &o->git)) < 0)
		goto out;
	o->stage = 3;
out:
	if (o->error < 0)
		o->err = *docket_error_last();
	docket_ledger_free(ledger);
}

/* 1 when the whole outcome arrived, 0 when the child died before sending it. */
static int read_all(int fd, void *p, size_t n)
{
	for (size_t off = 0; off < n;) {
		ssize_t r = read(fd, (char *)p + off, n - off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return 0;
		off += (size_t)r;
	}
	return 1;
}

/*
 * Run verify_in_child() in a child; fill `o`. A child that dies before it
 * reports (a signal inside LMDB on a damaged page, or any other death) is
 * reported as a corrupt data file in `o->report`.
 */
static int verify_guarded(const cli_global *g, const verify_args *a, verify_outcome *o)
{
	int fds[2], status = 0, got;
	pid_t pid;

	memset(o, 0, sizeof(*o));
	if (pipe(fds) != 0)
		return docket_error_set(DOCKET_ESTORAGE, "cannot create a pipe: %s", strerror(errno));
	fflush(NULL);
	if ((pid = fork()) < 0) {
		close(fds[0]);
		close(fds[1]);
		return docket_error_set(DOCKET_ESTORAGE, "cannot fork: %s", strerror(errno));
	}
	if (pid == 0) {
		verify_outcome *mine = docket_calloc(1, sizeof(*mine));

		close(fds[0]);
		if (!mine)
			_exit(CLI_EXIT_SYSTEM);
		verify_in_child(g, a, mine);
		got = docket_write_all(fds[1], mine, sizeof(*mine));
		docket_free(mine);
		close(fds[1]);
		exit(got == 0 ? 0 : CLI_EXIT_SYSTEM);
	}
	close(fds[1]);
	got = read_all(fds[0], o, sizeof(*o));
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (got)
		return 0;
	memset(o, 0, sizeof(*o));
	o->stage = 1;
	snprintf(o->report.problem, sizeof(o->report.problem),
		 "the data file is corrupt: reading it crashed the checker (%s): a damaged page "
		 "that LMDB could not read",
		 WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "it ended without a report");
	return 0;
}

/* 1 when the file at `path` holds a JSON checkpoint record (its first
 * non-blank byte is '{'), 0 for a signed note, -1 when it cannot be read. */
static int is_json_record(const char *path)
{
	FILE *f = fopen(path, "rb");
	int c;

	if (!f)
		return -1;
	while ((c = fgetc(f)) == ' ' || c == '\n' || c == '\t' || c == '\r')
		;
	fclose(f);
	return c == '{';
}

/* Sort --witness files into the JSON record and the notes; check the rest. */
static int check_witness_args(verify_args *a)
{
	if ((a->witnesses.n || a->keys.n) && !a->pubkey) {
		cli_error("--witness and --witness-key need --pubkey");
		return CLI_EXIT_USAGE;
	}
	for (size_t i = 0; i < a->witnesses.n; i++) {
		const char *path = a->witnesses.v[i];
		int json = is_json_record(path);

		if (json < 0) {
			cli_error("cannot read %s: %s", path, strerror(errno));
			return CLI_EXIT_USAGE;
		}
		if (json && a->witness) {
			cli_error("only one --witness may be a JSON checkpoint record");
			return CLI_EXIT_USAGE;
		}
		if (json)
			a->witness = path;
		else
			a->notes[a->nnotes++] = path;
	}
	if (a->keys.n && !a->nnotes) {
		cli_error("--witness-key needs a --witness checkpoint note to count cosignatures on");
		return CLI_EXIT_USAGE;
	}
	if (a->required == UINT64_MAX)
		a->required = a->keys.n;
	else if (a->required > a->keys.n) {
		cli_error("--witnesses %llu needs at least that many --witness-key", (unsigned long long)a->required);
		return CLI_EXIT_USAGE;
	}
	return CLI_EXIT_OK;
}

int cmd_verify(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	static const char description[] =
		"Recomputes the hash chain over every event, decodes every segment, rebuilds\n"
		"every index in a scratch copy (in $TMPDIR) and compares it with the stored\n"
		"one. Exit 0 when everything checks out, 1 when something does not (naming\n"
		"the first bad seq, or \"the data file is corrupt\" for a damaged or truncated\n"
		"data.mdb), 2 when there is no ledger at that path, 3 when verify cannot run\n"
		"(the scratch copy ran out of space): neither says anything about the ledger.\n"
		"The reading runs in a child\n"
		"process, so a damaged file ends in a finding, never a crash.\n"
		"\n"
		"--pubkey also checks the signed checkpoints (`docket checkpoint`): every one\n"
		"is signed by that key, none is missing, and the events up to the last one are\n"
		"unmodified and all there, and each checkpoint's Merkle tree root and signed note\n"
		"match the ledger. --witness (repeatable) adds a checkpoint saved elsewhere: a\n"
		"signed note (`docket checkpoint -o FILE`, or co-signed by `docket witness`),\n"
		"which must be signed by the key and be the ledger's tree at its size, or a\n"
		"JSON record (`--record`, older docket), which must be in the ledger; both\n"
		"catch a ledger cut off before its last checkpoints. --witness-key KEY.pub\n"
		"(repeatable) and --witnesses N require N of those witness keys (default: all)\n"
		"to have co-signed a --witness note that matches; other cosignatures are not\n"
		"counted. --git cross-checks an archive made by `docket export --format git`.\n";
	verify_args a;
	const cli_opt opts[] = {
		CLI_OPT_JSON(&a.json),
		{ CLI_OPT_STRING, "pubkey", 0, &a.pubkey, "FILE", "check the checkpoints against this public key", 0 },
		{ CLI_OPT_LIST, "witness", 0, &a.witnesses, "FILE", "a checkpoint kept elsewhere: note or JSON record (repeatable)", 0 },
		{ CLI_OPT_LIST, "witness-key", 0, &a.keys, "KEY", "a witness's public key (repeatable)", 0 },
		{ CLI_OPT_U64, "witnesses", 0, &a.required, "N", "require N witness cosignatures", 0 },
		{ CLI_OPT_STRING, "git", 0, &a.git, "DIR", "cross-check the git archive in DIR", 0 },
		{ CLI_OPT_END, NULL, 0, NULL, NULL, NULL, 0 }
	};
	/* on the stack: the child inherits it and must not leak it */
	verify_outcome outcome, *o = &outcome;
	int rc, error, ok;

	memset(&a, 0, sizeof(a));
	a.required = UINT64_MAX;
	if ((rc = cli_parse(cmd, opts, description, argc, argv)) != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);
	if ((rc = check_witness_args(&a)) != CLI_EXIT_OK) {
		cli_usage_line(stderr, cmd, opts);
		return rc;
	}
	if ((error = verify_guarded(g, &a, o)) < 0)
		return cli_fail(error, "verify could not run");
	if (o->stage < 3 && !(o->stage <= 1 && o->error == DOCKET_ECORRUPT) && o->report.problem[0] == '\0') {
		/* the checker could not run: storage, memory, a missing ledger */
		docket_error_restore(&o->err);
		return o->stage == 0 ? cli_open_failed(g, o->error) : cli_fail(o->error, "verify could not run");
	}
	if (o->stage <= 1 && o->error == DOCKET_ECORRUPT) {
		/* the file itself is damaged (its structure, checked at open) */
		memset(&o->report, 0, sizeof(o->report));
		snprintf(o->report.problem, sizeof(o->report.problem), "%s%.990s",
			 strncmp(o->err.message, "the data file is corrupt", 24) == 0 ? ""
				 : "the data file is corrupt: ", o->err.message);
	}
	ok = o->stage == 3 && o->report.ok && (!a.pubkey || o->seal.ok) && (!a.nnotes || o->notes.ok) &&
	     (!a.git || o->git.ok);
	if ((rc = report_all(&a, g, &o->report, &o->seal, &o->notes, &o->git, ok)) == CLI_EXIT_OK)
		rc = ok ? CLI_EXIT_OK : CLI_EXIT_FOUND;
	return rc;
}
