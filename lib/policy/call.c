/* SPDX-License-Identifier: Apache-2.0 */
/*
 * call.c: tool calls and session contexts from their JSON forms (DESIGN §4).
 * Both copy what they keep into their own arena, so the JSON may be freed.
 */
#include <stdio.h>
#include <string.h>

#include "policy.h"

#include "util/alloc.h"
#include "util/error.h"
#include "util/json.h"
#include "util/jv.h"
#include "util/tool.h"

static const char *adup(pol_arena_block **a, const char *s)
{
	size_t n = strlen(s);
	char *d = pol_arena_alloc(a, n + 1);

	if (d)
		memcpy(d, s, n + 1);
	return d;
}

/* obj's member `key`: absent when obj is not an object or has none. */
static docket_jv member(const docket_jv_ops *o, docket_jv obj, const char *key)
{
	docket_jv none = { NULL, 0 };

	return o->type(obj) == DOCKET_JV_OBJECT ? o->get(obj, key) : none;
}

/* v's text when it is a string, else NULL (jansson's json_string_value). */
static const char *jstr(const docket_jv_ops *o, docket_jv v, size_t *len)
{
	size_t n = 0;
	const char *s = o->type(v) == DOCKET_JV_STRING ? o->string(v, &n) : NULL;

	if (len)
		*len = n;
	return s;
}

static const char *jtype_name(const docket_jv_ops *o, docket_jv v)
{
	return v.p ? docket_jv_type_name(o->type(v)) : "nothing";
}

/* A JSON array of strings into an arena vector. */
static int jstr_array(pol_arena_block **a, const docket_jv_ops *o, docket_jv arr, const char ***out, size_t *n,
		      const char *what)
{
	size_t i, len;
	const char **v;
	docket_jv_iter it;
	docket_jv e;
	const char *key, *s;

	if (o->type(arr) != DOCKET_JV_ARRAY)
		return docket_error_set(DOCKET_EINVALID, "%s must be an array of strings (got %s)", what,
					jtype_name(o, arr));
	len = o->size(arr);
	if (len > 1u << 20)
		return docket_error_set(DOCKET_EINVALID, "%s has too many elements", what);
	if (!(v = pol_arena_alloc(a, (len ? len : 1) * sizeof(*v))))
		return docket_error_set_oom();
	for (o->iter(arr, &it), i = 0; i < len && o->next(&it, &key, &e); i++) {
		size_t sl;

		if (!(s = jstr(o, e, &sl)))
			return docket_error_set(DOCKET_EINVALID, "%s[%zu] must be a string (got %s)", what, i,
						jtype_name(o, e));
		if (memchr(s, '\0', sl))
			return docket_error_set(DOCKET_EINVALID, "%s[%zu] contains a NUL byte", what, i);
		if (!(v[i] = adup(a, s)))
			return docket_error_set_oom();
	}
	*out = v;
	*n = len;
	return 0;
}

static int str_array(pol_arena_block **a, const json_t *arr, const char ***out, size_t *n, const char *what)
{
	return jstr_array(a, &docket_jv_jansson, docket_jv_of_json(arr), out, n, what);
}

static int jget_str(pol_arena_block **a, const docket_jv_ops *o, docket_jv obj, const char *key,
		    const char **out, bool required, const char *tool)
{
	docket_jv v = member(o, obj, key);
	docket_jv_type t = o->type(v);
	const char *s;
	size_t len;

	*out = NULL;
	if (t == DOCKET_JV_ABSENT || t == DOCKET_JV_NULL) {
		if (required)
			return docket_error_set(DOCKET_EINVALID, "%s call needs args.%s", tool, key);
		return 0;
	}
	if (!(s = jstr(o, v, &len)))
		return docket_error_set(DOCKET_EINVALID, "%s args.%s must be a string (got %s)", tool, key,
					docket_jv_type_name(t));
	if (memchr(s, '\0', len))
		return docket_error_set(DOCKET_EINVALID, "%s args.%s contains a NUL byte", tool, key);
	if (!(*out = adup(a, s)))
		return docket_error_set_oom();
	return 0;
}

