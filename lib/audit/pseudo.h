/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pseudo.h: what the exporters need of the pseudonymizer beyond
 * include/docket/audit.h (a friend header of lib/audit).
 */
#ifndef DOCKET_AUDIT_PSEUDO_H
#define DOCKET_AUDIT_PSEUDO_H

#include <jansson.h>

#include "docket/audit.h"

/* Learn the user names of one event (home paths, USER, HOME ...) into what
 * the pseudonymizer remembers, rewriting nothing: the export's first pass,
 * so that a name seen late is replaced in earlier events too. */
int pseudo_learn(const docket_pseudonymizer *p, json_t *event);

#endif
