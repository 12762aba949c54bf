/* SPDX-License-Identifier: Apache-2.0 */
/*
 * git.c: the git archive (libgit2; optional at build time).
 *
 * Layout of the archive (a bare repository when docket creates it):
 *   sessions/<session>/events.jsonl   the session's events, as `export` writes them
 *   sessions/<session>/summary.md     a Markdown summary of its calls
 *   ledger/events.jsonl               events outside any session (runtime.started)
 * One commit per export, with trailers
 *   Docket-Ledger: <ledger id>
 *   Docket-Head-Seq: <seq of the last event exported>
 *   Docket-Head-Hash: <its chain hash>
 * Exports are incremental: the next one starts after the Head-Seq of HEAD.
 * Pushed anywhere, the repository is a witness of the chain head at each
 * export; docket_git_verify() checks a ledger against it.
 */
#include <string.h>

#include "docket/export.h"
#include "util/error.h"

#ifndef DOCKET_HAVE_GIT2

int docket_git_available(void)
{
	return 0;
}

int docket_export_git(docket_ledger *ledger, const docket_export_options *opts, const char *dir,
		      docket_export_stats *stats)
{
	(void)ledger;
	(void)opts;
	(void)dir;
	if (stats)
		memset(stats, 0, sizeof(*stats));
	return docket_error_set(DOCKET_EINVALID, "this docket was built without libgit2: no git archive");
}

int docket_git_verify(docket_ledger *ledger, const char *dir, docket_git_report *rep)
{
	(void)ledger;
	(void)dir;
	memset(rep, 0, sizeof(*rep));
	return docket_error_set(DOCKET_EINVALID, "this docket was built without libgit2: no git archive");
}

#else

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <git2.h>
#include <openssl/evp.h>

#include "export_internal.h"
#include "util/alloc.h"
#include "util/json.h"

#define TRAILER_LEDGER "Docket-Ledger"
#define TRAILER_SEQ "Docket-Head-Seq"
#define TRAILER_HASH "Docket-Head-Hash"
#define NO_SESSION_DIR "ledger"

int docket_git_available(void)
{
	return 1;
}

static int git_fail(const char *what)
{
	const git_error *e = git_error_last();

	return docket_error_set(DOCKET_ESTORAGE, "git: %s: %s", what, e && e->message ? e->message : "failed");
}

/* libgit2 is initialised once per call and shut down after it. */
static int open_repo(git_repository **out, const char *dir, int create)
{
	struct stat st;

	*out = NULL;
	if (stat(dir, &st) != 0) {
		if (!create)
			return docket_error_set(DOCKET_ENOTFOUND, "no git archive at %s", dir);
		return git_repository_init(out, dir, 1) == 0 ? 0 : git_fail("create the archive");
	}
	return git_repository_open(out, dir) == 0 ? 0 : git_fail("open the archive");
}

/* ---- commit trailers --------------------------------------------------- */

typedef struct head_mark {
	int found;
	char ledger[33];
	uint64_t seq;
	char hash[65];
} head_mark;

static int parse_marks(head_mark *m, const char *message)
{
	git_message_trailer_array arr;

	memset(m, 0, sizeof(*m));
	if (git_message_trailers(&arr, message) != 0)
		return 0;
	for (size_t i = 0; i < arr.count; i++) {
		const char *k = arr.trailers[i].key, *v = arr.trailers[i].value;

		if (strcmp(k, TRAILER_LEDGER) == 0)
			snprintf(m->ledger, sizeof(m->ledger), "%s", v);
		else if (strcmp(k, TRAILER_SEQ) == 0)
			m->seq = strtoull(v, NULL, 10);
		else if (strcmp(k, TRAILER_HASH) == 0)
			snprintf(m->hash, sizeof(m->hash), "%s", v);
	}
	m->found = m->ledger[0] && m->seq && strlen(m->hash) == 64;
	git_message_trailer_array_free(&arr);
	return 0;
}

/* HEAD's commit (NULL for a new archive). */
static int head_commit(git_commit **out, git_repository *repo)
{
	git_oid oid;
	int rc = git_reference_name_to_id(&oid, repo, "HEAD");

	*out = NULL;
	if (rc == GIT_ENOTFOUND || rc == GIT_EUNBORNBRANCH)
		return 0;
	if (rc != 0 || git_commit_lookup(out, repo, &oid) != 0)
		return git_fail("read HEAD");
	return 0;
}

