/* SPDX-License-Identifier: Apache-2.0 */
/* Planted violation: an internal function reached through a prototype of
 * its own (no include to catch). */
int high_private(void);
int mid_sneak(void);

int mid_sneak(void)
{
	return high_private();
}
