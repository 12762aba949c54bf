/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_import.c: `docket import codex|claude PATH...`: agent transcripts
 * become ledger sessions (include/docket/import.h, docs/import.md).
 *
 * A PATH that is a directory is searched recursively for *.jsonl files
 * (Claude Code keeps subagents in <session>/subagents/). Files are imported
 * in path order, each in large batches; importing again adds only what is
 * new. With --strict every file is mapped once without writing first, and a
 * single malformed or unknown line refuses the whole import (exit 2).
 */
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "docket/import.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/error.h"

#define DEPTH_MAX 16

/* A file to import: its path, its format, and whether the user named it. */
typedef struct import_file {
	char *path;
	docket_import_format format;
	int named;       /* given on the command line (not found in a directory) */
	int skip;        /* found in a directory, of no known format */
} import_file;

typedef struct path_list {
	import_file *v;
	size_t n, cap;
} path_list;

static int list_add(path_list *l, const char *path, int named)
{
	char *copy;

	if (l->n == l->cap) {
		import_file *v = docket_array_grow(l->v, &l->cap, sizeof(*v), 16);

		if (!v)
			return DOCKET_ENOMEM;
		l->v = v;
	}
	if (!(copy = docket_strdup(path)))
		return docket_error_set_oom();
	memset(&l->v[l->n], 0, sizeof(l->v[l->n]));
	l->v[l->n].path = copy;
	l->v[l->n++].named = named;
	return 0;
}

static void list_free(path_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		docket_free(l->v[i].path);
	docket_free(l->v);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const import_file *)a)->path, ((const import_file *)b)->path);
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Every *.jsonl under `dir` (symbolic links to directories are not followed). */
static int collect_dir(path_list *out, const char *dir, int depth)
{
	docket_buf path = DOCKET_BUF_INIT;
	struct dirent *e;
	struct stat st;
	DIR *d;
	int error = 0;

	if (depth > DEPTH_MAX)
		return 0;
	if (!(d = opendir(dir)))
		return docket_error_set(DOCKET_ESTORAGE, "%s: %s", dir, strerror(errno));
	while (error == 0 && (e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		docket_buf_clear(&path);
		if ((error = docket_buf_printf(&path, "%s/%s", dir, e->d_name)) < 0)
			break;
		if (lstat(path.ptr, &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode))
			error = collect_dir(out, path.ptr, depth + 1);
		else if ((S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) && ends_with(e->d_name, ".jsonl"))
			error = list_add(out, path.ptr, 0);
	}
	closedir(d);
	docket_buf_dispose(&path);
	return error;
}

/* Files and directories from the command line -> the files to import. */
static int collect(path_list *out, const cli_args *args)
{
	struct stat st;
	size_t first;
	int i, error;

	for (i = 0; i < args->n; i++) {
		const char *p = args->v[i];

		if (stat(p, &st) != 0)
			return docket_error_set(DOCKET_ENOTFOUND, "%s: %s", p, strerror(errno));
		if (!S_ISDIR(st.st_mode)) {
			if ((error = list_add(out, p, 1)) < 0)
				return error;
			continue;
		}
		first = out->n;
		if ((error = collect_dir(out, p, 0)) < 0)
			return error;
		qsort(out->v + first, out->n - first, sizeof(*out->v), by_name);
	}
	return 0;
}

/* ---- progress and summary ---- */

static void progress(void *ctx, const char *file, uint64_t done, uint64_t total)
{
	const char *base = strrchr(file, '/');

	(void)ctx;
	fprintf(stderr, "\rdocket: importing %.60s: %3u%%\033[K", base ? base + 1 : file,
		total ? (unsigned)(done * 100 / total) : 100u);
}

static json_t *stats_json(const docket_import_stats *s)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I,"
			 " s:I, s:I, s:I, s:I, s:I, s:s?}",
			 "files", (json_int_t)s->files, "bytes", (json_int_t)s->bytes,
			 "lines", (json_int_t)s->lines, "lines_resumed", (json_int_t)s->lines_resumed,
			 "sessions", (json_int_t)s->sessions, "policies", (json_int_t)s->policies,
			 "calls", (json_int_t)s->calls, "results", (json_int_t)s->results,
			 "ok", (json_int_t)s->ok, "errors", (json_int_t)s->errors,
			 "approvals", (json_int_t)s->approvals, "denials", (json_int_t)s->denials,
			 "cancelled", (json_int_t)s->cancelled, "orphans", (json_int_t)s->orphans,
			 "events_written", (json_int_t)s->appended,
			 "events_already_recorded", (json_int_t)s->duplicates,
			 "malformed", (json_int_t)s->malformed, "unknown", (json_int_t)s->unknown,
			 "incomplete", (json_int_t)s->incomplete,
			 "first_problem", s->first_problem[0] ? s->first_problem : NULL);
}

