/* SPDX-License-Identifier: Apache-2.0 */
/* Planted tree: private to lib/high. */
int high_private(void);
