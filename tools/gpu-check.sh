#!/bin/sh
# gpu-check.sh - the one prepared check of the cuda backend on a GPU machine
# (docs/cuda_backend.md section 6). It
#   1. checks that nvidia-smi sees GPUs,
#   2. builds with CUDA (make CUDA=1 BUILD=release O=build/gpu),
#   3. runs the cuda_* tests (conformance of every op at fp32/fp16/bf16 against
#      the reference kernels, device buffers, OOM, partition), which must not
#      skip on a GPU,
#   4. runs quick Offline performance runs of every benchmark on all GPUs (and Server runs
#      at a fraction of an Offline figure: SERVER_ROWS)
#      (--backend cuda --devices all; full-size models with random weights,
#      synthetic data) at each precision, with the batch the entry picks for the
#      device (run.json max_batch_from) unless BATCH_<id> is set,
#   5. prints one table: samples/s in all and per GPU, the batch, the wall time of
#      the run (model build and warm-up included; issue 25: <= 60 s), the nodes left
#      on the reference kernels (run.json placement; issue 25: 0), next to the
#      published MLPerf v1.1 per-GPU figures of ../shared/reference/benchmarks.md
#      (Dell R7525 3x A100-PCIe-40GB and 3x A30, TensorRT, divided by 3).
# Any failing step prints "GPU-CHECK FAILED: <step>" and the script exits 1; steps left for
# lack of time (GPU_CHECK_BUDGET, below) are named after "GPU-CHECK INCOMPLETE" and, if
# nothing failed, it exits 3; it never reports a figure it did not measure.
#
# Usage: sh tools/gpu-check.sh [--skip-build] [--only-tests] [--no-tests] [--bundle]
#                              [--precisions "fp32 fp16"] [--benchmarks "resnet50 bert-99"]
# One device call does not hold the tests, all six benchmarks, the extra rows, the profiles
# and the PyTorch peer; docs/cuda_backend.md section 6 splits a session's 15 minutes into
# three calls of GPU_CHECK_BUDGET=290 (tests + ResNet50 and BERT at fp16 + the peer; the
# fp16-nhwc, int8 and graph-post rows + lt_gemm; DLRM, RNN-T and 3D U-Net + BERT's profile).
# --bundle: on a machine without make's libraries, from `. .gpu/env.sh`
# (../shared/tools/gpu-bundle.sh): no build, the test binary runs directly.
# Environment: GPU_CHECK_BUILD (build dir, build/gpu), GPU_CHECK_OUT (logs and run
# trees), BATCH_resnet50, BATCH_bert_99, ... (a fixed batch for that benchmark),
# NHWC_BENCHMARKS (default "resnet50"): these also run at "fp16-nhwc", i.e. fp16 with
# --nhwc-fp16 (the NHWC float16 conv islands, issue 24), a row beside their fp16 one;
# GRAPHPOST_BENCHMARKS (default "ssd-resnet34"): also a "fp16-graphpost" row, the model built
# with its decode + NMS inside the graph (--variant graph-post: inferbench.SSDPostprocess on
# the GPU, issue 24);
# KITS_BENCHMARKS (default "3d-unet-99"): also a "fp16-kits19" row, 3D U-Net on KiTS19
# (--dataset kits19: the sliding window, its sums kept on the device in the window graph,
# issue 25);
# LT_GEMM (default 1): time cuBLASLt GEMMs at float32 vs float16 storage (bench/cuda/lt_gemm,
# about 20 s), the measurement that decides whether the backend needs 16-bit activations;
# HALF_BENCHMARKS (default "bert-99"): also a "fp16-half" row, fp16 with --half-chains (values
# between products, LayerNorm, Add and the fused attention held in 16 bits: cuda_half.c), and
# an "int8-half" row where the int8 row runs too (the int8 products reading and writing them);
# INT8_BENCHMARKS (default "resnet50 bert-99"): also an "int8" row (calibrated; the products
# with constant weights on cuBLASLt IMMA and the 2-D convolutions on cuDNN int8, the rest as
# at fp16: cuda_matmul_q8.c, cuda_conv_i8.c, issue 24);
# FP8_BENCHMARKS (default "bert-99"): also an "fp8-half" row (calibrated; the products with
# constant weights on e4m3 operands through cuBLASLt, Hopper only, with the 16-bit chains:
# cuda_matmul_q8.c, issue 24);
# FP8CONV_BENCHMARKS (default "resnet50"): also an "fp8" row (calibrated; the 2-D convolutions
# with channels in multiples of 16 on e4m3 through cuDNN's graph API, sm_89 and later:
# cuda_conv_f8.c, tenth session);
# U8IN_BENCHMARKS (default "resnet50"): also "fp16-u8in" and "int8-u8in" rows beside the fp16
# and int8 rows that run (--variant u8-input: the built-in model takes uint8 pixels and
# subtracts the means itself, so a batch collates and copies a quarter of the bytes; issue 24);
# SERVER_ROWS (default "resnet50:int8 bert-99:int8 ssd-resnet34:fp16-graphpost dlrm-99:fp16
# rnnt:fp16"): after each of these benchmark:row Offline rows, a quick Server run with the same
# flags at --target-qps = a fraction of the figure just measured: 0.7 for DLRM and RNN-T, 0.75
# for the others (the targets of issues 24 and 25: Server VALID at >= 0.75x of Offline for
# ResNet50 and BERT, >= 0.7x for DLRM and RNN-T; SSD has none, 0.75 asked); a row of the table
# with scenario Server, its figure the loadgen's Server result (thirteenth session);
# PROFILE_STEPS (default 1): print where ResNet50's device time goes, per step; "bert" does
# the same for BERT-Large fp16 at batch 32 instead (the third call); 0 skips.
set -u
cd "$(dirname "$0")/.." || exit 1
ROOT=$(pwd)
O=${GPU_CHECK_BUILD:-build/gpu}
OUT=${GPU_CHECK_OUT:-$O/gpu-check}
SKIP_BUILD=0
ONLY_TESTS=0
BUNDLE=0
PRECISIONS="fp16"
BENCHMARKS="resnet50 bert-99 ssd-resnet34"
NO_TESTS=0
while [ $# -gt 0 ]; do
    case "$1" in
    --skip-build) SKIP_BUILD=1 ;;
    --only-tests) ONLY_TESTS=1 ;;
    --no-tests) NO_TESTS=1 ;;
    --bundle) BUNDLE=1; SKIP_BUILD=1 ;;
    --precisions) shift; PRECISIONS=$1 ;;
    --benchmarks) shift; BENCHMARKS=$1 ;;
    *) echo "usage: sh tools/gpu-check.sh [--skip-build] [--only-tests] [--no-tests] [--bundle] [--precisions LIST] [--benchmarks LIST]" >&2; exit 2 ;;
    esac
    shift
