/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hook_sha256.c: SHA-256 for docket-hook without OpenSSL's first fetch.
 *
 * The ledger hashes through EVP (frame.c fetches "SHA256" once per
 * process). OpenSSL 3's first fetch of a digest builds the method of every
 * digest the loaded providers offer, and the default provider offers about
 * twenty: 490,000 of the 1.28 million instructions of a PreToolUse event
 * (callgrind, issue 27), for one digest. So docket-hook loads, before
 * anything fetches, a built-in provider that offers SHA-256 alone,
 * computed by libcrypto's own SHA256_* functions (the same code the default
 * provider wraps), and nothing else. The default provider is loaded too
 * only when the process needs more: a hook that creates its ledger draws
 * the ledger id with RAND_bytes (hook_main.c asks for it then). Loading it
 * later does not work: the next fetch would build its twenty digests
 * anyway. Nothing else docket-hook runs uses libcrypto (SHA-256 for the
 * chain, the Merkle tree, the policy and transcript digests, the hook's
 * mode notes); an algorithm it did not offer would fail that event, and
 * under --enforce the call would be denied (fail closed). If installing it
 * fails, the default provider is loaded as usual: this changes the cost,
 * never the result (the same bytes are hashed by the same code;
 * tests/cli/cases/hook-lean.sh runs every event through docket-hook and
 * verifies the ledger it wrote).
 */
#define OPENSSL_SUPPRESS_DEPRECATED  /* SHA256_Init & co.: the provider-free code */

#include <string.h>

#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/provider.h>
#include <openssl/sha.h>

#include "hook_sha256.h"
#include "util/alloc.h"

static void *sha_newctx(void *provctx)
{
	(void)provctx;
	return docket_calloc(1, sizeof(SHA256_CTX));
}

static void sha_freectx(void *ctx)
{
	docket_free(ctx);
}

static void *sha_dupctx(void *ctx)
{
	SHA256_CTX *copy = docket_malloc(sizeof(SHA256_CTX));

	if (copy)
		memcpy(copy, ctx, sizeof(SHA256_CTX));
	return copy;
}

static int sha_init(void *ctx, const OSSL_PARAM params[])
{
	(void)params;
	return SHA256_Init(ctx);
}

static int sha_update(void *ctx, const unsigned char *in, size_t len)
{
	return SHA256_Update(ctx, in, len);
}

static int sha_final(void *ctx, unsigned char *out, size_t *outl, size_t outsz)
{
	if (outsz < SHA256_DIGEST_LENGTH || !SHA256_Final(out, ctx))
		return 0;
	*outl = SHA256_DIGEST_LENGTH;
	return 1;
}

static int sha_get_params(OSSL_PARAM params[])
{
	OSSL_PARAM *p;

	if ((p = OSSL_PARAM_locate(params, OSSL_DIGEST_PARAM_BLOCK_SIZE)) && !OSSL_PARAM_set_size_t(p, SHA256_CBLOCK))
		return 0;
	if ((p = OSSL_PARAM_locate(params, OSSL_DIGEST_PARAM_SIZE)) &&
	    !OSSL_PARAM_set_size_t(p, SHA256_DIGEST_LENGTH))
		return 0;
	if ((p = OSSL_PARAM_locate(params, OSSL_DIGEST_PARAM_XOF)) && !OSSL_PARAM_set_int(p, 0))
		return 0;
	if ((p = OSSL_PARAM_locate(params, OSSL_DIGEST_PARAM_ALGID_ABSENT)) && !OSSL_PARAM_set_int(p, 1))
		return 0;
	return 1;
}

typedef void (*fn)(void);

static const OSSL_DISPATCH sha_fns[] = {
	{ OSSL_FUNC_DIGEST_NEWCTX, (fn)sha_newctx },
	{ OSSL_FUNC_DIGEST_INIT, (fn)sha_init },
	{ OSSL_FUNC_DIGEST_UPDATE, (fn)sha_update },
	{ OSSL_FUNC_DIGEST_FINAL, (fn)sha_final },
	{ OSSL_FUNC_DIGEST_FREECTX, (fn)sha_freectx },
	{ OSSL_FUNC_DIGEST_DUPCTX, (fn)sha_dupctx },
	{ OSSL_FUNC_DIGEST_GET_PARAMS, (fn)sha_get_params },
	{ 0, NULL }
};

/* The default provider's names for it, so any spelling finds this one. */
static const OSSL_ALGORITHM digests[] = {
	{ "SHA2-256:SHA-256:SHA256:2.16.840.1.101.3.4.2.1", "provider=docket-sha256", sha_fns,
	  "SHA-256 (libcrypto's SHA256_*)" },
	{ NULL, NULL, NULL, NULL }
};

static const OSSL_ALGORITHM *query(void *provctx, int op, int *no_cache)
{
	(void)provctx;
	*no_cache = 0;
	return op == OSSL_OP_DIGEST ? digests : NULL;
}

static const OSSL_DISPATCH provider_fns[] = {
	{ OSSL_FUNC_PROVIDER_QUERY_OPERATION, (fn)query },
	{ 0, NULL }
};

static int provider_init(const OSSL_CORE_HANDLE *handle, const OSSL_DISPATCH *in, const OSSL_DISPATCH **out,
			 void **provctx)
{
	(void)in;
	*out = provider_fns;
	*provctx = (void *)handle;
	return 1;
}

int hook_sha256_install(int need_default)
{
	EVP_MD *md = NULL;
	int ours = 0;

	if (!need_default && OSSL_PROVIDER_add_builtin(NULL, "docket-sha256", provider_init) == 1 &&
	    OSSL_PROVIDER_load(NULL, "docket-sha256") != NULL && (md = EVP_MD_fetch(NULL, "SHA256", NULL)) != NULL)
		ours = strcmp(OSSL_PROVIDER_get0_name(EVP_MD_get0_provider(md)), "docket-sha256") == 0;
	EVP_MD_free(md);
	if (!ours)
		(void)OSSL_PROVIDER_load(NULL, "default");
	return ours;
}
