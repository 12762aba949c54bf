/* SPDX-License-Identifier: Apache-2.0 */
/*
 * claude_tools.c: the tool names a Claude Code permission rule may name
 * (the one table: `policy check` flags the others), and the nearest known
 * name for a misspelt one ("Raed" -> "Read", "bash" -> "Bash").
 */
#include <ctype.h>
#include <string.h>

#include "policy.h"

#include "util/tool.h"

/* Claude Code's built-in tools (docs.claude.com, "Tools available to Claude"). */
static const char *const claude_tools[] = {
	"Agent", "Bash", "BashOutput", "Edit", "ExitPlanMode", "Glob", "Grep", "KillBash", "KillShell", "LS",
	"ListMcpResourcesTool", "MultiEdit", "NotebookEdit", "NotebookRead", "Read", "ReadMcpResourceTool",
	"SlashCommand", "Skill", "Task", "TodoRead", "TodoWrite", "WebFetch", "WebSearch", "Write", NULL
};


static bool in_list(const char *const *list, const char *name)
{
	for (size_t i = 0; list[i]; i++)
		if (strcmp(list[i], name) == 0)
			return true;
	return false;
}

bool pol_tool_name_known(const char *name, bool docket)
{
	if (strcmp(name, "*") == 0 || strncmp(name, DOCKET_TOOL_MCP_PREFIX, DOCKET_TOOL_MCP_PREFIX_LEN) == 0)
		return true;
	/* docket's canonical tools (DESIGN §4, util/tool.h), which a docket YAML tool rule may name too */
	return in_list(claude_tools, name) || (docket && docket_tool_kind_of(name) != DOCKET_TOOL_OTHER);
}

/* Edit distance, case-insensitive, of two short names (longer ones: far). */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), row[33], prev, tmp;

	if (la > 32 || lb > 32)
		return 99;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
			size_t best = prev + cost;

			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			tmp = row[j];
			row[j] = best;
			prev = tmp;
		}
	}
	return row[lb];
}

/* Keep `cand` in *hit when it is nearer to `name` than *best edits. */
static void consider(const char *cand, const char *name, size_t *best, const char **hit)
{
	size_t d = distance(name, cand);

	if (d < *best) {
		*best = d;
		*hit = cand;
	}
}

const char *pol_tool_name_nearest(const char *name, bool docket)
{
	/* closer than this many edits ("Raed" -> "Read" is two; case is free) */
	size_t d = strlen(name) <= 3 ? 2 : 3;
	const char *hit = NULL, *t;

	for (size_t i = 0; claude_tools[i]; i++)
		consider(claude_tools[i], name, &d, &hit);
	for (int k = DOCKET_TOOL_OTHER + 1; docket && (t = docket_tool_name((docket_tool_kind)k)); k++)
		consider(t, name, &d, &hit);
	return hit;
}