static int get_str(pol_arena_block **a, const json_t *obj, const char *key, const char **out, bool required,
		   const char *tool)
{
	return jget_str(a, &docket_jv_jansson, docket_jv_of_json(obj), key, out, required, tool);
}

static void lower(char *s)
{
	for (; *s; s++)
		if (*s >= 'A' && *s <= 'Z')
			*s = (char)(*s - 'A' + 'a');
}

static int parse_proto(const char *s, int *out)
{
	if (!s)
		*out = PROTO_ANY;
	else if (strcmp(s, "http") == 0)
		*out = PROTO_HTTP;
	else if (strcmp(s, "https") == 0)
		*out = PROTO_HTTPS;
	else if (strcmp(s, "socks5_tcp") == 0 || strcmp(s, "socks5") == 0)
		*out = PROTO_SOCKS5_TCP;
	else if (strcmp(s, "socks5_udp") == 0)
		*out = PROTO_SOCKS5_UDP;
	else
		return docket_error_set(DOCKET_EINVALID, "unknown network protocol %s", s);
	return 0;
}

/* scheme://[user@]host[:port][/...], parsed as the client parses it (url.c). */
static int parse_url(docket_policy_call *c, const char *url)
{
	pol_url u;
	int error;

	memset(&u, 0, sizeof(u));
	if ((error = pol_url_parse(&u, url)) < 0)
		goto done;
	if (strcmp(u.scheme, "http") == 0 || strcmp(u.scheme, "ws") == 0) {
		c->protocol = PROTO_HTTP;
		c->port = 80;
	} else if (strcmp(u.scheme, "https") == 0 || strcmp(u.scheme, "wss") == 0) {
		c->protocol = PROTO_HTTPS;
		c->port = 443;
	} else {
		c->protocol = PROTO_ANY;
		c->port = 0;
	}
	if (u.has_port)
		c->port = u.port;
	while (u.host.len && u.host.ptr[u.host.len - 1] == '.')
		u.host.ptr[--u.host.len] = '\0';
	if (!u.host.len) {
		error = docket_error_set(DOCKET_EINVALID, "network url %s has no host", url);
		goto done;
	}
	if (!(c->host = adup(&c->arena, u.host.ptr)) || !(c->url_path = adup(&c->arena, u.path.ptr ? u.path.ptr : "")))
		error = docket_error_set_oom();
done:
	pol_url_dispose(&u);
	return error;
}

static int one_path(docket_policy_call *c, const char *p)
{
	const char **nv = pol_arena_alloc(&c->arena, (c->npaths + 1) * sizeof(*nv));

	if (!nv)
		return docket_error_set_oom();
	if (c->npaths)
		memcpy(nv, c->paths, c->npaths * sizeof(*nv));
	if (!(nv[c->npaths] = adup(&c->arena, p)))
		return docket_error_set_oom();
	c->paths = nv;
	c->npaths++;
	return 0;
}

static int wrap_script(docket_policy_call *c, const char *script)
{
	const char **v = pol_arena_alloc(&c->arena, 3 * sizeof(*v));

	if (!v)
		return docket_error_set_oom();
	v[0] = "bash";
	v[1] = "-lc";
	if (!(v[2] = adup(&c->arena, script)))
		return docket_error_set_oom();
	c->argv = v;
	c->argc = 3;
	return 0;
}