/* ---- per-session buffers ----------------------------------------------- */

typedef struct session_buf {
	char *id;
	char *dir;       /* sessions/<safe name> or "ledger" */
	docket_buf lines;
} session_buf;

typedef struct git_sink {
	export_sink base;
	session_buf *s;
	size_t n, cap;
	uint64_t last_seq;
	char last_hash[65];
} git_sink;

/* A directory name for a session id: the id when it is tame, else the tame
 * part and a hash, so that no id can escape sessions/ or collide. */
static int session_dir(char **out, const char *id)
{
	docket_buf dir = DOCKET_BUF_INIT;
	size_t n = strlen(id);
	int tame = n > 0 && n <= 120 && id[0] != '.' &&
		   strspn(id, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") == n;
	int error = docket_buf_puts(&dir, *id ? "sessions/" : NO_SESSION_DIR);

	for (size_t i = 0; *id && i < n && i < 60 && error == 0; i++)
		error = docket_buf_putc(&dir, strchr("/\\.:", id[i]) || (unsigned char)id[i] < 0x20 ? '_' : id[i]);
	if (error == 0 && *id && !tame) {
		uint8_t md[32];
		char hex[65];

		if (EVP_Digest(id, n, md, NULL, EVP_sha256(), NULL) != 1)
			error = docket_error_set(DOCKET_ERROR, "SHA-256 failed");
		docket_hex(hex, md, sizeof(md));
		if (error == 0)
			error = docket_buf_printf(&dir, "-%.12s", hex);
	}
	if (error < 0) {
		docket_buf_dispose(&dir);
		return error;
	}
	*out = dir.ptr;
	return 0;
}

static int find_session(session_buf **out, git_sink *g, const char *id)
{
	session_buf *sb = NULL;
	int error;

	for (size_t i = 0; i < g->n; i++)
		if (strcmp(g->s[i].id, id) == 0) {
			*out = &g->s[i];
			return 0;
		}
	if (g->n == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 8;
		session_buf *grown = docket_realloc(g->s, cap * sizeof(*grown));

		if (!grown)
			return docket_error_set_oom();
		g->s = grown;
		g->cap = cap;
	}
	sb = &g->s[g->n];
	memset(sb, 0, sizeof(*sb));
	if (!(sb->id = docket_strdup(id)))
		return docket_error_set_oom();
	if ((error = session_dir(&sb->dir, id)) < 0) {
		docket_free(sb->id);
		return error;
	}
	g->n++;
	*out = sb;
	return 0;
}

static int git_event(export_sink *s, const json_t *ev, int emit)
{
	git_sink *g = (git_sink *)s;
	session_buf *sb = NULL;
	int error;

	(void)emit;
	if ((error = find_session(&sb, g, jstr(ev, "session"))) < 0 ||
	    (error = docket_json_dump(&sb->lines, ev)) < 0 || (error = docket_buf_putc(&sb->lines, '\n')) < 0)
		return error;
	g->last_seq = (uint64_t)json_integer_value(json_object_get(ev, "seq"));
	snprintf(g->last_hash, sizeof(g->last_hash), "%s", jstr(ev, "hash"));
	s->stats->records++;
	return 0;
}

static int git_finish(export_sink *s)
{
	(void)s;
	return 0;
}

static void git_sink_free(export_sink *s)
{
	git_sink *g = (git_sink *)s;

	for (size_t i = 0; i < g->n; i++) {
		docket_free(g->s[i].id);
		docket_free(g->s[i].dir);
		docket_buf_dispose(&g->s[i].lines);
	}
	docket_free(g->s);
	docket_free(g);
}

/* ---- trees ------------------------------------------------------------- */

/* The content of `path` in `tree` (empty when absent), appended to `out`. */
static int read_path(docket_buf *out, git_repository *repo, git_tree *tree, const char *path)
{
	git_tree_entry *entry = NULL;
	git_blob *blob = NULL;
	int error = 0;

	if (!tree || git_tree_entry_bypath(&entry, tree, path) != 0)
		return 0;
	if (git_blob_lookup(&blob, repo, git_tree_entry_id(entry)) != 0)
		error = git_fail("read an archived file");
	else
		error = docket_buf_put(out, git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob));
	git_blob_free(blob);
	git_tree_entry_free(entry);
	return error;
}

