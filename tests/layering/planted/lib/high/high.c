/* SPDX-License-Identifier: Apache-2.0 */
/* Planted tree: clean; uses a lower layer and its own internal header. */
#include "base/base.h"
#include "high.h"
#include "high_internal.h"

int high_private(void)
{
	return base_api() + 1;
}

int high_api(void)
{
	return high_private();
}