static void summary(FILE *f, const docket_import_stats *s)
{
	fprintf(f, "files      %llu (%llu lines, %llu already imported)\n",
		(unsigned long long)s->files, (unsigned long long)s->lines,
		(unsigned long long)s->lines_resumed);
	fprintf(f, "sessions   %llu (%llu policy revisions)\n", (unsigned long long)s->sessions,
		(unsigned long long)s->policies);
	fprintf(f, "calls      %llu (%llu with an outcome)\n", (unsigned long long)s->calls,
		(unsigned long long)s->results);
	fprintf(f, "outcomes   %llu ok, %llu failed, %llu denied, %llu cancelled\n",
		(unsigned long long)s->ok, (unsigned long long)s->errors,
		(unsigned long long)s->denials, (unsigned long long)s->cancelled);
	fprintf(f, "approvals  %llu\n", (unsigned long long)s->approvals);
	fprintf(f, "events     %llu written, %llu already recorded\n",
		(unsigned long long)s->appended, (unsigned long long)s->duplicates);
	fprintf(f, "skipped    %llu malformed, %llu unknown\n",
		(unsigned long long)s->malformed, (unsigned long long)s->unknown);
}

static void warnings(const docket_import_stats *s)
{
	if (s->malformed + s->unknown > 0)
		cli_error("warning: skipped %llu malformed and %llu unknown lines; first: %s",
			  (unsigned long long)s->malformed, (unsigned long long)s->unknown,
			  s->first_problem);
	if (s->incomplete > 0)
		cli_error("warning: %llu file%s end%s in an unterminated line that does not parse yet; "
			  "it is left for the next import", (unsigned long long)s->incomplete,
			  s->incomplete == 1 ? "" : "s", s->incomplete == 1 ? "s" : "");
}

/* ---- formats ---- */

/* The first MiB of `path`: enough for docket_import_detect. */
static int read_head(docket_buf *out, const char *path)
{
	FILE *f = fopen(path, "rb");
	size_t got;
	int error;

	if (!f)
		return docket_error_set(errno == ENOENT ? DOCKET_ENOTFOUND : DOCKET_ESTORAGE, "%s: %s",
					path, strerror(errno));
	if ((error = docket_buf_reserve(out, (size_t)1 << 20)) == 0) {
		got = fread(out->ptr, 1, ((size_t)1 << 20) - 1, f);
		out->len = got;
		if (got == 0 && ferror(f))
			error = docket_error_set(DOCKET_ESTORAGE, "%s: %s", path, strerror(errno));
	}
	fclose(f);
	return error;
}

/*
 * The format of every file, before anything is written. A named file of no
 * known format, or of the other format than FORMAT, refuses the import with
 * the command that would work; a file found in a directory that is no
 * transcript is skipped (and said so).
 */