static int parse_shell(docket_policy_call *c, const docket_jv_ops *o, docket_jv args)
{
	docket_jv cmd = member(o, args, "command");
	docket_jv sp = member(o, args, "sandbox_permissions");
	docket_jv pr = member(o, args, "prefix_rule");
	bool has_pr = pr.p && o->type(pr) != DOCKET_JV_NULL;
	const char *s;
	int error;

	if (!cmd.p)
		cmd = member(o, args, "cmd");
	if ((s = jstr(o, cmd, NULL))) {
		if ((error = wrap_script(c, s)) < 0)
			return error;
	} else if ((error = jstr_array(&c->arena, o, cmd, &c->argv, &c->argc, "shell args.command")) < 0) {
		return error;
	}
	if ((error = jget_str(&c->arena, o, args, member(o, args, "cwd").p ? "cwd" : "workdir", &c->cwd, false,
			      DOCKET_TOOL_SHELL)) < 0)
		return error;
	/* Codex's 0.60 wire form and Claude Code's Bash input ask for the same thing */
	if (o->type(member(o, args, "with_escalated_permissions")) == DOCKET_JV_TRUE ||
	    o->type(member(o, args, "dangerouslyDisableSandbox")) == DOCKET_JV_TRUE)
		c->sbperm = SBP_REQUIRE_ESCALATED;
	if (sp.p && o->type(sp) != DOCKET_JV_NULL) {
		if (!(s = jstr(o, sp, NULL)))
			return docket_error_set(DOCKET_EINVALID, "shell args.sandbox_permissions must be a string");
		if (strcmp(s, "use_default") == 0)
			c->sbperm = SBP_DEFAULT;
		else if (strcmp(s, "require_escalated") == 0)
			c->sbperm = SBP_REQUIRE_ESCALATED;
		else if (strcmp(s, "with_additional_permissions") == 0)
			c->sbperm = SBP_ADDITIONAL;
		else
			return docket_error_set(DOCKET_EINVALID, "unknown sandbox_permissions %s", s);
	}
	if (has_pr &&
	    (error = jstr_array(&c->arena, o, pr, &c->prefix_rule, &c->nprefix_rule, "shell args.prefix_rule")) < 0)
		return error;
	if (has_pr && !c->prefix_rule)
		c->prefix_rule = c->argv; /* non-NULL marks "given" even when empty */
	return 0;
}

static int parse_patch(docket_policy_call *c, const docket_jv_ops *o, docket_jv args)
{
	docket_jv changes = member(o, args, "changes"), ch;
	docket_jv_iter it;
	const char *key, *path, *to;
	size_t i;
	int error;

	if (o->type(changes) != DOCKET_JV_ARRAY)
		return docket_error_set(DOCKET_EINVALID, "apply_patch call needs args.changes (an array)");
	for (o->iter(changes, &it), i = 0; o->next(&it, &key, &ch); i++) {
		if (!(path = jstr(o, member(o, ch, "path"), NULL)))
			return docket_error_set(DOCKET_EINVALID, "apply_patch args.changes[%zu] needs a path", i);
		if ((error = one_path(c, path)) < 0)
			return error;
		if ((to = jstr(o, member(o, ch, "to"), NULL)) && (error = one_path(c, to)) < 0)
			return error;
	}
	return 0;
}

/* args.path, or Claude Code's args.file_path, as the call's one path. */
static int one_path_arg(docket_policy_call *c, const docket_jv_ops *o, docket_jv args, const char *name)
{
	const char *p;
	int error;

	if ((error = jget_str(&c->arena, o, args, member(o, args, "path").p ? "path" : "file_path", &p, true,
			      name)) < 0)
		return error;
	return one_path(c, p);
}

static int parse_network(docket_policy_call *c, const docket_jv_ops *o, docket_jv args, const char *name)
{
	const char *url = NULL, *host = NULL, *proto = NULL;
	docket_jv port = member(o, args, "port");
	int error;

	c->tool = CT_NETWORK;
	if ((error = jget_str(&c->arena, o, args, "url", &url, false, name)) < 0 ||
	    (error = jget_str(&c->arena, o, args, "host", &host, false, name)) < 0 ||
	    (error = jget_str(&c->arena, o, args, "protocol", &proto, false, name)) < 0)
		return error;
	if (url)
		return parse_url(c, url);
	if (!host)
		return docket_error_set(DOCKET_EINVALID, "network call needs args.url or args.host");
	lower((char *)host);
	c->host = host;
	if ((error = parse_proto(proto, &c->protocol)) < 0)
		return error;
	if (port.p && o->type(port) != DOCKET_JV_NULL) {
		if (o->type(port) != DOCKET_JV_INTEGER || o->integer(port) < 0 || o->integer(port) > 65535)
			return docket_error_set(DOCKET_EINVALID, "network args.port must be 0..65535");
		c->port = (unsigned)o->integer(port);
	}
	return 0;
}

