/* SPDX-License-Identifier: Apache-2.0 */
/* Planted tree: the lowest layer, used correctly by everyone. */
int base_api(void);
