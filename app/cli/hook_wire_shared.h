/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hook_wire_shared.h: what both ends of the hook protocol must agree on,
 * for hook_wire.c and hook_server.c and for hook_fast.c, which links no
 * libc (nothing here needs it): the u32 (little-endian) and which
 * environment variables the context leaves out.
 */
#ifndef DOCKET_CLI_HOOK_WIRE_SHARED_H
#define DOCKET_CLI_HOOK_WIRE_SHARED_H

#include <stdint.h>

static inline uint32_t hook_wire_le32_get(const unsigned char le[4])
{
	return (uint32_t)le[0] | (uint32_t)le[1] << 8 | (uint32_t)le[2] << 16 | (uint32_t)le[3] << 24;
}

static inline void hook_wire_le32_put(unsigned char le[4], uint32_t v)
{
	le[0] = (unsigned char)v;
	le[1] = (unsigned char)(v >> 8);
	le[2] = (unsigned char)(v >> 16);
	le[3] = (unsigned char)(v >> 24);
}

/* A variable the context leaves out: "_", which shells set to the path of
 * each command they run. */
static inline int hook_wire_env_ignored(const char *e)
{
	return e[0] == '_' && e[1] == '=';
}

#endif
