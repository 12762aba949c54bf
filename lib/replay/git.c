/* SPDX-License-Identifier: Apache-2.0 */
/*
 * git.c: policy sources in git (libgit2): a file (or a tree of Codex .rules)
 * at a revision, and a policy file's history over a range of commits. Objects
 * are read from the object database: no checkout, bare repositories work.
 * Built only with libgit2 (DOCKET_HAVE_GIT2); without it every entry point
 * fails with a message saying so.
 */
#include <string.h>

#include "replay_internal.h"
#include "util/alloc.h"
#include "util/error.h"

#if DOCKET_HAVE_GIT2
#include <git2.h>

int docket_replay_has_git(void)
{
	return 1;
}

/* The libgit2 error of `rc` as a docket error, with `what` in front. */
static int git_fail(int rc, const char *what)
{
	const git_error *e = git_error_last();
	const char *msg = e && e->message ? e->message : "unknown error";
	int code = rc == GIT_ENOTFOUND || rc == GIT_EAMBIGUOUS || rc == GIT_EINVALIDSPEC ? DOCKET_ENOTFOUND
											: DOCKET_ESTORAGE;

	return docket_error_set(code, "%s: %s", what, msg);
}

static int repo_open(git_repository **out, const char *path)
{
	int rc;

	git_libgit2_init();
	rc = git_repository_open_ext(out, path ? path : ".", path ? GIT_REPOSITORY_OPEN_NO_SEARCH : 0, NULL);
	if (rc < 0) {
		*out = NULL;
		rc = git_fail(rc, path ? path : "no git repository here (use --repo)");
		git_libgit2_shutdown();
	}
	return rc;
}

static void repo_close(git_repository *repo)
{
	if (!repo)
		return;
	git_repository_free(repo);
	git_libgit2_shutdown();
}

static int tree_at(git_tree **out, git_repository *repo, const char *rev)
{
	git_object *obj = NULL;
	int rc;

	*out = NULL;
	if ((rc = git_revparse_single(&obj, repo, rev)) < 0)
		return git_fail(rc, rev);
	rc = git_object_peel((git_object **)out, obj, GIT_OBJECT_TREE);
	git_object_free(obj);
	return rc < 0 ? git_fail(rc, rev) : 0;
}

static int put_blob(docket_buf *out, git_repository *repo, const git_oid *id)
{
	git_blob *blob = NULL;
	int rc = git_blob_lookup(&blob, repo, id), error;

	if (rc < 0)
		return git_fail(rc, "blob");
	error = docket_buf_put(out, git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob));
	git_blob_free(blob);
	return error;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* A tree of Codex rules: its *.rules blobs in name order, one after another. */
static int put_rules(docket_buf *out, git_repository *repo, const git_tree *tree)
{
	int error = 0;

	for (size_t i = 0; i < git_tree_entrycount(tree) && error == 0; i++) {
		const git_tree_entry *e = git_tree_entry_byindex(tree, i);

		if (git_tree_entry_type(e) != GIT_OBJECT_BLOB || !ends_with(git_tree_entry_name(e), ".rules"))
			continue;
		if ((error = put_blob(out, repo, git_tree_entry_id(e))) == 0)
			error = docket_buf_putc(out, '\n');
	}
	return error;
}

/* The bytes of `path` in `tree`; DOCKET_ENOTFOUND when it is absent. */
static int read_in_tree(docket_buf *out, git_repository *repo, git_tree *tree, const char *rev,
			const char *path)
{
	git_tree_entry *e = NULL;
	git_tree *sub = NULL;
	int rc, error;

	if ((rc = git_tree_entry_bypath(&e, tree, path)) < 0)
		return docket_error_set(DOCKET_ENOTFOUND, "no %s at revision %s", path, rev);
	if (git_tree_entry_type(e) == GIT_OBJECT_TREE) {
		if ((rc = git_tree_lookup(&sub, repo, git_tree_entry_id(e))) < 0)
			error = git_fail(rc, path);
		else
			error = put_rules(out, repo, sub);
		git_tree_free(sub);
	} else {
		error = put_blob(out, repo, git_tree_entry_id(e));
	}
	git_tree_entry_free(e);
	return error;
}

