/* SPDX-License-Identifier: Apache-2.0 */
/* Planted violations: another folder's internal header, and its function. */
#include "high/high_internal.h"

int mid_private(void);

int mid_private(void)
{
	return high_private();
}
