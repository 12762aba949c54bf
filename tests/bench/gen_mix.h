/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gen_mix.h: a deterministic, seeded generator of realistic docket event
 * streams for benchmarks.
 *
 * The shapes and size distributions are modelled on real Codex and Claude
 * Code sessions (tool mix, command kinds, output lengths: many short outputs,
 * a tail of multi-KB test and build logs with repetitive lines); all text is
 * synthesised from small vocabularies, none is copied from a transcript.
 *
 * Stream: one runtime.started, then sessions (several open at once, turns
 * interleaved between them), each opened with a policy revision, then turns
 * of tool calls. Verdicts: ~70% allowed, ~20% approval_required (requested
 * and settled: mostly approved, some denied or aborted), ~10% denied. Every
 * call ends with tool.completed; every session is closed at the end, so the
 * whole stream is a legal history and so is every prefix of it.
 */
#ifndef DOCKET_BENCH_GEN_MIX_H
#define DOCKET_BENCH_GEN_MIX_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

typedef struct gen_mix_stats {
	size_t events;
	size_t sessions;
	size_t calls;
	size_t allowed;
	size_t approval_required;
	size_t approved;          /* approved or approved_for_session */
	size_t approval_refused;  /* denied or aborted by the reviewer */
	size_t denied;            /* denied by policy at T0 */
	size_t failed;            /* dispatched, outcome error or timeout */
} gen_mix_stats;

/*
 * Append JSON lines (one compact object per line, '\n'-terminated) to `out`:
 * at least `target_events` events, then the events that close every open
 * session. `stats` may be NULL. Returns 0 or a negative DOCKET_E* code.
 */
int gen_mix(docket_buf *out, size_t target_events, uint64_t seed, gen_mix_stats *stats) DOCKET_MUST_USE;

/*
 * Append the JSON lines of `text` (gen_mix's output; split in place) to
 * `ledger` in batches of 4,096 events. Returns 0 or a negative DOCKET_E* code.
 */
struct docket_ledger;
int gen_mix_append(struct docket_ledger *ledger, char *text) DOCKET_MUST_USE;

#endif
