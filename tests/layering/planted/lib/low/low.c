/* SPDX-License-Identifier: Apache-2.0 */
/* Planted violations: a lower layer includes and calls an upper one. */
#include "base/base.h"
#include "high/high.h"

int low_up(void);

int low_up(void)
{
	return base_api() + high_api();
}
