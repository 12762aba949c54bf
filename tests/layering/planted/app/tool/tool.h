/* SPDX-License-Identifier: Apache-2.0 */
/* Planted tree: a program's header. */
int tool_main(void);
