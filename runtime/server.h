/* SPDX-License-Identifier: Apache-2.0 */
/* server.h: `docket serve` (JSON-RPC 2.0 over stdio or a Unix socket). */
#ifndef DOCKET_RUNTIME_SERVER_H
#define DOCKET_RUNTIME_SERVER_H

#include <sys/types.h>

#include "protocol.h"

typedef struct server_options {
	const char *socket_path;   /* NULL: stdio */
	mode_t socket_mode;        /* 0: 0600 */
	gid_t socket_gid;
	int socket_gid_set;
	proto_options proto;
	const char *approver_uids; /* "1001,1002": socket peers with the approver role */
	const char *runtime_uids;  /* socket peers with the runtime role (even the server's own uid) */
	void (*ready)(void *ctx);  /* called once listening (tests, readiness) */
	void *ready_ctx;
} server_options;

typedef struct server_stats {
	uint64_t requests;
	uint64_t batches;
	uint64_t errors;
	uint64_t max_batch;
} server_stats;

/* Serve until SIGTERM/SIGINT (socket) or end of input (stdio). */
int server_run(docket_ledger *l, const server_options *opts, server_stats *stats);

#endif