done
FAILED=0
fail() {
    echo "GPU-CHECK FAILED: $*" >&2
    FAILED=1
}
die() {
    echo "GPU-CHECK FAILED: $*" >&2
    exit 1
}
mkdir -p "$OUT" || die "cannot create $OUT"
# The device tool ends a call at 8 minutes and its output with it: every step's timeout is cut
# to what is left of GPU_CHECK_BUDGET (seconds, default 450) less 15 s for the table, and a step
# with under 20 s left is not started but named at the end ("GPU-CHECK INCOMPLETE", exit 3), so
# a slow or hanging step costs the steps after it, never the table of what did run.
BUDGET=${GPU_CHECK_BUDGET:-450}
START=$(date +%s)
NOT_RUN=""
# step_time CAP NAME: sets TT to min(CAP, seconds left); under 20 s left it notes NAME in
# NOT_RUN and returns 1 (called directly, not in $(...), so that NOT_RUN keeps the note)
step_time() {
    TT=$((BUDGET - ($(date +%s) - START) - 15))
    if [ "$TT" -lt 20 ]; then
        NOT_RUN="$NOT_RUN
   $2"
        echo "== not started, time budget spent: $2" >&2
        return 1
    fi
    [ "$TT" -lt "$1" ] || TT=$1
}