static int parse_mcp(docket_policy_call *c, const docket_jv_ops *o, docket_jv args, const char *name)
{
	const char *server, *t;
	docket_buf b = DOCKET_BUF_INIT;
	int error;

	c->tool = CT_MCP;
	if ((error = jget_str(&c->arena, o, args, "server", &server, true, name)) < 0 ||
	    (error = jget_str(&c->arena, o, args, "tool", &t, true, name)) < 0)
		return error;
	if ((error = docket_buf_printf(&b, "mcp__%s__%s", server, t)) == 0 && !(c->name = adup(&c->arena, b.ptr)))
		error = docket_error_set_oom();
	docket_buf_dispose(&b);
	return error;
}

static bool is_one_of(const char *name, const char *const *names)
{
	for (; *names; names++)
		if (strcmp(name, *names) == 0)
			return true;
	return false;
}

static int parse_args(docket_policy_call *c, const docket_jv_ops *o, docket_jv args, const char *name)
{
	static const char *const shells[] = { DOCKET_TOOL_SHELL, DOCKET_TOOL_CODEX_LOCAL_SHELL, DOCKET_TOOL_CODEX_SHELL_COMMAND,
		DOCKET_TOOL_CODEX_EXEC_COMMAND, DOCKET_TOOL_CLAUDE_BASH, NULL };
	static const char *const reads[] = { DOCKET_TOOL_READ_FILE, DOCKET_TOOL_CLAUDE_READ, NULL };
	static const char *const writes[] = { DOCKET_TOOL_WRITE_FILE, DOCKET_TOOL_CLAUDE_WRITE, DOCKET_TOOL_CLAUDE_EDIT,
		DOCKET_TOOL_CLAUDE_MULTI_EDIT, NULL };
	int error;

	if (is_one_of(name, shells)) {
		c->tool = CT_SHELL;
		return parse_shell(c, o, args);
	}
	if (strcmp(name, DOCKET_TOOL_APPLY_PATCH) == 0) {
		c->tool = CT_APPLY_PATCH;
		return parse_patch(c, o, args);
	}
	if (is_one_of(name, reads) || is_one_of(name, writes)) {
		c->tool = is_one_of(name, reads) ? CT_READ : CT_WRITE;
		/* Grep and Glob arrive as read_file {path, pattern}: a search of the directory */
		c->search = c->tool == CT_READ && jstr(o, member(o, args, "pattern"), NULL) != NULL;
		return one_path_arg(c, o, args, name);
	}
	if (strcmp(name, DOCKET_TOOL_NETWORK) == 0 && !member(o, args, "url").p && !member(o, args, "host").p &&
	    jstr(o, member(o, args, "query"), NULL)) {
		/* a web search (Claude Code's WebSearch, imported as network
		 * {query}): no host to match, so rules match it by tool name */
		c->tool = CT_OTHER;
		return (c->name = adup(&c->arena, DOCKET_TOOL_CLAUDE_WEB_SEARCH)) ? 0 : docket_error_set_oom();
	}
	if (strcmp(name, DOCKET_TOOL_NETWORK) == 0 || strcmp(name, DOCKET_TOOL_CLAUDE_WEB_FETCH) == 0)
		return parse_network(c, o, args, name);
	if (strcmp(name, DOCKET_TOOL_RUN_CODE) == 0) {
		c->tool = CT_RUN_CODE;
		return jget_str(&c->arena, o, args, "language", &c->language, true, name);
	}
	if (strcmp(name, DOCKET_TOOL_INSTALL_PACKAGES) == 0) {
		c->tool = CT_INSTALL;
		if ((error = jget_str(&c->arena, o, args, "ecosystem", &c->ecosystem, true, name)) < 0)
			return error;
		return jstr_array(&c->arena, o, member(o, args, "packages"), &c->packages, &c->npackages,
				  "install_packages args.packages");
	}
	if (strcmp(name, DOCKET_TOOL_MCP) == 0)
		return parse_mcp(c, o, args, name);
	c->tool = strncmp(name, DOCKET_TOOL_MCP_PREFIX, DOCKET_TOOL_MCP_PREFIX_LEN) == 0 ? CT_MCP : CT_OTHER;
	return 0;
}