int replay_git_read(docket_buf *out, const char *repo_path, const char *rev, const char *path)
{
	git_repository *repo = NULL;
	git_tree *tree = NULL;
	int error;

	if ((error = repo_open(&repo, repo_path)) < 0)
		return error;
	if ((error = tree_at(&tree, repo, rev)) == 0)
		error = read_in_tree(out, repo, tree, rev, path);
	git_tree_free(tree);
	repo_close(repo);
	return error;
}

/* ---- history ---- */

typedef struct hist_commit {
	char id[GIT_OID_HEXSZ + 1];
	char *summary;
	docket_policy *policy;
} hist_commit;

struct docket_replay_history {
	docket_policy *base;
	hist_commit *commits;
	const docket_policy **policies;
	size_t n, cap;
};

void docket_replay_history_free(docket_replay_history *h)
{
	if (!h)
		return;
	docket_policy_free(h->base);
	for (size_t i = 0; i < h->n; i++) {
		docket_free(h->commits[i].summary);
		docket_policy_free(h->commits[i].policy);
	}
	docket_free(h->commits);
	docket_free(h->policies);
	docket_free(h);
}

/* The id of `path` in a commit's tree; 0 when found, 1 when absent. */
static int path_id(git_oid *out, const git_commit *c, const char *path)
{
	git_tree *tree = NULL;
	git_tree_entry *e = NULL;
	int rc;

	if ((rc = git_commit_tree(&tree, c)) < 0)
		return git_fail(rc, "tree");
	rc = git_tree_entry_bypath(&e, tree, path);
	if (rc == 0)
		git_oid_cpy(out, git_tree_entry_id(e));
	git_tree_entry_free(e);
	git_tree_free(tree);
	return rc == 0 ? 0 : 1;
}

/* 1 when the commit changed `path` against its first parent. */
static int changes_path(const git_commit *c, const char *path)
{
	git_commit *parent = NULL;
	git_oid a, b;
	int ha, hb;

	if ((ha = path_id(&a, c, path)) < 0)
		return ha;
	if (git_commit_parentcount(c) == 0)
		return ha == 0;
	if (git_commit_parent(&parent, c, 0) < 0)
		return git_fail(-1, "parent");
	hb = path_id(&b, parent, path);
	git_commit_free(parent);
	if (hb < 0)
		return hb;
	return ha != hb || (ha == 0 && !git_oid_equal(&a, &b));
}

/* Load the policy of `path` at `rev` (a short commit id in messages). */
static int load_at(docket_policy **out, git_repository *repo, git_tree *tree, docket_policy_format fmt,
		   const char *rev, const char *path)
{
	docket_buf text = DOCKET_BUF_INIT, name = DOCKET_BUF_INIT;
	int error;

	*out = NULL;
	if ((error = read_in_tree(&text, repo, tree, rev, path)) == 0 &&
	    (error = docket_buf_printf(&name, "git:%s:%s", rev, path)) == 0)
		error = docket_policy_load_buffer(out, fmt, name.ptr, text.ptr ? text.ptr : "", text.len);
	if (error == DOCKET_EINVALID)
		docket_error_prefix("policy at revision %s: ", rev);
	docket_buf_dispose(&text);
	docket_buf_dispose(&name);
	return error;
}