# ---- 1. GPUs -------------------------------------------------------------------------------
command -v nvidia-smi >/dev/null 2>&1 || die "nvidia-smi not found: no NVIDIA driver on this machine"
nvidia-smi -L > "$OUT/gpus.txt" 2>&1 || die "nvidia-smi -L failed: $(cat "$OUT/gpus.txt")"
NGPU=$(grep -c '^GPU ' "$OUT/gpus.txt")
[ "$NGPU" -ge 1 ] || die "nvidia-smi lists no GPU"
GPU_NAME=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null | head -1)
echo "== $NGPU GPU(s): $GPU_NAME"
nvidia-smi --query-gpu=index,name,memory.total,clocks.max.sm,driver_version --format=csv 2>&1 | sed 's/^/   /'

# ---- 2. build --------------------------------------------------------------------------------
if [ "$SKIP_BUILD" = 0 ]; then
    echo "== build (make CUDA=1 BUILD=release O=$O)"
    JOBS=$(nproc 2>/dev/null || echo 4)
    make -j"$JOBS" CUDA=1 BUILD=release O=$O > "$OUT/build.log" 2>&1 ||
        { tail -30 "$OUT/build.log" >&2; die "build failed (log: $OUT/build.log)"; }
fi
CLI=$O/bin/inferbench
[ -x "$CLI" ] || die "$CLI missing (build first, or drop --skip-build)"

# ---- 3. tests --------------------------------------------------------------------------------
if [ "$NO_TESTS" = 1 ]; then
    echo "== tests: skipped (--no-tests)"
elif ! step_time 240 "the cuda_* tests"; then
    : > "$OUT/tests.log"
elif [ "$BUNDLE" = 1 ]; then
    echo "== $O/tests/ib-tests 'cuda_*' (at most $TT s)"
    timeout "$TT" "$O/tests/ib-tests" -j4 -v 'cuda_*' > "$OUT/tests.log" 2>&1
else
    echo "== make check T='cuda_*' (at most $TT s)"
    timeout "$TT" make CUDA=1 BUILD=release O=$O check T='cuda_*' > "$OUT/tests.log" 2>&1
fi
TRC=$?
[ "$TRC" = 124 ] && echo "   the tests were stopped at the time budget: the lines above are those that ended" >&2
[ "$NO_TESTS" = 1 ] && : > "$OUT/tests.log"
grep -E '^(ok|not ok)' "$OUT/tests.log" | sed 's/^/   /'
grep -E '^#   # (FAIL|[a-z_]+: [0-9]+ cases)' "$OUT/tests.log" | sed 's/^/   /'
[ "$TRC" = 0 ] || fail "cuda_* tests failed (log: $OUT/tests.log)"
# on a GPU machine the device tests must run, not skip
if [ "$NO_TESTS" = 0 ] && grep -E '^ok [0-9]+ - cuda_(ops_(eltwise|shape|matmul|conv)|buffers_round_trip|out_of_memory_is_an_error|bad_device_index|devices_all_on_cuda) # SKIP' "$OUT/tests.log" >&2; then
    fail "GPU tests skipped on a machine with $NGPU GPU(s) (see above)"
fi
[ "$ONLY_TESTS" = 1 ] && { [ "$FAILED" = 0 ] && echo "== tests OK"; exit "$FAILED"; }

