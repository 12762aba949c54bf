/* SPDX-License-Identifier: Apache-2.0 */
/* tool.c: canonical tool names <-> kinds (tool.h). */
#include "tool.h"

#include <stddef.h>
#include <string.h>

static const char *const names[] = {
	[DOCKET_TOOL_OTHER] = NULL,
	[DOCKET_TOOL_KIND_SHELL] = DOCKET_TOOL_SHELL,
	[DOCKET_TOOL_KIND_APPLY_PATCH] = DOCKET_TOOL_APPLY_PATCH,
	[DOCKET_TOOL_KIND_READ_FILE] = DOCKET_TOOL_READ_FILE,
	[DOCKET_TOOL_KIND_WRITE_FILE] = DOCKET_TOOL_WRITE_FILE,
	[DOCKET_TOOL_KIND_NETWORK] = DOCKET_TOOL_NETWORK,
	[DOCKET_TOOL_KIND_RUN_CODE] = DOCKET_TOOL_RUN_CODE,
	[DOCKET_TOOL_KIND_INSTALL_PACKAGES] = DOCKET_TOOL_INSTALL_PACKAGES,
	[DOCKET_TOOL_KIND_MCP] = DOCKET_TOOL_MCP,
};

docket_tool_kind docket_tool_kind_of(const char *name)
{
	if (!name)
		return DOCKET_TOOL_OTHER;
	for (size_t k = 1; k < sizeof(names) / sizeof(names[0]); k++)
		if (strcmp(name, names[k]) == 0)
			return (docket_tool_kind)k;
	return DOCKET_TOOL_OTHER;
}

const char *docket_tool_name(docket_tool_kind kind)
{
	return (size_t)kind < sizeof(names) / sizeof(names[0]) ? names[kind] : NULL;
}
