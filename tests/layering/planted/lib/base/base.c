/* SPDX-License-Identifier: Apache-2.0 */
/* Planted tree: clean (no violation may be reported here). */
#include "base.h"

int base_api(void)
{
	return 1;
}