int docket_policy_call_from_json(docket_policy_call **out, const json_t *intent)
{
	const json_t *tool, *args;

	*out = NULL;
	if (!json_is_object(intent))
		return docket_error_set(DOCKET_EINVALID, "a call must be a JSON object");
	tool = json_object_get(intent, "tool");
	args = json_object_get(intent, "args");
	if (!json_is_string(tool))
		return docket_error_set(DOCKET_EINVALID, "a call needs a string \"tool\"");
	return docket_policy_call_from_args(out, json_string_value(tool), args);
}

int docket_policy_call_from_args(docket_policy_call **out, const char *name, const json_t *args)
{
	return docket_policy_call_from_jv(out, name, &docket_jv_jansson, docket_jv_of_json(args));
}

int docket_policy_call_from_jv(docket_policy_call **out, const char *name, const docket_jv_ops *o, docket_jv args)
{
	docket_policy_call *c = NULL;
	int error;

	*out = NULL;
	if (!name)
		return docket_error_set(DOCKET_EINVALID, "a call needs a string \"tool\"");
	if (args.p && o->type(args) != DOCKET_JV_OBJECT)
		return docket_error_set(DOCKET_EINVALID, "a call's \"args\" must be an object");
	if (!(c = docket_calloc(1, sizeof(*c))))
		return docket_error_set_oom();
	if (!(c->name = adup(&c->arena, name)))
		error = docket_error_set_oom();
	else
		error = parse_args(c, o, args, name);
	if (error < 0) {
		docket_policy_call_free(c);
		return error;
	}
	*out = c;
	return 0;
}

void docket_policy_call_free(docket_policy_call *c)
{
	if (!c)
		return;
	pol_arena_free(c->arena);
	docket_free(c);
}

/* ---- context ---- */

static int strv_from(pol_arena_block **a, pol_strv *v, const json_t *arr, const char *what)
{
	return str_array(a, arr, &v->v, &v->n, what);
}

int pol_parse_approval(const json_t *v, int *approval, bool *gsandbox, bool *grules)
{
	*gsandbox = *grules = true;
	if (json_is_string(v)) {
		const char *s = json_string_value(v);

		if (strcmp(s, "untrusted") == 0 || strcmp(s, "unless-trusted") == 0)
			*approval = AP_UNTRUSTED;
		else if (strcmp(s, "on-request") == 0 || strcmp(s, "on_request") == 0 ||
			 strcmp(s, "on-failure") == 0 || strcmp(s, "on_failure") == 0)
			*approval = AP_ON_REQUEST;
		else if (strcmp(s, "never") == 0)
			*approval = AP_NEVER;
		else
			return docket_error_set(DOCKET_EINVALID, "unknown approval_policy %s", s);
		return 0;
	}
	if (json_is_object(v)) {
		const json_t *g = json_object_get(v, "granular");
		const json_t *r = json_object_get(v, "reject");

		if (json_is_object(g)) {
			*approval = AP_GRANULAR;
			*gsandbox = !json_is_false(json_object_get(g, "sandbox_approval"));
			*grules = !json_is_false(json_object_get(g, "rules"));
			return 0;
		}
		if (json_is_object(r)) {
			/* older Codex form: reject.{sandbox_approval,rules}=true rejects */
			*approval = AP_GRANULAR;
			*gsandbox = !json_is_true(json_object_get(r, "sandbox_approval"));
			*grules = !json_is_true(json_object_get(r, "rules"));
			return 0;
		}
	}
	return docket_error_set(DOCKET_EINVALID, "approval_policy must be a string or {\"granular\":{...}}");
}