static int write_blob(git_oid *out, git_repository *repo, const docket_buf *content)
{
	return git_blob_create_from_buffer(out, repo, content->ptr ? content->ptr : "", content->len) == 0
		? 0 : git_fail("write a file");
}

/* One Markdown table cell: pipes escaped, line breaks as spaces. */
static int md_cell(docket_buf *md, const char *text, int code)
{
	int quoted = code && *text;
	int error = docket_buf_puts(md, quoted ? " `" : " ");

	for (; *text && error == 0; text++)
		error = *text == '|' ? docket_buf_puts(md, "\\|")
		      : *text == '\n' || *text == '\r' ? docket_buf_putc(md, ' ')
		      : *text == '`' && code ? docket_buf_putc(md, '\'')
		      : docket_buf_putc(md, *text);
	if (error == 0)
		error = docket_buf_puts(md, quoted ? "` |" : " |");
	return error;
}

static int summary_row(docket_buf *md, const json_t *inv)
{
	docket_buf approval = DOCKET_BUF_INIT;
	int error = docket_buf_printf(&approval, "%s%s%s", jstr(inv, "result"),
				      *jstr(inv, "actor") ? " by " : "", jstr(inv, "actor"));

	if (error == 0) error = docket_buf_putc(md, '|');
	if (error == 0) error = md_cell(md, jstr(inv, "invocation"), 1);
	if (error == 0) error = md_cell(md, jstr(inv, "tool"), 0);
	if (error == 0) error = md_cell(md, jstr(inv, "summary"), 1);
	if (error == 0) error = md_cell(md, jstr(inv, "verdict"), 0);
	if (error == 0) error = md_cell(md, approval.ptr ? approval.ptr : "", 0);
	if (error == 0) error = md_cell(md, *jstr(inv, "status") ? jstr(inv, "status") : "pending", 0);
	if (error == 0) error = docket_buf_putc(md, '\n');
	docket_buf_dispose(&approval);
	return error;
}

/* summary.md of one session from all its archived events. */
static int summary_markdown(docket_buf *md, const char *session, const docket_buf *events)
{
	collector c;
	const char *line = events->ptr, *end = events->ptr + events->len;
	const json_t *inv;
	size_t i;
	int error;

	if ((error = collector_init(&c, 0)) < 0)
		return error;
	while (error == 0 && line && line < end) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		json_t *ev = NULL;

		if ((error = docket_json_parse(&ev, line, (size_t)((nl ? nl : end) - line))) == 0)
			error = collector_add(&c, ev);
		json_decref(ev);
		line = nl ? nl + 1 : end;
	}
	if (error == 0)
		error = docket_buf_printf(md, "# Session %s\n\n| call | tool | what | verdict | approval | status |\n"
					  "|---|---|---|---|---|---|\n", *session ? session : "(none)");
	json_array_foreach(c.invocations, i, inv)
		if (error == 0)
			error = summary_row(md, inv);
	collector_dispose(&c);
	return error;
}

typedef struct tree_updates {
	git_tree_update *u;
	char **paths;
	size_t n;
} tree_updates;

static int add_update(tree_updates *t, git_repository *repo, const char *dir, const char *name,
		      const docket_buf *content)
{
	docket_buf path = DOCKET_BUF_INIT;
	int error;

	if ((error = docket_buf_printf(&path, "%s/%s", dir, name)) < 0)
		return error;
	memset(&t->u[t->n], 0, sizeof(t->u[t->n]));
	if ((error = write_blob(&t->u[t->n].id, repo, content)) < 0) {
		docket_buf_dispose(&path);
		return error;
	}
	t->u[t->n].action = GIT_TREE_UPDATE_UPSERT;
	t->u[t->n].filemode = GIT_FILEMODE_BLOB;
	t->u[t->n].path = path.ptr;
	t->paths[t->n++] = path.ptr;
	return 0;
}

static int session_updates(tree_updates *t, git_repository *repo, git_tree *base, const session_buf *sb)
{
	docket_buf all = DOCKET_BUF_INIT, md = DOCKET_BUF_INIT, path = DOCKET_BUF_INIT;
	int error;

	if ((error = docket_buf_printf(&path, "%s/events.jsonl", sb->dir)) < 0 ||
	    (error = read_path(&all, repo, base, path.ptr)) < 0 ||
	    (error = docket_buf_put(&all, sb->lines.ptr, sb->lines.len)) < 0 ||
	    (error = add_update(t, repo, sb->dir, "events.jsonl", &all)) < 0 ||
	    (error = summary_markdown(&md, sb->id, &all)) < 0 ||
	    (error = add_update(t, repo, sb->dir, "summary.md", &md)) < 0)
		goto cleanup;
cleanup:
	docket_buf_dispose(&all);
	docket_buf_dispose(&md);
	docket_buf_dispose(&path);
	return error;
}