# ---- 4. quick Offline runs -------------------------------------------------------------------
# "samples/s VALID|INVALID" of run --json output: its "performance" object, the figure in
# "metrics" (before the twelfth session this read performance.samples_per_second, which the
# CLI never wrote: every row would have failed with "no samples_per_second"); a Server run has
# none there, its figure is the headline (the loadgen's completed or scheduled samples/s)
perf_of() {
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); p=d.get("performance") or {}; m=p.get("metrics") or {}; v=m.get("samples_per_second") or (m.get("headline") or {}).get("value"); print("%s %s" % ("%.1f" % v if v else "-", "VALID" if p.get("valid") else "INVALID"))' "$1" 2>/dev/null ||
        { v=$(sed -n 's/.*"samples_per_second": *\([0-9.]*\).*/\1/p' "$1" | head -1); echo "${v:--} ?"; }
}
# published figure of the 3-GPU Dell system (column 3 = A100x3, 4 = A30x3) in scenario $3
# (default Offline),
# per GPU: from ../shared/reference/benchmarks.md section 3.2, or on a GPU machine (which has
# only .gpu/) from its copy tools/published-v1.1.md; a row named "dlrm-99 = dlrm-99.9" serves
# both ids
published() {
    f="$ROOT/../shared/reference/benchmarks.md"
    [ -f "$f" ] || f="$ROOT/tools/published-v1.1.md"
    [ -f "$f" ] || { echo "-"; return; }
    awk -F'|' -v b="$1" -v col="$2" -v sc="${3:-Offline}" '
        { n = $2; s = $3; gsub(/ /, "", n); gsub(/ /, "", s); k = split(n, ids, "=") }
        s == sc { for (i = 1; i <= k; i++) if (ids[i] == b) {
            v = $(col + 1); gsub(/[ ,]/, "", v); x = v / 3
            printf (x >= 100 ? "%.0f\n" : "%.1f\n"), x; exit } }' "$f"
}
# "batch wall_s fallback_nodes fallback_ops" of a run.json
placement_of() {
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); p=d.get("placement") or {}; print("%s %s %s" % (d.get("max_batch","-"), p.get("fallback_nodes","-"), (p.get("fallback_ops") or "-").replace(" ","")))' "$1" 2>/dev/null || echo "- - -"
}
# "replayed/subgraphs" of a run.json's graph_replay (issue 24: CUDA Graph capture), then the
# first refusal's reason when one was refused
replay_of() {
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1])).get("graph_replay") or {}; print("%s/%s" % (r.get("replayed","-"), r.get("subgraphs","-"))); print(r.get("first_refusal","") if r.get("refused") else "")' "$1" 2>/dev/null || echo "-/-"
}
# "at/products" of a run.json's precision_use (products computing at their model's precision:
# an int8 or fp8 row whose convolutions or matmuls kept the fp16 path shows it here), then the
# others ("Conv x2 at fp16") when there are any
prec_of() {
    python3 -c 'import json,sys; u=json.load(open(sys.argv[1])).get("precision_use") or {}; print("%s/%s" % (u.get("at_precision","-"), u.get("products","-"))); print(u.get("others",""))' "$1" 2>/dev/null || echo "-/-"
}
# where the workers' time went (run.json worker_time, shares of workers x span) and the
# Offline rate over the run's own warm-up rate (issue 24 target: >= 0.95): an Offline run
# below its warm-up rate is starved by the host (host, idle) or waiting on copies (in, out)
time_of() {
    python3 -c 'import json,sys
d = json.load(open(sys.argv[1])); t = d.get("worker_time") or {}
a = (t.get("span_s") or 0) * (t.get("workers") or 0)
w = d.get("warmup_samples_per_second") or 0
p = ((json.load(open(sys.argv[2])).get("performance") or {}).get("metrics") or {}).get("samples_per_second") or 0
r = "offline/warm-up %.2f" % (p / w) if p and w else "offline/warm-up -"
if sys.argv[3] != "Offline":
    r = sys.argv[3].lower()
if a > 0:
    k = ("compute", "inputs", "outputs", "host", "responses", "idle")
    print("%s; " % r + ", ".join("%s %.1f %%" % (n, 100 * t[n + "_s"] / a) for n in k) + " of %d worker(s) x %.3g s" % (t["workers"], t["span_s"]))
else:
    print(r + "; no worker time")' "$1" "$2" "$3" 2>/dev/null || echo "no worker time"
}
# the Server target's fraction of the Offline figure (issues 24 and 25)
server_fraction() {
    case "$1" in dlrm*|rnnt) echo 0.7 ;; *) echo 0.75 ;; esac
}
# run_row B P SCENARIO PREC "FLAGS": one quick run of benchmark B (row P) on every GPU with
# these flags, its line in ROWS and its notes; SPS is its figure afterwards ("-": none)
run_row() {
    B=$1
    P=$2
    SC=$3
    SPS="-"
    D="$OUT/$B-$P"
    [ "$SC" = Offline ] || D="$D-$(echo "$SC" | tr 'A-Z' 'a-z')"
    rm -rf "$D"
    NAME="run $B $P"
    [ "$SC" = Offline ] || NAME="$NAME $SC"
    step_time 300 "$NAME" || return 0
    echo "== $NAME ${FIXED:+batch $FIXED }on $NGPU GPU(s) (at most $TT s)"
    T0=$(date +%s)
    timeout "$TT" "$CLI" run --benchmark "$B" --scenario "$SC" --quick --backend cuda \
        --devices all --precision "$4" $5 --json --output-dir "$D" > "$D.json" 2> "$D.err"
    RC=$?
    WALL=$(( $(date +%s) - T0 ))
    if [ "$RC" != 0 ] && [ "$RC" != 3 ]; then
        tail -5 "$D.err" >&2
        fail "$NAME exited $RC after $WALL s (stderr: $D.err)"
        ROWS="$ROWS$B|$P|$SC|exit $RC|-|-|-|$WALL|-|-|-|-\n"
        return 0
    fi
    set -- $(perf_of "$D.json")
    SPS=$1
    VAL=$2
    RJ=$(find "$D" -name run.json | head -1)
    set -- $( [ -n "$RJ" ] && placement_of "$RJ" || echo "- - -")
    BATCH=$1
    FB=$2
    FBOPS=$3
    PER=$(awk -v s="$SPS" -v n="$NGPU" 'BEGIN { if (s == "-") print "-"; else printf "%.1f", s / n }')
    [ "$SPS" = "-" ] && fail "$NAME: no samples_per_second in $D.json"
    [ "$VAL" = "VALID" ] || echo "   note: $B $P $SC is $VAL (quick runs are short; the figure is still a measurement)"
    [ "$FB" = "0" ] || echo "   note: $B $P left $FB node(s) on the reference kernels: $FBOPS"
    RP=$( [ -n "$RJ" ] && replay_of "$RJ" || echo "-/-")
    REPLAY=$(printf '%s\n' "$RP" | head -1)
    WHY=$(printf '%s\n' "$RP" | sed -n 2p)
    [ -z "$WHY" ] || echo "   note: $B $P: CUDA Graph capture refused for some subgraphs ($REPLAY replay); first: $WHY"
    PU=$( [ -n "$RJ" ] && prec_of "$RJ" || echo "-/-")
    PREC_AT=$(printf '%s\n' "$PU" | head -1)
    OTHERS=$(printf '%s\n' "$PU" | sed -n 2p)
    [ -z "$OTHERS" ] || echo "   note: $B $P: products not at their model's precision ($PREC_AT at it): $OTHERS"
    [ "$WALL" -le 60 ] || echo "   note: $B $P $SC took $WALL s (issue 25 target: <= 60 s)"
    [ -n "$RJ" ] && echo "   time: $B $P $SC: $(time_of "$RJ" "$D.json" "$SC")"
    ROWS="$ROWS$B|$P|$SC|$SPS|$PER|$VAL|$BATCH|$WALL|$FB|$REPLAY|$PREC_AT|$FBOPS\n"
}
ROWS=""
for B in $BENCHMARKS; do
    PLIST=$PRECISIONS
    case " ${NHWC_BENCHMARKS-resnet50} " in *" $B "*) PLIST="$PLIST fp16-nhwc" ;; esac
    case " ${GRAPHPOST_BENCHMARKS-ssd-resnet34} " in *" $B "*) PLIST="$PLIST fp16-graphpost" ;; esac
    case " ${KITS_BENCHMARKS-3d-unet-99} " in *" $B "*) PLIST="$PLIST fp16-kits19" ;; esac
    case " ${HALF_BENCHMARKS-bert-99} " in *" $B "*) PLIST="$PLIST fp16-half" ;; esac
    case " ${INT8_BENCHMARKS-resnet50 bert-99} " in *" $B "*) case " $PLIST " in *" int8 "*) ;; *) PLIST="$PLIST int8" ;; esac ;; esac
    # int8 with the 16-bit chains too, where both rows run
    case " ${HALF_BENCHMARKS-bert-99} " in *" $B "*) case " $PLIST " in *" int8 "*) PLIST="$PLIST int8-half" ;; esac ;; esac
    case " ${FP8_BENCHMARKS-bert-99} " in *" $B "*) PLIST="$PLIST fp8-half" ;; esac
    case " ${FP8CONV_BENCHMARKS-resnet50} " in *" $B "*) case " $PLIST " in *" fp8 "*) ;; *) PLIST="$PLIST fp8" ;; esac ;; esac
    # the uint8-pixel input beside the fp16 and int8 rows that run (twelfth session)
    case " ${U8IN_BENCHMARKS-resnet50} " in *" $B "*)
        case " $PLIST " in *" fp16 "*) PLIST="$PLIST fp16-u8in" ;; esac
        case " $PLIST " in *" int8 "*) PLIST="$PLIST int8-u8in" ;; esac ;; esac
    for P in $PLIST; do
        PREC=${P%-nhwc}
        PREC=${PREC%-graphpost}
        PREC=${PREC%-kits19}
        PREC=${PREC%-half}
        PREC=${PREC%-u8in}
        NHWC=""
        [ "${P%-nhwc}" != "$P" ] && NHWC="--nhwc-fp16"
        [ "${P%-half}" != "$P" ] && NHWC="--half-chains"
        VARIANT=""
        [ "${P%-graphpost}" != "$P" ] && VARIANT="--variant graph-post"
        [ "${P%-kits19}" != "$P" ] && VARIANT="--dataset kits19"
        [ "${P%-u8in}" != "$P" ] && VARIANT="--variant u8-input"
        VAR=BATCH_$(echo "$B" | tr '.-' '__')
        eval "FIXED=\${$VAR:-}"
        BATCH_ARG=""
        [ -n "$FIXED" ] && BATCH_ARG="--batch $FIXED"
        run_row "$B" "$P" Offline "$PREC" "$NHWC $VARIANT $BATCH_ARG"
        case " ${SERVER_ROWS-resnet50:int8 bert-99:int8 ssd-resnet34:fp16-graphpost dlrm-99:fp16 rnnt:fp16} " in
        *" $B:$P "*)
            if [ "$SPS" != "-" ]; then
                F=$(server_fraction "$B")
                Q=$(awk -v s="$SPS" -v f="$F" 'BEGIN { printf "%.1f", s * f }')
                echo "   server: $B $P at $Q samples/s, $F x its Offline $SPS"
                run_row "$B" "$P" Server "$PREC" "$NHWC $VARIANT $BATCH_ARG --target-qps $Q"
            fi ;;
        esac
    done