int pol_parse_sandbox(const json_t *v, int *sandbox, int *network, bool *ex_tmpdir, bool *ex_slash_tmp,
		      const json_t **writable)
{
	const char *s;
	const json_t *na;

	*writable = NULL;
	if (json_is_string(v)) {
		s = json_string_value(v);
	} else if (json_is_object(v)) {
		const json_t *t = json_object_get(v, "type");

		if (!t)
			t = json_object_get(v, "mode");
		if (!json_is_string(t))
			return docket_error_set(DOCKET_EINVALID, "sandbox_policy needs a \"type\"");
		s = json_string_value(t);
		na = json_object_get(v, "network_access");
		if (json_is_boolean(na))
			*network = json_is_true(na);
		else if (json_is_string(na))
			*network = strcmp(json_string_value(na), "enabled") == 0;
		*ex_tmpdir = json_is_true(json_object_get(v, "exclude_tmpdir_env_var"));
		*ex_slash_tmp = json_is_true(json_object_get(v, "exclude_slash_tmp"));
		*writable = json_object_get(v, "writable_roots");
	} else {
		return docket_error_set(DOCKET_EINVALID, "sandbox_policy must be a string or an object");
	}
	if (strcmp(s, "read-only") == 0 || strcmp(s, "read_only") == 0)
		*sandbox = SB_READ_ONLY;
	else if (strcmp(s, "workspace-write") == 0 || strcmp(s, "workspace_write") == 0)
		*sandbox = SB_WORKSPACE_WRITE;
	else if (strcmp(s, "danger-full-access") == 0 || strcmp(s, "full_access") == 0 ||
		 strcmp(s, "full-access") == 0)
		*sandbox = SB_FULL_ACCESS;
	else if (strcmp(s, "external-sandbox") == 0 || strcmp(s, "external") == 0)
		*sandbox = SB_EXTERNAL;
	else
		return docket_error_set(DOCKET_EINVALID, "unknown sandbox type %s", s);
	return 0;
}

static const char *const ctx_keys[] = {
	"platform", "cwd", "workspace_roots", "env", "grants", "approval_policy", "sandbox_policy",
	"file_system_sandbox", "session", "type", "runtime", "client", "client_sandbox", NULL
};

