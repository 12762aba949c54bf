/* SPDX-License-Identifier: Apache-2.0 */
/*
 * common.h: error codes, attributes and the thread-local last error shared by
 * every docket module.
 */
#ifndef DOCKET_COMMON_H
#define DOCKET_COMMON_H

#include <stddef.h>
#include <stdint.h>

/*
 * DOCKET_EXTERN marks the public API: libdocket is built with
 * -fvisibility=hidden, so a function is exported from libdocket.so only when
 * its declaration in include/docket/ carries this marker. A new public
 * function needs it (the test `abi_exports` names any that lacks it);
 * internal helpers shared between modules stay hidden. It also gives the
 * function C linkage in C++, so the headers need no extern "C" block.
 * See docs/api.md.
 */
#ifdef __cplusplus
#define DOCKET_LINKAGE_ extern "C"
#else
#define DOCKET_LINKAGE_
#endif
#if defined(__GNUC__) || defined(__clang__)
#define DOCKET_EXTERN DOCKET_LINKAGE_ __attribute__((visibility("default")))
#define DOCKET_MUST_USE __attribute__((warn_unused_result))
#define DOCKET_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define DOCKET_EXTERN DOCKET_LINKAGE_
#define DOCKET_MUST_USE
#define DOCKET_PRINTF(f, a)
#endif

/*
 * Return codes. Fallible functions return 0 on success and one of these
 * negative values on failure; the one-line message is in docket_error_last().
 */
enum {
	DOCKET_OK = 0,
	DOCKET_ERROR = -1,         /* unexpected internal failure */
	DOCKET_EINVALID = -2,      /* bad input: malformed, unknown field, wrong type */
	DOCKET_ENOTFOUND = -3,     /* no such session, invocation, ledger */
	DOCKET_ETRANSITION = -4,   /* the event breaks an invariant of the state machine */
	DOCKET_ESTALE = -5,        /* stale epoch (fencing, invariant 7) */
	DOCKET_ECONFLICT = -6,     /* same id, different content */
	DOCKET_ESTORAGE = -7,      /* LMDB or file system failure */
	DOCKET_ENOMEM = -8,        /* allocation failed */
	DOCKET_EMAPFULL = -9,      /* ledger reached its configured size cap */
	DOCKET_EVERSION = -10,     /* on-disk format version mismatch */
	DOCKET_ECORRUPT = -11,     /* a frame or projection failed a check */
	DOCKET_EEXISTS = -12       /* something exists that must not */
};

typedef struct docket_error {
	int code;
	/* For ETRANSITION: the number of the DESIGN §3 invariant (0 if none). */
	int invariant;
	/* For a rejected batch append: the 1-based index of the event that
	 * failed (0 if the error is not about one event). */
	size_t event_index;
	char message[1024];
} docket_error;

/* The last error set on this thread (code 0 and an empty message if none). */
DOCKET_EXTERN const docket_error *docket_error_last(void);

/* Stable lower-case name of a code, as used in JSON ("invalid_transition", ...). */
DOCKET_EXTERN const char *docket_error_kind(int code);

/* Free memory that a docket function handed over ("freed with docket_free"). */
DOCKET_EXTERN void docket_free(void *ptr);

#endif
