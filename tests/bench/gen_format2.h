/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gen_format2.h: the stream of issue 12, as bench_format2 and
 * bench_json_parse use it: `sessions` sessions opened, `calls` invocations
 * assigned round-robin to them, each call's intent, dispatch and outcome
 * consecutive, one call in five asking for an approval first (requested,
 * settled), every session closed at the end. Deterministic; ~133 bytes per
 * line, short args, no outputs (gen_mix.h has the richer mix).
 */
#ifndef DOCKET_BENCH_GEN_FORMAT2_H
#define DOCKET_BENCH_GEN_FORMAT2_H

#include <stddef.h>

#include "util/buf.h"

/* Append the JSON lines ('\n'-terminated) to `out`, their count to *events.
 * 0, or -1 when out of memory. */
int gen_format2(docket_buf *out, size_t calls, size_t sessions, size_t *events);

#endif
