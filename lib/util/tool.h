/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tool.h: the one table of docket's canonical tool names (DESIGN §5).
 *
 * Every module names a canonical tool through these constants, and maps a
 * name to its kind with docket_tool_kind(); other tool names are recorded
 * as-is and matched by name (DOCKET_TOOL_OTHER).
 */
#ifndef DOCKET_UTIL_TOOL_H
#define DOCKET_UTIL_TOOL_H

#define DOCKET_TOOL_SHELL            "shell"
#define DOCKET_TOOL_APPLY_PATCH      "apply_patch"
#define DOCKET_TOOL_READ_FILE        "read_file"
#define DOCKET_TOOL_WRITE_FILE       "write_file"
#define DOCKET_TOOL_NETWORK          "network"
#define DOCKET_TOOL_RUN_CODE         "run_code"
#define DOCKET_TOOL_INSTALL_PACKAGES "install_packages"
#define DOCKET_TOOL_MCP              "mcp"

/*
 * The names the clients give the canonical tools, as calls arrive from them
 * (Codex's function names, Claude Code's tools): the policy's call parser,
 * its grants and its risk classifier map them onto the kinds below.
 */
#define DOCKET_TOOL_CODEX_LOCAL_SHELL   "local_shell"
#define DOCKET_TOOL_CODEX_SHELL_COMMAND "shell_command"
#define DOCKET_TOOL_CODEX_EXEC_COMMAND  "exec_command"
#define DOCKET_TOOL_CODEX_WEB_SEARCH    "web_search"
#define DOCKET_TOOL_CLAUDE_BASH          "Bash"
#define DOCKET_TOOL_CLAUDE_READ          "Read"
#define DOCKET_TOOL_CLAUDE_GREP          "Grep"
#define DOCKET_TOOL_CLAUDE_GLOB          "Glob"
#define DOCKET_TOOL_CLAUDE_LS            "LS"
#define DOCKET_TOOL_CLAUDE_WRITE         "Write"
#define DOCKET_TOOL_CLAUDE_EDIT          "Edit"
#define DOCKET_TOOL_CLAUDE_MULTI_EDIT    "MultiEdit"
#define DOCKET_TOOL_CLAUDE_NOTEBOOK_EDIT "NotebookEdit"
#define DOCKET_TOOL_CLAUDE_WEB_FETCH     "WebFetch"
#define DOCKET_TOOL_CLAUDE_WEB_SEARCH    "WebSearch"
/* An MCP tool as Claude Code names it: mcp__SERVER__TOOL. */
#define DOCKET_TOOL_MCP_PREFIX     "mcp__"
#define DOCKET_TOOL_MCP_PREFIX_LEN 5

typedef enum docket_tool_kind {
	DOCKET_TOOL_OTHER = 0,
	DOCKET_TOOL_KIND_SHELL,
	DOCKET_TOOL_KIND_APPLY_PATCH,
	DOCKET_TOOL_KIND_READ_FILE,
	DOCKET_TOOL_KIND_WRITE_FILE,
	DOCKET_TOOL_KIND_NETWORK,
	DOCKET_TOOL_KIND_RUN_CODE,
	DOCKET_TOOL_KIND_INSTALL_PACKAGES,
	DOCKET_TOOL_KIND_MCP
} docket_tool_kind;

/* The kind of a tool name (NULL or unknown: DOCKET_TOOL_OTHER). */
docket_tool_kind docket_tool_kind_of(const char *name);

/* The canonical name of a kind; NULL for DOCKET_TOOL_OTHER. */
const char *docket_tool_name(docket_tool_kind kind);

#endif
