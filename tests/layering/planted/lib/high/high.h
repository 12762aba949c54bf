/* SPDX-License-Identifier: Apache-2.0 */
/* Planted tree: the upper layer's API. */
int high_api(void);