int docket_policy_context_from_json(docket_policy_context **out, const json_t *j)
{
	docket_policy_context *c;
	const char *key;
	const json_t *v;
	int error = 0;

	*out = NULL;
	if (!(c = docket_calloc(1, sizeof(*c))))
		return docket_error_set_oom();
	c->network_access = -1;
	c->fs_kind = -1;
	c->client_sandbox = -1;
	if (!j || json_is_null(j))
		goto done;
	if (!json_is_object(j)) {
		error = docket_error_set(DOCKET_EINVALID, "the context must be a JSON object");
		goto done;
	}
	json_object_foreach((json_t *)j, key, v) {
		size_t k;

		for (k = 0; ctx_keys[k]; k++)
			if (strcmp(ctx_keys[k], key) == 0)
				break;
		if (!ctx_keys[k]) {
			error = docket_error_set(DOCKET_EINVALID, "unknown context field \"%s\"", key);
			goto done;
		}
	}
	if ((v = json_object_get(j, "platform")) && !json_is_null(v)) {
		const char *s = json_is_string(v) ? json_string_value(v) : "";

		if (strcmp(s, "linux") == 0)
			c->platform = PLAT_LINUX;
		else if (strcmp(s, "macos") == 0)
			c->platform = PLAT_MACOS;
		else if (strcmp(s, "windows") == 0)
			c->platform = PLAT_WINDOWS;
		else {
			error = docket_error_set(DOCKET_EINVALID, "platform must be linux, macos or windows");
			goto done;
		}
	}
	if ((error = get_str(&c->arena, j, "cwd", &c->cwd, false, "context")) < 0)
		goto done;
	if ((v = json_object_get(j, "workspace_roots")) &&
	    (error = strv_from(&c->arena, &c->roots, v, "workspace_roots")) < 0)
		goto done;
	if ((v = json_object_get(j, "env")) && !json_is_null(v)) {
		if (!json_is_object(v)) {
			error = docket_error_set(DOCKET_EINVALID, "env must be an object of strings");
			goto done;
		}
		if ((error = get_str(&c->arena, v, "HOME", &c->home, false, "env")) < 0 ||
		    (error = get_str(&c->arena, v, "TMPDIR", &c->tmpdir, false, "env")) < 0)
			goto done;
	}
	if ((error = get_str(&c->arena, j, "client", &c->client, false, "context")) < 0)
		goto done;
	if ((v = json_object_get(j, "client_sandbox")) && !json_is_null(v)) {
		if (!json_is_boolean(v)) {
			error = docket_error_set(DOCKET_EINVALID, "client_sandbox must be true or false");
			goto done;
		}
		c->client_sandbox = json_is_true(v);
	}
	if ((v = json_object_get(j, "runtime")) && json_is_string(v)) {
		unsigned a, b, d;

		/* "claude-code/2.1.197", as importers and hooks record it */
		if (sscanf(json_string_value(v), "claude-code/%u.%u.%u", &a, &b, &d) == 3 && a < 1000 &&
		    b < 1000 && d < 1000)
			c->claude_version = POL_VERSION(a, b, d);
		/* "codex/0.169.0", as the rollout importer records cli_version */
		if (sscanf(json_string_value(v), "codex/%u.%u.%u", &a, &b, &d) == 3 && a < 1000 &&
		    b < 1000 && d < 1000)
			c->codex_version = POL_VERSION(a, b, d);
	}
	if ((v = json_object_get(j, "approval_policy")) && !json_is_null(v) &&
	    (error = pol_parse_approval(v, &c->approval, &c->granular_sandbox, &c->granular_rules)) < 0)
		goto done;
	if ((v = json_object_get(j, "sandbox_policy")) && !json_is_null(v)) {
		const json_t *w = NULL;

		if ((error = pol_parse_sandbox(v, &c->sandbox, &c->network_access, &c->exclude_tmpdir,
					       &c->exclude_slash_tmp, &w)) < 0)
			goto done;
		if (w && (error = strv_from(&c->arena, &c->writable, w, "sandbox_policy.writable_roots")) < 0)
			goto done;
	}
	if ((v = json_object_get(j, "file_system_sandbox")) && !json_is_null(v)) {
		const char *s = json_is_string(v) ? json_string_value(v) : "";

		if (strncmp(s, "restricted", 10) == 0)
			c->fs_kind = FS_RESTRICTED;
		else if (strcmp(s, "unrestricted") == 0)
			c->fs_kind = FS_UNRESTRICTED;
		else if (strncmp(s, "external", 8) == 0)
			c->fs_kind = FS_EXTERNAL;
		else {
			error = docket_error_set(DOCKET_EINVALID, "file_system_sandbox must be restricted, unrestricted or external");
			goto done;
		}
	}
	if ((v = json_object_get(j, "grants")) && !json_is_null(v)) {
		size_t n = json_array_size(v);

		if (!json_is_array(v)) {
			error = docket_error_set(DOCKET_EINVALID, "grants must be an array");
			goto done;
		}
		if (!(c->grants = pol_arena_alloc(&c->arena, (n ? n : 1) * sizeof(*c->grants)))) {
			error = docket_error_set_oom();
			goto done;
		}
		for (size_t i = 0; i < n; i++) {
			const json_t *g = json_array_get(v, i);
			pol_grant *gr = &c->grants[c->ngrants++];

			memset(gr, 0, sizeof(*gr));
			if (json_is_object(g) && json_object_get(g, "command")) {
				if ((error = str_array(&c->arena, json_object_get(g, "command"), &gr->argv,
						       &gr->argc, "grants[].command")) < 0)
					goto done;
				if (gr->argc == 0)
					gr->argv = NULL;   /* an empty grant grants nothing (issue 26) */
			} else if (json_is_object(g) && json_is_string(json_object_get(g, "path"))) {
				if (json_string_length(json_object_get(g, "path")) == 0)
					continue;       /* "" grants nothing, never every path */
				if (!(gr->path = adup(&c->arena, json_string_value(json_object_get(g, "path"))))) {
					error = docket_error_set_oom();
					goto done;
				}
			} else {
				error = docket_error_set(DOCKET_EINVALID,
					"grants[%zu] must be {\"command\":[...]} or {\"path\":\"/abs\"}", i);
				goto done;
			}
		}
	}
done:
	if (error < 0) {
		docket_policy_context_free(c);
		return error;
	}
	*out = c;
	return 0;
}

void docket_policy_context_free(docket_policy_context *c)
{
	if (!c)
		return;
	pol_arena_free(c->arena);
	docket_free(c);
}
