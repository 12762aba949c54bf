/* SPDX-License-Identifier: Apache-2.0 */
/* result.c: evaluation results: lifecycle, accessors, JSON. */
#include <string.h>

#include "policy.h"
#include "shparse.h"

#include "util/alloc.h"
#include "util/error.h"

int docket_policy_result_new(docket_policy_result **out)
{
	docket_policy_result *r = docket_calloc(1, sizeof(*r));

	*out = NULL;
	if (!r)
		return docket_error_set_oom();
	shell_split_init(&r->split);
	shell_split_init(&r->scratch);
	*out = r;
	return 0;
}

void docket_policy_result_free(docket_policy_result *r)
{
	if (!r)
		return;
	docket_free(r->segs);
	docket_free(r->wv);
	docket_buf_dispose(&r->text);
	docket_buf_dispose(&r->tmp);
	docket_buf_dispose(&r->tmp2);
	docket_buf_dispose(&r->tmp3);
	docket_buf_dispose(&r->claude_script);
	docket_buf_dispose(&r->claude_dir);
	shell_split_dispose(&r->split);
	shell_split_dispose(&r->scratch);
	if (r->sh)
		sh_dispose(r->sh);
	docket_free(r->sh);
	docket_policy_result_free(r->sub);
	docket_buf_dispose(&r->etmp);
	docket_buf_dispose(&r->etmp2);
	docket_buf_dispose(&r->ewhy);
	docket_buf_dispose(&r->ecwd);
	docket_free(r->eargv);
	docket_free(r->epath);
	docket_buf_dispose(&r->eglobs);
	docket_buf_dispose(&r->epath_key);
	docket_buf_dispose(&r->epath_key2);
	docket_free(r);
}

docket_verdict docket_policy_result_verdict(const docket_policy_result *r)
{
	return (docket_verdict)r->verdict;
}

size_t docket_policy_result_reason_count(const docket_policy_result *r)
{
	return r->nreasons;
}

const char *docket_policy_result_reason_code(const docket_policy_result *r, size_t i)
{
	return i < r->nreasons ? r->reasons[i].code : NULL;
}

const char *docket_policy_result_reason_text(const docket_policy_result *r, size_t i)
{
	return i < r->nreasons ? r->text.ptr + r->reasons[i].text_off : NULL;
}

static const char *match_text(const docket_policy_result *r, const pol_match *m)
{
	if (m->rule >= 0)
		return r->policy->prefix[m->rule].text;
	if (m->rule <= -100000)
		return r->policy->net[-100000 - m->rule].text;
	if (m->rule <= -2)
		return r->policy->tools[-2 - m->rule].text;
	return NULL;
}

static const pol_origin *match_origin(const docket_policy_result *r, const pol_match *m)
{
	if (m->rule >= 0)
		return &r->policy->prefix[m->rule].origin;
	if (m->rule <= -100000)
		return &r->policy->net[-100000 - m->rule].origin;
	if (m->rule <= -2)
		return &r->policy->tools[-2 - m->rule].origin;
	return NULL;
}

size_t docket_policy_result_match_count(const docket_policy_result *r)
{
	size_t n = 0;

	for (size_t i = 0; i < r->nmatches; i++)
		if (r->matches[i].rule != -1)
			n++;
	return n;
}

const char *docket_policy_result_match_rule(const docket_policy_result *r, size_t i)
{
	for (size_t k = 0; k < r->nmatches; k++) {
		if (r->matches[k].rule == -1)
			continue;
		if (i-- == 0)
			return match_text(r, &r->matches[k]);
	}
	return NULL;
}

const char *docket_policy_result_deciding_rule(const docket_policy_result *r, unsigned *line)
{
	for (size_t k = 0; k < r->nmatches; k++) {
		const pol_match *m = &r->matches[k];

		if (m->rule == -1 || m->decision != r->verdict)
			continue;
		if (line)
			*line = match_origin(r, m)->line;
		return match_text(r, m);
	}
	if (line)
		*line = 0;
	return NULL;
}

