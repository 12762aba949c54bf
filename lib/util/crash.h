/* SPDX-License-Identifier: Apache-2.0 */
/*
 * crash.h: named crash points for fault-injection tests.
 *
 * docket_crash_point("append.before_commit") kills the process with SIGKILL
 * when the environment variable DOCKET_CRASH_POINT names that point
 * ("NAME", or "NAME@N" for its Nth hit). Without the variable it costs one
 * branch. Tests use it to prove what a crash at each point leaves behind.
 * "NAME~MS" pauses there MS milliseconds instead (every hit from the Nth
 * with "NAME@N~MS"): a race made wide enough to test.
 */
#ifndef DOCKET_UTIL_CRASH_H
#define DOCKET_UTIL_CRASH_H

void docket_crash_point(const char *name);

/* Arm a crash point directly ("NAME" or "NAME@N"; NULL disarms). For tests
 * that fork: the child arms its own point without touching the environment. */
void docket_crash_arm(const char *spec);

#endif
