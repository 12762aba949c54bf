/* SPDX-License-Identifier: Apache-2.0 */
#ifndef DOCKET_HOOK_SHA256_H
#define DOCKET_HOOK_SHA256_H

/*
 * docket-hook's SHA-256 without OpenSSL's first fetch of every digest
 * (hook_sha256.c). Call before anything uses libcrypto; `need_default`:
 * the process needs more than SHA-256 (RAND_bytes, to create a ledger).
 * 1 when SHA-256 comes from it alone, 0 when the default provider was
 * loaded instead.
 */
int hook_sha256_install(int need_default);

#endif