static int detect_all(path_list *files, const docket_import_format *given)
{
	docket_buf head = DOCKET_BUF_INIT;
	size_t i;
	int error = 0;

	for (i = 0; i < files->n && error == 0; i++) {
		import_file *f = &files->v[i];

		docket_buf_clear(&head);
		if ((error = read_head(&head, f->path)) < 0)
			break;
		if (docket_import_detect(&f->format, head.ptr ? head.ptr : "", head.len) < 0) {
			if (f->named) {
				error = docket_error_set(DOCKET_EINVALID,
							 "%s: not a Codex rollout or a Claude Code transcript; nothing imported "
							 "(docs/import.md lists what each one looks like)", f->path);
				break;
			}
			docket_error_clear();
			f->skip = 1;
			cli_error("warning: %s: not a Codex rollout or a Claude Code transcript; skipped", f->path);
			continue;
		}
		if (given && f->format != *given)
			error = docket_error_set(DOCKET_EINVALID,
						 "%s: a %s, not a %s; nothing imported (run: docket import %s %s, "
						 "or leave FORMAT out)", f->path,
						 f->format == DOCKET_IMPORT_CODEX ? "Codex rollout" : "Claude Code transcript",
						 *given == DOCKET_IMPORT_CODEX ? "Codex rollout" : "Claude Code transcript",
						 docket_import_format_name(f->format), f->path);
	}
	docket_buf_dispose(&head);
	return error;
}

/* Nothing came of the files: no session, no event written or already recorded. */
static int nothing_imported(const docket_import_stats *s)
{
	return s->sessions == 0 && s->appended == 0 && s->duplicates == 0 && s->lines_resumed == 0;
}

/* ---- strict pre-check ---- */

static int drop(void *ctx, json_t *event)
{
	(void)ctx;
	json_decref(event);
	return 0;
}

static int read_whole(docket_buf *out, const char *path)
{
	FILE *f = fopen(path, "rb");
	int error = 0;

	if (!f)
		return docket_error_set(errno == ENOENT ? DOCKET_ENOTFOUND : DOCKET_ESTORAGE, "%s: %s",
					path, strerror(errno));
	for (;;) {
		size_t got;

		if ((error = docket_buf_reserve(out, 1 << 20)) < 0)
			break;
		got = fread(out->ptr + out->len, 1, out->cap - out->len - 1, f);
		out->len += got;
		if (got == 0) {
			if (ferror(f))
				error = docket_error_set(DOCKET_ESTORAGE, "%s: %s", path, strerror(errno));
			break;
		}
	}
	fclose(f);
	return error;
}

/* Map every file without writing; the first problem refuses them all. */
static int strict_precheck(const path_list *files)
{
	docket_import_stats s;
	docket_buf text = DOCKET_BUF_INIT;
	size_t i;
	int error = 0;

	memset(&s, 0, sizeof(s));
	for (i = 0; i < files->n && error == 0; i++) {
		if (files->v[i].skip)
			continue;
		docket_buf_clear(&text);
		if ((error = read_whole(&text, files->v[i].path)) == 0)
			error = docket_import_buffer(files->v[i].format, files->v[i].path,
						     text.ptr ? text.ptr : "", text.len, NULL, drop, NULL, &s);
	}
	docket_buf_dispose(&text);
	if (error == 0 && s.malformed + s.unknown > 0)
		error = docket_error_set(DOCKET_EINVALID,
					 "%s (%llu malformed, %llu unknown lines; --strict: nothing imported)",
					 s.first_problem, (unsigned long long)s.malformed,
					 (unsigned long long)s.unknown);
	return error;
}