done

# ---- 4a. the PyTorch peer in the same call (issue 24: our figures beside PyTorch's), before the
# diagnostics below so that a short budget keeps it
if [ -n "${PEER:-}" ] && [ -f "$PEER" ] && step_time 240 "the PyTorch peer"; then
    echo "== PyTorch peer ($PEER: ResNet50 fp16/fp32 batch 128, BERT-Large fp16 batch 32)"
    timeout "$TT" python3 "$PEER" resnet50_fp16_bs128_eager resnet50_fp16_bs128_cudagraph \
        resnet50_fp32_bs128_eager bert_large_fp16_bs32_seq384 > "$OUT/torch_peer.txt" 2>&1 ||
        fail "the PyTorch peer failed (log: $OUT/torch_peer.txt)"
    grep -v '^{' "$OUT/torch_peer.txt" | sed 's/^/   /'
elif [ -z "${PEER:-}" ] || [ ! -f "$PEER" ]; then
    echo "== PyTorch peer: skipped (set PEER to gpu-torch-peer.py; .gpu/env.sh does)"
fi

# ---- 4b. where the device time goes: ResNet50 fp16 batch 128, per step (cuda profiling,
# events around each step; the steps run one by one, not as a CUDA Graph), islands off and on
if [ -x "$O/bench/models/models" ] && [ "${PROFILE_STEPS:-1}" = 1 ]; then
    for NH in "" "--nhwc-fp16"; do
        step_time 120 "ResNet50 profile ${NH:-(NCHW)}" || continue
        echo "== per-step profile: ResNet50 fp16 batch 128 ${NH:-(NCHW float32 storage)}"
        timeout "$TT" "$O/bench/models/models" --backend cuda --precisions fp16 --batches 128 \
            --reps 1 --seconds 2 --profile=12 $NH > "$OUT/profile${NH}.txt" 2>&1 ||
            fail "the ResNet50 profile ${NH} failed (log: $OUT/profile${NH}.txt)"
        sed -n '/^-- /,$p' "$OUT/profile${NH}.txt" | head -40 | sed 's/^/   /'
    done
