#!/bin/sh
# run.sh [OUT] - build the full Dell PowerEdge R7525 3x A100-PCIe-40GB vs 3x A30 report
# (MLPerf Inference v1.1, closed, official logs) into OUT (default ./r7525-report), then
# print the same comparison as a terminal table.
#   INFERBENCH=path/to/inferbench   (default: build/release/bin/inferbench of this checkout)
#   DELL_DATA=path/to/closed/Dell    (default: ../shared/data/mlperf-inference-v1.1/closed/Dell)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${INFERBENCH:-$root/build/release/bin/inferbench}
data=${DELL_DATA:-$root/../shared/data/mlperf-inference-v1.1/closed/Dell}
out=${1:-r7525-report}

"$bin" report "$data" \
  --prices "$here/prices.csv" \
  --published "$here/published.csv" \
  --baseline R7525_A30x3_TRT \
  --title "Dell PowerEdge R7525: 3x A100-PCIe-40GB vs 3x A30 (MLPerf Inference v1.1, closed)" \
  --output "$out"

"$bin" compare "$data/results/R7525_A100-PCIE-40GBx3_TRT" "$data/results/R7525_A30x3_TRT" \
  --prices "$here/prices.csv" --published "$here/published.csv"
