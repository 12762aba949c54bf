/* SPDX-License-Identifier: Apache-2.0 */
/* Planted violation: library code includes a program's header. */
#include "tool/tool.h"

int low_app(void);

int low_app(void)
{
	return 0;
}
