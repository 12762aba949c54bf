/* SPDX-License-Identifier: Apache-2.0 */
/*
 * otlp_http.c: `docket export --format otel --endpoint URL`: the OTLP/JSON
 * export (exporters/otel.c), one ExportTraceServiceRequest per session, each
 * POSTed to URL (an OTLP/HTTP traces endpoint, such as
 * http://collector:4318/v1/traces) with libcurl, in the program only: the
 * library stays free of it. Only http and https; a reply other than 2xx, or no reply in
 * OTLP_TIMEOUT_S, stops the export with an error naming the status.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef DOCKET_HAVE_CURL
#include <curl/curl.h>
#endif

#include "cli.h"
#include "util/error.h"

#define OTLP_TIMEOUT_S 30L

#ifdef DOCKET_HAVE_CURL
/* The reply body is not needed: drop it. */
static size_t discard(char *ptr, size_t size, size_t n, void *ctx)
{
	(void)ptr;
	(void)ctx;
	return size * n;
}

static int post_one(CURL *curl, const char *url, const char *body, size_t len)
{
	char err[CURL_ERROR_SIZE] = "";
	long status = 0;
	CURLcode rc;

	curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, err);
	if ((rc = curl_easy_perform(curl)) != CURLE_OK)
		return docket_error_set(DOCKET_ESTORAGE, "cannot post to %s: %s", url,
					*err ? err : curl_easy_strerror(rc));
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
	if (status < 200 || status > 299)
		return docket_error_set(DOCKET_ESTORAGE, "%s answered HTTP %ld", url, status);
	return 0;
}

static int post_lines(const char *url, char *text, size_t len, uint64_t *posted)
{
	struct curl_slist *headers = NULL;
	CURL *curl = NULL;
	size_t at = 0;
	int error = 0;

	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK || !(curl = curl_easy_init()))
		return docket_error_set(DOCKET_ERROR, "cannot start libcurl");
	if (!(headers = curl_slist_append(NULL, "Content-Type: application/json"))) {
		error = docket_error_set_oom();
		goto cleanup;
	}
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT, OTLP_TIMEOUT_S);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(curl, CURLOPT_USERAGENT, "docket/" DOCKET_EXPORT_VERSION);
	while (at < len && error == 0) {
		char *nl = memchr(text + at, '\n', len - at);
		size_t n = nl ? (size_t)(nl - (text + at)) : len - at;

		if (n > 0 && (error = post_one(curl, url, text + at, n)) == 0)
			(*posted)++;
		at += n + 1;
	}
cleanup:
	curl_slist_free_all(headers);
	curl_easy_cleanup(curl);
	curl_global_cleanup();
	return error;
}
#endif

int cli_export_otlp_http(docket_ledger *ledger, const docket_export_options *opts, const char *url,
			 docket_export_stats *stats, uint64_t *posted)
{
#ifdef DOCKET_HAVE_CURL
	docket_export_options o = *opts;
	char *text = NULL;
	size_t len = 0;
	FILE *mem;
	int error;

	*posted = 0;
	if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0)
		return docket_error_set(DOCKET_EINVALID, "--endpoint wants an http:// or https:// URL, not '%s'", url);
	if (!(mem = open_memstream(&text, &len)))
		return docket_error_set_oom();
	o.format = DOCKET_EXPORT_OTEL;
	error = docket_export(ledger, &o, mem, stats);
	if (fclose(mem) != 0 && error == 0)
		error = docket_error_set_oom();
	if (error == 0)
		error = post_lines(url, text, len, posted);
	free(text);
	return error;
#else
	(void)ledger;
	(void)opts;
	(void)stats;
	(void)url;
	*posted = 0;
	return docket_error_set(DOCKET_EINVALID, "this docket was built without libcurl: --endpoint is not available");
#endif
}