static int base_tree(git_tree **out, git_repository *repo, git_commit *head)
{
	git_treebuilder *tb = NULL;
	git_oid oid;

	*out = NULL;
	if (head)
		return git_commit_tree(out, head) == 0 ? 0 : git_fail("read the tree");
	if (git_treebuilder_new(&tb, repo, NULL) != 0 || git_treebuilder_write(&oid, tb) != 0) {
		git_treebuilder_free(tb);
		return git_fail("write an empty tree");
	}
	git_treebuilder_free(tb);
	return git_tree_lookup(out, repo, &oid) == 0 ? 0 : git_fail("read the tree");
}

static int build_tree(git_oid *out, git_repository *repo, git_commit *head, const git_sink *g)
{
	tree_updates t = { NULL, NULL, 0 };
	git_tree *base = NULL;
	int error;

	if (!(t.u = docket_calloc(2 * g->n + 1, sizeof(*t.u))) || !(t.paths = docket_calloc(2 * g->n + 1, sizeof(char *)))) {
		error = docket_error_set_oom();
		goto cleanup;
	}
	if ((error = base_tree(&base, repo, head)) < 0)
		goto cleanup;
	for (size_t i = 0; i < g->n && error == 0; i++)
		error = session_updates(&t, repo, base, &g->s[i]);
	if (error == 0 && git_tree_create_updated(out, repo, base, t.n, t.u) != 0)
		error = git_fail("write the tree");
cleanup:
	for (size_t i = 0; t.paths && i < t.n; i++)
		docket_free(t.paths[i]);
	docket_free(t.paths);
	docket_free(t.u);
	git_tree_free(base);
	return error;
}

static int commit_export(git_repository *repo, git_commit *head, const git_sink *g, uint64_t from)
{
	docket_buf msg = DOCKET_BUF_INIT;
	git_signature *sig = NULL;
	git_tree *tree = NULL;
	git_oid tree_id, commit_id;
	const git_commit *parents[1] = { head };
	int error;

	if ((error = build_tree(&tree_id, repo, head, g)) < 0)
		return error;
	if ((error = docket_buf_printf(&msg, "docket export: seq %llu..%llu (%llu events)\n\n"
				       TRAILER_LEDGER ": %s\n" TRAILER_SEQ ": %llu\n" TRAILER_HASH ": %s\n",
				       (unsigned long long)from, (unsigned long long)g->last_seq,
				       (unsigned long long)g->base.stats->records, g->base.ledger_id,
				       (unsigned long long)g->last_seq, g->last_hash)) < 0)
		goto cleanup;
	if (git_tree_lookup(&tree, repo, &tree_id) != 0 || git_signature_now(&sig, "docket", "docket@localhost") != 0 ||
	    git_commit_create(&commit_id, repo, "HEAD", sig, sig, NULL, msg.ptr, tree, head ? 1 : 0, parents) != 0)
		error = git_fail("commit");
cleanup:
	git_signature_free(sig);
	git_tree_free(tree);
	docket_buf_dispose(&msg);
	return error;
}

static int check_mark_ledger(const head_mark *m, const char *ledger_id)
{
	if (m->found && strcmp(m->ledger, ledger_id) != 0)
		return docket_error_set(DOCKET_EINVALID, "the archive belongs to ledger %s, not to %s",
					m->ledger, ledger_id);
	return 0;
}