size_t docket_policy_result_segment_count(const docket_policy_result *r)
{
	return r->nsegs;
}

static json_t *words_json(const char *const *w, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < n; i++)
		if (json_array_append_new(a, json_string(w[i])) < 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static int set_new(json_t *o, const char *k, json_t *v)
{
	if (!v || json_object_set_new(o, k, v) < 0)
		return docket_error_set_oom();
	return 0;
}

int docket_policy_result_to_json(json_t **out, const docket_policy_result *r)
{
	json_t *o = json_object(), *a;
	int error = 0;

	*out = NULL;
	if (!o)
		return docket_error_set_oom();
	if ((error = set_new(o, "verdict", json_string(docket_policy_verdict_name((docket_verdict)r->verdict)))) < 0)
		goto fail;
	if (r->enforced && r->engine_verdict != r->verdict &&
	    (error = set_new(o, "engine_verdict",
			     json_string(docket_policy_verdict_name((docket_verdict)r->engine_verdict)))) < 0)
		goto fail;
	if ((error = set_new(o, "reasons", a = json_array())) < 0)
		goto fail;
	for (size_t i = 0; i < r->nreasons; i++) {
		json_t *x = json_pack("{s:s,s:s}", "code", r->reasons[i].code, "text",
				      r->text.ptr + r->reasons[i].text_off);

		if (!x || json_array_append_new(a, x) < 0) {
			error = docket_error_set_oom();
			goto fail;
		}
	}
	if ((error = set_new(o, "matched_rules", a = json_array())) < 0)
		goto fail;
	for (size_t i = 0; i < r->nmatches; i++) {
		const pol_match *m = &r->matches[i];
		const pol_origin *org = match_origin(r, m);
		json_t *x;

		if (m->rule == -1)
			continue;
		x = json_pack("{s:s,s:s,s:s,s:i}", "rule", match_text(r, m), "decision",
			      pol_decision_name(m->decision), "origin", org->file ? org->file : "",
			      "line", (int)org->line);
		if (x && m->segment != 0xFFFF && m->segment < r->nsegs)
			json_object_set_new(x, "segment", json_integer(m->segment));
		if (x && m->rule >= 0 && m->segment < r->nsegs) {
			const pol_segment *s = &r->segs[m->segment];
			json_t *pfx = words_json(r->wv + s->word_off, m->prefix_len);

			if (pfx && m->resolved)
				json_array_set_new(pfx, 0, json_string(r->policy->prefix[m->rule].program));
			json_object_set_new(x, "matched_prefix", pfx);
			if (m->resolved)
				json_object_set_new(x, "resolved_program", json_string(r->wv[s->word_off]));
		}
		if (!x || json_array_append_new(a, x) < 0) {
			error = docket_error_set_oom();
			goto fail;
		}
	}
	if (r->nsegs > 0) {
		if ((error = set_new(o, "segments", a = json_array())) < 0)
			goto fail;
		for (size_t g = 0; g < r->nsegs; g++) {
			const pol_segment *s = &r->segs[g];
			json_t *x = json_pack("{s:o,s:s,s:s}", "command", words_json(r->wv + s->word_off, s->nwords),
					      "verdict", docket_policy_verdict_name((docket_verdict)s->decision),
					      "why", s->why ? s->why : "rule");

			if (!x || json_array_append_new(a, x) < 0) {
				error = docket_error_set_oom();
				goto fail;
			}
		}
	}
	if (r->unsplit_reason && (error = set_new(o, "not_split", json_string(r->unsplit_reason))) < 0)
		goto fail;
	if ((error = set_new(o, "sandbox", json_string(r->sandbox == 2 ? "bypass" : r->sandbox == 1 ? "sandboxed" : "none"))) < 0)
		goto fail;
	if (r->has_amendment &&
	    (error = set_new(o, "proposed_amendment", words_json(r->wv + r->amend_off, r->amend_n))) < 0)
		goto fail;
	*out = o;
	return 0;
fail:
	json_decref(o);
	return error;
}