fi
if [ -x "$O/bench/models/bert" ] && [ "${PROFILE_STEPS:-1}" = bert ] &&
    step_time 180 "BERT profile"; then
    echo "== per-step profile: BERT-Large fp16 batch 32, seq 384"
    timeout "$TT" "$O/bench/models/bert" --backend cuda --precisions fp16 --batches 32 --reps 1 \
        --seconds 2 --profile > "$OUT/profile-bert.txt" 2>&1 ||
        fail "the BERT profile failed (log: $OUT/profile-bert.txt)"
    sed -n '/^-- /,$p' "$OUT/profile-bert.txt" | head -40 | sed 's/^/   /'
fi

# ---- 4c. what 16-bit storage would buy: cuBLASLt at BERT's and ResNet50's shapes in the forms
# the backend has (float32 storage, FAST_16F) and could have (float16 storage), seconds
if [ -x "$O/bench/cuda/lt_gemm" ] && [ "${LT_GEMM:-1}" = 1 ] && step_time 120 "lt_gemm"; then
    echo "== cuBLASLt storage forms (bench/cuda/lt_gemm)"
    timeout "$TT" "$O/bench/cuda/lt_gemm" --reps 10 > "$OUT/lt_gemm.txt" 2>&1 ||
        fail "bench/cuda/lt_gemm failed (log: $OUT/lt_gemm.txt)"
    sed 's/^/   /' "$OUT/lt_gemm.txt"