static int export_into(git_repository *repo, docket_ledger *ledger, const docket_export_options *opts,
		       docket_export_stats *stats)
{
	docket_export_options o = *opts;
	docket_ledger_info info;
	git_commit *head = NULL;
	git_sink *g = NULL;
	head_mark mark;
	int error;

	if ((error = head_commit(&head, repo)) < 0 || (error = docket_ledger_info_get(ledger, &info)) < 0)
		goto cleanup;
	parse_marks(&mark, head ? git_commit_message(head) : "");
	if ((error = check_mark_ledger(&mark, info.ledger_id)) < 0)
		goto cleanup;
	if (!(g = docket_calloc(1, sizeof(*g)))) {
		error = docket_error_set_oom();
		goto cleanup;
	}
	g->base.event = git_event;
	g->base.finish = git_finish;
	g->base.free = git_sink_free;
	o.session = NULL;
	o.since_ms = 0;
	o.since_seq = mark.seq + 1;
	if ((error = export_run(ledger, &o, &g->base, NULL, stats)) < 0)
		goto cleanup;
	stats->head_seq = g->n ? g->last_seq : mark.seq;
	if (g->n)
		error = commit_export(repo, head, g, mark.seq + 1);
cleanup:
	if (g)
		git_sink_free(&g->base);
	git_commit_free(head);
	return error;
}

int docket_export_git(docket_ledger *ledger, const docket_export_options *opts, const char *dir,
		      docket_export_stats *stats)
{
	docket_export_options defaults = DOCKET_EXPORT_OPTIONS_INIT;
	docket_export_stats own;
	git_repository *repo = NULL;
	int error;

	if (!stats)
		stats = &own;
	memset(stats, 0, sizeof(*stats));
	git_libgit2_init();
	if ((error = open_repo(&repo, dir, 1)) == 0)
		error = export_into(repo, ledger, opts ? opts : &defaults, stats);
	git_repository_free(repo);
	git_libgit2_shutdown();
	return error;
}

/* ---- verification ------------------------------------------------------ */

static int problem(docket_git_report *rep, const char *fmt, ...) DOCKET_PRINTF(2, 3);

static int problem(docket_git_report *rep, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rep->problem, sizeof(rep->problem), fmt, ap);
	va_end(ap);
	return 1;
}

typedef struct git_check {
	docket_ledger *ledger;
	docket_ledger_info info;
	docket_git_report *rep;
	json_t *archived;   /* "seq" -> hash, from the archive's files */
	uint64_t matched;
} git_check;

static int hash_of(void *ctx, uint64_t seq, json_t *ev)
{
	char *out = ctx;

	(void)seq;
	snprintf(out, 65, "%s", jstr(ev, "hash"));
	return 1;
}

static int check_mark(git_check *c, const head_mark *m, const char *commit)
{
	docket_read_options o = DOCKET_READ_OPTIONS_INIT;
	char hash[65] = "";
	int error;

	if (strcmp(m->ledger, c->info.ledger_id) != 0)
		return problem(c->rep, "commit %.12s names ledger %s, not this ledger (%s)", commit, m->ledger,
			       c->info.ledger_id);
	if (m->seq > c->info.events)
		return problem(c->rep, "commit %.12s records head seq %llu but the ledger ends at seq %llu: "
			       "events were removed", commit, (unsigned long long)m->seq,
			       (unsigned long long)c->info.events);
	o.since = m->seq;
	o.limit = 1;
	if ((error = docket_ledger_read_json(c->ledger, &o, hash_of, hash)) < 0)
		return error;
	if (strcmp(hash, m->hash) != 0)
		return problem(c->rep, "commit %.12s records hash %.16s... at seq %llu, the ledger has %.16s...: "
			       "the ledger was rewritten", commit, m->hash, (unsigned long long)m->seq, hash);
	if (c->rep->commits++ == 0)
		c->rep->head_seq = m->seq;
	return 0;
}

static int check_commits(git_check *c, git_repository *repo)
{
	git_revwalk *walk = NULL;
	git_oid oid;
	int error = 0;

	if (git_revwalk_new(&walk, repo) != 0 || git_revwalk_push_head(walk) != 0) {
		git_revwalk_free(walk);
		return problem(c->rep, "the archive has no commits");
	}
	git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL | GIT_SORT_TIME);
	while (error == 0 && git_revwalk_next(&oid, walk) == 0) {
		git_commit *commit = NULL;
		head_mark m;
		char id[GIT_OID_HEXSZ + 1];

		if (git_commit_lookup(&commit, repo, &oid) != 0) {
			error = git_fail("read a commit");
			break;
		}
		parse_marks(&m, git_commit_message(commit));
		git_oid_tostr(id, sizeof(id), &oid);
		if (m.found)
			error = check_mark(c, &m, id);
		git_commit_free(commit);
	}
	git_revwalk_free(walk);
	if (error == 0 && c->rep->commits == 0)
		error = problem(c->rep, "no commit of the archive carries a docket chain head");
	return error;
}

