/* SPDX-License-Identifier: Apache-2.0 */
/* server.h: `docket serve` (JSON-RPC 2.0 over stdio or a Unix socket). */
#ifndef DOCKET_RUNTIME_SERVER_H
#define DOCKET_RUNTIME_SERVER_H

#include <sys/types.h>

#include "runtime/protocol.h"

/*
 * Who commits a batch (docs/write-path.md §4): the writer and syncer
 * threads, so that one batch's commit and sync overlap the next batch's
 * preparation; or the poll loop itself, commit then sync, where the two
 * threads would have no cores of their own. AUTO: server_writer_for.
 */
typedef enum server_writer {
	SERVER_WRITER_AUTO = 0,
	SERVER_WRITER_INLINE,
	SERVER_WRITER_THREADS
} server_writer;

#define SERVER_THREADED_CPUS 4

/* The writer serve uses for `w`: AUTO is THREADS when this process may run
 * on SERVER_THREADED_CPUS CPUs or more (its affinity mask, which taskset
 * and cpusets narrow), else INLINE. */
server_writer server_writer_for(server_writer w);

typedef struct server_options {
	const char *socket_path;   /* NULL: stdio */
	mode_t socket_mode;        /* 0: 0600 */
	gid_t socket_gid;
	int socket_gid_set;
	proto_options proto;
	/* Limits on clients (0: the default; docs/protocol.md, "Limits"). */
	size_t max_request;         /* bytes in one request line (1 MiB) */
	size_t max_queued;          /* reply bytes queued for a client before docket stops
				       reading from it (4 MiB) */
	unsigned max_clients;       /* connections at once (256; fewer if RLIMIT_NOFILE is low) */
	unsigned client_timeout_ms; /* a client that takes none of its pending replies for this
				       long is dropped; also bounds the flush at shutdown (10 s) */
	const char *approver_uids; /* "1001,1002": socket peers with the approver role */
	const char *runtime_uids;  /* socket peers with the runtime role (even the server's own uid) */
	server_writer writer;      /* who commits (SERVER_WRITER_AUTO: server_writer_for decides) */
	void (*ready)(void *ctx);  /* called once listening (tests, readiness) */
	void *ready_ctx;
} server_options;

typedef struct server_stats {
	uint64_t requests;
	uint64_t batches;
	uint64_t errors;
	uint64_t max_batch;
	uint64_t refused;      /* clients turned away (too many, no descriptors) */
	uint64_t dropped;      /* clients dropped (replies not read, oversized lines don't count) */
	uint64_t oversized;    /* request lines over max_request */
} server_stats;

#define SERVER_MAX_REQUEST_DEFAULT ((size_t)1 << 20)
#define SERVER_MAX_QUEUED_DEFAULT ((size_t)4 << 20)
#define SERVER_MAX_CLIENTS_DEFAULT 256u
#define SERVER_CLIENT_TIMEOUT_DEFAULT_MS 10000u

/* Serve until SIGTERM/SIGINT (socket) or end of input (stdio). */
int server_run(docket_ledger *l, const server_options *opts, server_stats *stats);

#endif
