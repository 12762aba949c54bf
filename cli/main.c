/* SPDX-License-Identifier: Apache-2.0 */
/* placeholder: replaced by the CLI implementation */
#include <stdio.h>
int main(void)
{
	fputs("docket: not built yet\n", stderr);
	return 2;
}
