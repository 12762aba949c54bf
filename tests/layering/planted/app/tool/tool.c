/* SPDX-License-Identifier: Apache-2.0 */
/* Planted tree: clean; a program uses the library's API. */
#include "high/high.h"
#include "tool.h"

int tool_main(void)
{
	return high_api();
}