int cmd_import(const cli_command *cmd, const cli_global *g, int argc, char **argv)
{
	static const char description[] =
		"Imports agent transcripts: Codex CLI rollout files\n"
		"(~/.codex/sessions/.../rollout-*.jsonl) and Claude Code sessions\n"
		"(~/.claude/projects/<project>/*.jsonl with their subagents). The format\n"
		"of each file is detected; FORMAT (codex or claude), when given, must\n"
		"match it. A directory is searched for *.jsonl files (those of no known\n"
		"format are skipped). Every tool call becomes a tool.intent with its\n"
		"outcome, user rejections become denied approvals, each event keeps its\n"
		"original time and its file:line (docs/import.md has the mapping).\n"
		"Importing a file again adds nothing; a file that grew adds only its new\n"
		"lines. A file that fails is rolled back and does not stop a later\n"
		"import. Malformed and unknown lines are skipped and reported; with\n"
		"--strict they refuse the import (exit 2, nothing written). A named file\n"
		"of no known format, or an import that finds nothing, is exit 2.\n";
	cli_args paths = { NULL, 0 };
	int strict = 0, json = 0;
	const cli_opt opts[] = {
		{ CLI_OPT_SWITCH, "strict", 0, &strict, NULL,
		  "a malformed or unknown line is an error: nothing is written", 0 },
		CLI_OPT_JSON(&json),
		{ CLI_OPT_ARGS, "[FORMAT] PATH", 0, &paths, NULL,
		  "codex or claude (optional), then transcript files or directories", CLI_OPT_REQUIRED },
		{ CLI_OPT_END, NULL, 0, NULL, NULL, NULL, 0 }
	};
	docket_import_options o = DOCKET_IMPORT_OPTIONS_INIT;
	docket_import_format format, *given = NULL;
	docket_import_stats stats;
	docket_ledger *ledger = NULL;
	path_list files = { NULL, 0, 0 };
	int rc, error = 0, tty;
	size_t i;

	if ((rc = cli_parse(cmd, opts, description, argc, argv)) != CLI_PARSE_OK)
		return CLI_PARSE_EXIT(rc);
	if (paths.n > 1 && !strchr(paths.v[0], '/') && access(paths.v[0], F_OK) != 0) {
		/* a word before the paths that names no file: a FORMAT */
		if (docket_import_format_parse(&format, paths.v[0]) < 0) {
			cli_error("%s", docket_error_last()->message);
			return CLI_EXIT_USAGE;
		}
		given = &format;
	} else if (paths.n > 0 && docket_import_format_parse(&format, paths.v[0]) == 0) {
		given = &format;
	}
	if (given) {
		paths.v++;
		paths.n--;
	}
	docket_error_clear();
	if (paths.n == 0) {
		cli_error("no transcript given");
		return CLI_EXIT_USAGE;
	}
	memset(&stats, 0, sizeof(stats));
	if ((error = collect(&files, &paths)) < 0 || (error = detect_all(&files, given)) < 0 ||
	    (strict && (error = strict_precheck(&files)) < 0)) {
		rc = cli_fail(error, "cannot read the transcripts");
		goto cleanup;
	}
	if ((rc = cli_open_ledger(&ledger, g, 0)) != CLI_EXIT_OK)
		goto cleanup;
	tty = isatty(fileno(stderr));
	o.flags = strict ? DOCKET_IMPORT_STRICT : 0;
	o.progress = tty ? progress : NULL;
	for (i = 0; i < files.n && error == 0; i++)
		if (!files.v[i].skip)
			error = docket_import_file(ledger, files.v[i].format, files.v[i].path, &o, &stats);
	if (tty)
		fputs("\r\033[K", stderr);
	if (error < 0) {
		rc = cli_fail(error, "import failed");
		goto cleanup;
	}
	if (json) {
		if ((rc = cli_print_json(stats_json(&stats))) != CLI_EXIT_OK)
			goto cleanup;
	} else {
		summary(stdout, &stats);
	}
	warnings(&stats);
	rc = CLI_EXIT_OK;
	if (nothing_imported(&stats)) {
		cli_error("nothing imported: no session in %s", files.n == 1 ? files.v[0].path : "these files");
		rc = CLI_EXIT_USAGE;
	}
cleanup:
	list_free(&files);
	docket_ledger_free(ledger);
	return rc;
}
