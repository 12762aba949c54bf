#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# long.sh FUZZER SEEDS GROWN SECONDS: run one libFuzzer target for SECONDS
# (the slow suite gives each 600) from the committed corpus SEEDS, writing
# what it grows to GROWN (in the build tree, never the source tree). Any
# crash, leak or timeout fails the test and leaves its input beside GROWN.
# Keep what is worth keeping as a regression test with a minimising merge:
#   FUZZER -merge=1 tests/fuzz/corpus/NAME GROWN
set -euo pipefail
fuzzer=$1 seeds=$2 grown=$3 secs=$4
mkdir -p "$grown"
exec "$fuzzer" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
	-artifact_prefix="$grown.artifact-" "$grown" "$seeds"
