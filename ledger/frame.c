/* SPDX-License-Identifier: Apache-2.0 */
typedef int docket_placeholder_frame;