static int push_commit(docket_replay_history *h, git_repository *repo, git_commit *c,
		       docket_policy_format fmt, const char *path)
{
	hist_commit *hc;
	git_tree *tree = NULL;
	const char *summary = git_commit_summary(c);
	char shortid[13];
	int rc, error;

	if (h->n == h->cap) {
		hist_commit *v = docket_array_grow(h->commits, &h->cap, sizeof(*v), 8);

		if (!v)
			return DOCKET_ENOMEM;
		h->commits = v;
	}
	hc = &h->commits[h->n];
	memset(hc, 0, sizeof(*hc));
	git_oid_tostr(hc->id, sizeof(hc->id), git_commit_id(c));
	git_oid_tostr(shortid, sizeof(shortid), git_commit_id(c));
	if ((rc = git_commit_tree(&tree, c)) < 0)
		return git_fail(rc, hc->id);
	error = load_at(&hc->policy, repo, tree, fmt, shortid, path);
	git_tree_free(tree);
	if (error == DOCKET_ENOTFOUND)
		error = docket_error_set(DOCKET_EINVALID, "policy at revision %s: %s was deleted", shortid, path);
	if (error < 0)
		return error;
	if (!(hc->summary = docket_malloc(strlen(summary ? summary : "") + 1))) {
		docket_policy_free(hc->policy);
		return docket_error_set_oom();
	}
	memcpy(hc->summary, summary ? summary : "", strlen(summary ? summary : "") + 1);
	h->n++;
	return 0;
}

static int walk_range(docket_replay_history *h, git_repository *repo, const git_oid *from,
		      const git_oid *to, docket_policy_format fmt, const char *path)
{
	git_revwalk *walk = NULL;
	git_commit *c = NULL;
	git_oid id;
	int rc, error = 0;

	if ((rc = git_revwalk_new(&walk, repo)) < 0 ||
	    (rc = git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL | GIT_SORT_REVERSE)) < 0 ||
	    (rc = git_revwalk_push(walk, to)) < 0 || (rc = git_revwalk_hide(walk, from)) < 0) {
		git_revwalk_free(walk);
		return git_fail(rc, "walk");
	}
	while (error == 0 && (rc = git_revwalk_next(&id, walk)) == 0) {
		if ((rc = git_commit_lookup(&c, repo, &id)) < 0) {
			error = git_fail(rc, "commit");
			break;
		}
		if ((error = changes_path(c, path)) == 1)
			error = push_commit(h, repo, c, fmt, path);
		git_commit_free(c);
	}
	if (error == 0 && rc != GIT_ITEROVER)
		error = git_fail(rc, "walk");
	git_revwalk_free(walk);
	return error;
}

static int commit_of(git_oid *out, git_tree **tree, git_repository *repo, const char *rev)
{
	git_object *obj = NULL;
	int rc = git_revparse_single(&obj, repo, rev);

	if (rc == 0) {
		git_object *c = NULL;

		rc = git_object_peel(&c, obj, GIT_OBJECT_COMMIT);
		if (rc == 0) {
			git_oid_cpy(out, git_object_id(c));
			rc = tree ? git_commit_tree(tree, (git_commit *)c) : 0;
		}
		git_object_free(c);
	}
	git_object_free(obj);
	return rc < 0 ? git_fail(rc, rev) : 0;
}

static int history_fill(docket_replay_history *h, git_repository *repo, docket_policy_format fmt,
			const char *path, const char *a, const char *b)
{
	git_oid from, to;
	git_tree *tree = NULL;
	int error;

	if ((error = commit_of(&from, &tree, repo, a)) < 0 || (error = commit_of(&to, NULL, repo, b)) < 0)
		goto cleanup;
	error = load_at(&h->base, repo, tree, fmt, a, path);
	if (error == DOCKET_ENOTFOUND)
		error = 0;   /* no policy at A: the recorded verdicts are the baseline */
	if (error == 0)
		error = walk_range(h, repo, &from, &to, fmt, path);
	if (error == 0 && h->n == 0)
		error = docket_error_set(DOCKET_EINVALID, "no commit in %s..%s changes %s", a, b, path);
cleanup:
	git_tree_free(tree);
	return error;
}

