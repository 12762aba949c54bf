/* SPDX-License-Identifier: Apache-2.0 */
/*
 * grant.c: what an `approved_for_session` answer grants (DESIGN §7), and the
 * rule that decided a result. Shared by authority mode (runtime/authority.c)
 * and replay, so both derive the same session grants from the same history.
 */
#include "policy.h"

#include "util/error.h"

static int append_grant(json_t *grants, const char *key, const json_t *value)
{
	if (json_array_append_new(grants, json_pack("{s:O}", key, value)) < 0)
		return docket_error_set(DOCKET_ENOMEM, "out of memory");
	return 0;
}

int docket_policy_grant_from_intent(json_t *grants, const json_t *intent)
{
	const json_t *args = json_object_get(intent, "args");
	const json_t *cmd = json_object_get(args, "command");
	const json_t *path = json_object_get(args, "path");
	const json_t *changes = json_object_get(args, "changes");
	size_t i;
	json_t *c;
	int error = 0;

	if (json_is_array(cmd))
		return append_grant(grants, "command", cmd);
	if (json_is_string(path))
		return append_grant(grants, "path", path);
	if (!json_is_array(changes))
		return 0;
	json_array_foreach(changes, i, c) {
		const json_t *p = json_object_get(c, "path");

		if (json_is_string(p) && (error = append_grant(grants, "path", p)) < 0)
			break;
	}
	return error;
}