/* Collect seq -> hash from one events.jsonl blob. */
static int collect_lines(git_check *c, const char *text, size_t len, const char *path)
{
	const char *line = text, *end = text + len;
	int error = 0;

	while (error == 0 && line < end) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		json_t *ev = NULL;
		char key[24];

		if (docket_json_parse(&ev, line, (size_t)((nl ? nl : end) - line)) < 0 ||
		    !json_is_integer(json_object_get(ev, "seq"))) {
			json_decref(ev);
			return problem(c->rep, "%s: a line is not an exported event", path);
		}
		snprintf(key, sizeof(key), "%lld", (long long)json_integer_value(json_object_get(ev, "seq")));
		if (json_object_set_new(c->archived, key, json_string(jstr(ev, "hash"))) < 0)
			error = docket_error_set_oom();
		json_decref(ev);
		line = nl ? nl + 1 : end;
	}
	return error;
}

typedef struct walk_ctx {
	git_check *c;
	git_repository *repo;
	int error;
} walk_ctx;

static int tree_entry(const char *root, const git_tree_entry *entry, void *payload)
{
	walk_ctx *w = payload;
	git_blob *blob = NULL;
	docket_buf path = DOCKET_BUF_INIT;

	if (strcmp(git_tree_entry_name(entry), "events.jsonl") != 0 || git_tree_entry_type(entry) != GIT_OBJECT_BLOB)
		return 0;
	if (git_blob_lookup(&blob, w->repo, git_tree_entry_id(entry)) != 0) {
		w->error = git_fail("read an archived file");
		return -1;
	}
	if ((w->error = docket_buf_printf(&path, "%s%s", root, git_tree_entry_name(entry))) == 0)
		w->error = collect_lines(w->c, git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob), path.ptr);
	git_blob_free(blob);
	docket_buf_dispose(&path);
	return w->error ? -1 : 0;
}

static int compare_event(void *ctx, uint64_t seq, json_t *ev)
{
	git_check *c = ctx;
	char key[24];
	const char *archived;

	if (seq > c->rep->head_seq)
		return 1;
	snprintf(key, sizeof(key), "%llu", (unsigned long long)seq);
	archived = json_string_value(json_object_get(c->archived, key));
	if (!archived)
		return problem(c->rep, "event seq %llu is missing from the archive", (unsigned long long)seq);
	if (strcmp(archived, jstr(ev, "hash")) != 0)
		return problem(c->rep, "event seq %llu differs between the archive and the ledger",
			       (unsigned long long)seq);
	c->matched++;
	return 0;
}

static int check_files(git_check *c, git_repository *repo)
{
	walk_ctx w = { c, repo, 0 };
	git_commit *head = NULL;
	git_tree *tree = NULL;
	int error;

	if ((error = head_commit(&head, repo)) < 0 || !head)
		return error;
	if (git_commit_tree(&tree, head) != 0)
		error = git_fail("read the tree");
	else if (git_tree_walk(tree, GIT_TREEWALK_PRE, tree_entry, &w) != 0)
		error = w.error ? w.error : git_fail("walk the tree");
	git_tree_free(tree);
	git_commit_free(head);
	if (error != 0)
		return error;
	if ((error = docket_ledger_read_json(c->ledger, NULL, compare_event, c)) != 0)
		return error;
	if (json_object_size(c->archived) != c->matched)
		return problem(c->rep, "the archive holds %zu events, the ledger %llu up to its head seq",
			       json_object_size(c->archived), (unsigned long long)c->matched);
	c->rep->events_checked = c->matched;
	return 0;
}

int docket_git_verify(docket_ledger *ledger, const char *dir, docket_git_report *rep)
{
	git_repository *repo = NULL;
	git_check c;
	int error;

	memset(rep, 0, sizeof(*rep));
	memset(&c, 0, sizeof(c));
	c.ledger = ledger;
	c.rep = rep;
	if ((error = docket_ledger_info_get(ledger, &c.info)) < 0)
		return error;
	if (!(c.archived = json_object()))
		return docket_error_set_oom();
	git_libgit2_init();
	if ((error = open_repo(&repo, dir, 0)) == 0 && (error = check_commits(&c, repo)) == 0)
		error = check_files(&c, repo);
	git_repository_free(repo);
	git_libgit2_shutdown();
	json_decref(c.archived);
	if (error < 0)
		return error;
	rep->ok = error == 0;
	return 0;
}

#endif
