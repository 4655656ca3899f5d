#!/usr/bin/env bash
# The GPU machine's checks (issue 35): test/gpu, the host cost of a cached
# call, the GPU benchmark, Nsight Compute's counters (bench/cuda_profile.py)
# and option sweeps (bench/cuda_sweep.py). From the repo root, with the kit
# in .gpu/ (../shared/gpu/README.md; the machine's own pytest-xdist runs
# test/gpu on 12 workers, or put it in .gpu/extra where it lacks one):
#
#   . .gpu/env.sh && bash bench/device_run.sh [MODES] [BENCH ARGS...]
#
# MODES: all (the default), or some of tests, bench, profile and sweeps
# joined by commas (tests,bench: the done-when's checks alone).
#
# On an H100 (2026-11-28): tests about 40 s and the host-cost check 15 s,
# bench (with torch.compile) 60 s, profile 40 s, sweeps 4 minutes at most;
# `all`, every one of them, fits one `run` call (600 s) with time to spare.
#
# Everything is written to a staging folder and packed into
# $OUT/device-run.tgz (default OUT: ./device-out), since a device call brings
# back at most 8 files: device.txt, test-gpu.txt and test-gpu.xml,
# cuda_overhead.json, RESULTS-cuda.md, bench-cuda.json, ncu.csv, ncu.err,
# ncu.md, sweep-<set>.md and .json. RESULTS-cuda.md, test-gpu.txt and
# ncu.md are also copied to $OUT itself, to read at once.
set -u
mode=${1:-all}
shift || true
FINAL=${OUT:-$PWD/device-out}
mkdir -p "$FINAL"
OUT=$(mktemp -d)
pack() {
  tar -czf "$FINAL/device-run.tgz" -C "$OUT" .
  for f in RESULTS-cuda.md test-gpu.txt ncu.md; do
    [ -f "$OUT/$f" ] && cp "$OUT/$f" "$FINAL/"
  done
}
trap pack EXIT
has() { [ "$mode" = all ] || [[ ",$mode," == *",$1,"* ]]; }
PROFILE_DEFAULT=matmul_4096,mlp_8192x4096,softmax_16384x4096,layernorm_256x256x1024,tbmm_16000x26x72x26,kronecker3_256_16x64,mlp1_128x2000x128,lut1_128x50x64_E1e7,conv2d_32x128x128_58,tmm_128x4096x16384,gconv_c32_7,group_norm_32x512x48x48
export PYTHONPATH=$PWD/.gpu/extra${PYTHONPATH:+:$PYTHONPATH}
{
  nvidia-smi -L
  command -v ptxas || ls /usr/local/cuda/bin/ptxas
  python3 -c 'import torch, numpy; print("torch", torch.__version__, "numpy", numpy.__version__)'
  python3 -c 'import cupy; print("cupy", cupy.__version__)'
} >"$OUT/device.txt" 2>&1
cat "$OUT/device.txt"
if has tests; then
  start=$(date +%s)
  # pytest-xdist where it can be imported (the machine's, or one in
  # .gpu/extra), else one process
  workers=()
  python3 -c 'import xdist' 2>/dev/null && workers=(-n "${TEST_WORKERS:-12}")
  # SIGINT at the limit: pytest still prints what failed so far
  timeout -s INT -k 20 "${TEST_TIMEOUT:-300}" python3 -m pytest -q ${workers[@]+"${workers[@]}"} test/gpu \
    -p no:cacheprovider -rfE --junitxml="$OUT/test-gpu.xml" >"$OUT/test-gpu.txt" 2>&1
  echo "test/gpu: rc $? in $(( $(date +%s) - start )) s" | tee -a "$OUT/test-gpu.txt"
  grep -E "passed|failed|error" "$OUT/test-gpu.txt" | tail -3
  grep -E "^(FAILED|ERROR)" "$OUT/test-gpu.txt" | head -40
  timeout 120 python3 -m bench.cuda_overhead --out "$OUT" 2>&1 | tail -12
fi
if has bench; then
  # a budget that keeps the torch.compile column for every kernel (the run
  # itself takes about a minute)
  timeout "${BENCH_TIMEOUT:-420}" python3 -m bench.cuda --output "$OUT/RESULTS-cuda.md" \
    --json "$OUT/bench-cuda.json" --budget-s "${BENCH_BUDGET:-400}" "$@" 2>&1 | tail -60
fi
if has profile; then
  # Nsight Compute's counters for the kernels furthest from their bound
  ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
  timeout "${PROFILE_TIMEOUT:-150}" "$ncu" --profile-from-start off --clock-control none \
    --section SpeedOfLight --section Occupancy --section LaunchStats \
    --section WarpStateStats --section MemoryWorkloadAnalysis --csv --page details \
    python3 -m bench.cuda_profile --kernels "${PROFILE_KERNELS:-$PROFILE_DEFAULT}" \
    >"$OUT/ncu.csv" 2>"$OUT/ncu.err"
  echo "ncu: rc $?"; tail -5 "$OUT/ncu.err"
  python3 -m bench.cuda_profile --summarize "$OUT/ncu.csv" | tee "$OUT/ncu.md"
fi
if has sweeps; then
  # code generation choices on the GEMM family and the convolutions:
  # cp.async or not, and the registers ptxas may use
  timeout 200 python3 -m bench.cuda_sweep \
    --kernels matmul_4096,mlp_8192x4096,tmm_128x4096x16384,conv2d_32x128x128_58,gconv_c16_14,kronecker3_256_16x64 \
    --options codegen --budget-s 170 --out "$OUT" 2>&1 | tail -8
  # tile and block shapes of the GEMMs (the 16x16 block of 8x8 tiles: matmul
  # takes it, MLP's transposed weights do not)
  timeout 120 python3 -m bench.cuda_sweep --kernels matmul_4096,mlp_8192x4096 \
    --options gemm --budget-s 100 --out "$OUT" 2>&1 | tail -8
  # a short reduction staged whole or 32 at a time (tbmm)
  timeout 90 python3 -m bench.cuda_sweep --kernels tbmm_16000x26x72x26 \
    --options reduction_tile --budget-s 60 --out "$OUT" 2>&1 | tail -8
  # memory-bound kernels with their row loops unrolled
  timeout 120 python3 -m bench.cuda_sweep \
    --kernels softmax_16384x4096,layernorm_256x256x1024,rowsum_16384x4096,moments2_1024x36864,group_norm_32x512x48x48,maxpool2x2_16x64x224 \
    --options streaming --budget-s 100 --out "$OUT" 2>&1 | tail -8
  # every reused tile in shared memory against the streamed slices alone
  timeout 90 python3 -m bench.cuda_sweep \
    --kernels gconv_c4_56,gconv_c8_28,gconv_c16_14,gconv_c32_7,mlp3_128,tbmm_16000x26x72x26 \
    --options promote_all --budget-s 60 --out "$OUT" 2>&1 | tail -8
  # a sum shared by blocks with atomics against one block (issue 34)
  timeout 90 python3 -m bench.cuda_sweep --kernels sum_16M --options split \
    --budget-s 60 --out "$OUT" 2>&1 | tail -8
fi