int docket_replay_history_load(docket_replay_history **out, const char *repo_path, const char *path,
			       const char *range)
{
	docket_replay_history *h = NULL;
	git_repository *repo = NULL;
	docket_policy_format fmt = DOCKET_POLICY_DOCKET;
	const char *dots = range ? strstr(range, "..") : NULL;
	char *a = NULL;
	int error;

	*out = NULL;
	if (strncmp(path, "codex:", 6) == 0 || strncmp(path, "claude:", 7) == 0) {
		fmt = path[1] == 'o' ? DOCKET_POLICY_CODEX : DOCKET_POLICY_CLAUDE;
		path = strchr(path, ':') + 1;
	}
	if (!dots || dots == range || !dots[2] || dots[2] == '.')
		return docket_error_set(DOCKET_EINVALID, "range \"%s\" is not A..B", range ? range : "");
	if (!(h = docket_calloc(1, sizeof(*h))) || !(a = docket_malloc((size_t)(dots - range) + 1))) {
		docket_free(h);
		return docket_error_set_oom();
	}
	memcpy(a, range, (size_t)(dots - range));
	a[dots - range] = '\0';
	if ((error = repo_open(&repo, repo_path)) == 0)
		error = history_fill(h, repo, fmt, path, a, dots + 2);
	if (error == 0 && !(h->policies = docket_calloc(h->n, sizeof(*h->policies))))
		error = docket_error_set_oom();
	for (size_t i = 0; error == 0 && i < h->n; i++)
		h->policies[i] = h->commits[i].policy;
	repo_close(repo);
	docket_free(a);
	if (error < 0)
		docket_replay_history_free(h);
	else
		*out = h;
	return error;
}

const docket_policy *docket_replay_history_base(const docket_replay_history *h)
{
	return h->base;
}

size_t docket_replay_history_count(const docket_replay_history *h)
{
	return h->n;
}

const docket_policy *docket_replay_history_policy(const docket_replay_history *h, size_t i)
{
	return i < h->n ? h->commits[i].policy : NULL;
}

const char *docket_replay_history_commit(const docket_replay_history *h, size_t i)
{
	return i < h->n ? h->commits[i].id : NULL;
}

const char *docket_replay_history_summary(const docket_replay_history *h, size_t i)
{
	return i < h->n ? h->commits[i].summary : NULL;
}

const docket_policy *const *docket_replay_history_policies(const docket_replay_history *h)
{
	return h->policies;
}

#else /* no libgit2 */

static int no_git(void)
{
	return docket_error_set(DOCKET_ERROR, "git policy sources need libgit2, and docket was built without it");
}

int docket_replay_has_git(void)
{
	return 0;
}

int replay_git_read(docket_buf *out, const char *repo, const char *rev, const char *path)
{
	(void)out;
	(void)repo;
	(void)rev;
	(void)path;
	return no_git();
}

int docket_replay_history_load(docket_replay_history **out, const char *repo, const char *path,
			       const char *range)
{
	(void)repo;
	(void)path;
	(void)range;
	*out = NULL;
	return no_git();
}

void docket_replay_history_free(docket_replay_history *h)
{
	(void)h;
}

const docket_policy *docket_replay_history_base(const docket_replay_history *h)
{
	(void)h;
	return NULL;
}

size_t docket_replay_history_count(const docket_replay_history *h)
{
	(void)h;
	return 0;
}

const docket_policy *docket_replay_history_policy(const docket_replay_history *h, size_t i)
{
	(void)h;
	(void)i;
	return NULL;
}

const char *docket_replay_history_commit(const docket_replay_history *h, size_t i)
{
	(void)h;
	(void)i;
	return NULL;
}

const char *docket_replay_history_summary(const docket_replay_history *h, size_t i)
{
	(void)h;
	(void)i;
	return NULL;
}

const docket_policy *const *docket_replay_history_policies(const docket_replay_history *h)
{
	(void)h;
	return NULL;
}

#endif