fi

# ---- 5. the table ----------------------------------------------------------------------------
echo
echo "== Offline samples/s on $NGPU x $GPU_NAME (quick runs, random weights, synthetic data; Server rows: the loadgen's Server result)"
printf '%-13s %-14s %-8s %12s %10s %8s %6s %6s %9s %7s %8s %14s %7s %14s %7s\n' benchmark prec \
    scenario "all GPUs" "per GPU" status batch wall_s ref_nodes replay at_prec "A100 v1.1/GPU" \
    ratio "A30 v1.1/GPU" ratio
printf "$ROWS" | while IFS='|' read -r B P SC SPS PER VAL BATCH WALL FB REPLAY PRAT FBOPS; do
    [ -n "$B" ] || continue
    A100=$(published "$B" 3 "$SC")
    A30=$(published "$B" 4 "$SC")
    R1=$(awk -v a="$PER" -v b="$A100" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.3f", a / b; else print "-" }')
    R2=$(awk -v a="$PER" -v b="$A30" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.3f", a / b; else print "-" }')
    printf '%-13s %-14s %-8s %12s %10s %8s %6s %6s %9s %7s %8s %14s %7s %14s %7s\n' "$B" "$P" \
        "$SC" "$SPS" "$PER" "$VAL" "$BATCH" "$WALL" "$FB" "$REPLAY" "$PRAT" "${A100:--}" "$R1" \
        "${A30:--}" "$R2"
done
echo "Published figures: MLPerf Inference v1.1 closed, Dell R7525 (TensorRT 8.0.2, INT8 for both"
echo "benchmarks), Offline or Server samples/s of the 3-GPU system / 3 (../shared/reference/benchmarks.md section 3)."
echo "Targets: issue 24/25 (docs/cuda_backend.md); ref_nodes = nodes left on the reference kernels"
echo "on the host (run.json placement); replay = subgraphs replayed as one CUDA Graph launch after"
echo "warm-up / compiled (run.json graph_replay); at_prec = products computing at their model's"
echo "precision / products (run.json precision_use; the notes above list the others);"
echo "H100/H200 have no v1.1 figure there; cuda's int8 runs"
echo "products and 2-D convolutions in int8, int8 NHWC between convolutions (docs/cuda_backend.md); its fp8"
echo "runs the products with constant weights and the 2-D convolutions of 16n channels in e4m3, the"
echo "rest as at fp16."
echo "time used: $(($(date +%s) - START)) s of a $BUDGET s budget (GPU_CHECK_BUDGET)"
[ -z "$NOT_RUN" ] || echo "GPU-CHECK INCOMPLETE: not started within the time budget:$NOT_RUN" >&2
[ "$FAILED" = 0 ] || { echo "GPU-CHECK FAILED (see messages above)" >&2; exit 1; }
[ -z "$NOT_RUN" ] || exit 3
echo "== GPU-CHECK OK"
