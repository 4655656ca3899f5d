#!/usr/bin/env bash
# The GPU machine's checks (issue 35): test/gpu, the host cost of a cached
# call, the GPU benchmark, option sweeps (bench/cuda_sweep.py) and Nsight
# Compute's counters (bench/cuda_profile.py). From the repo root, with the kit
# in .gpu/ (../shared/gpu/README.md; the machine's own pytest-xdist runs
# test/gpu on 12 workers, or put it in .gpu/extra where it lacks one):
#
#   . .gpu/env.sh && bash bench/device_run.sh [tests|bench|sweeps|profile|all] [BENCH ARGS...]
#
# `all` takes longer than one `run` call may (600 s): run `tests` then
# `bench` in one call (about 3 + 4 minutes on an H100), and `profile` (about
# 2) or `sweeps` (about 6) in a second if device time is left.
#
# Everything lands in $OUT (default ./device-out): device.txt, test-gpu.txt
# and test-gpu.xml, cuda_overhead.json, RESULTS-cuda.md, bench-cuda.json and
# sweep-<set>.md / .json, ncu.csv and ncu.md.
set -u
mode=${1:-all}
shift || true
OUT=${OUT:-$PWD/device-out}
PROFILE_DEFAULT=matmul_4096,softmax_16384x4096,layernorm_256x256x1024,tbmm_16000x26x72x26,kronecker3_256_16x64,mlp1_128x2000x128,lut1_128x50x64_E1e7,conv2d_32x128x128_58,tmm_128x4096x16384,gconv_c32_7,group_norm_32x512x48x48
mkdir -p "$OUT"
export PYTHONPATH=$PWD/.gpu/extra${PYTHONPATH:+:$PYTHONPATH}
{
  nvidia-smi -L
  command -v ptxas || ls /usr/local/cuda/bin/ptxas
  python3 -c 'import torch, numpy; print("torch", torch.__version__, "numpy", numpy.__version__)'
  python3 -c 'import cupy; print("cupy", cupy.__version__)'
} >"$OUT/device.txt" 2>&1
cat "$OUT/device.txt"
if [ "$mode" = tests ] || [ "$mode" = all ]; then
  start=$(date +%s)
  # pytest-xdist where it can be imported (copy it into .gpu/extra: the kit
  # lacks it), else one process
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
if [ "$mode" = bench ] || [ "$mode" = all ]; then
  timeout "${BENCH_TIMEOUT:-420}" python3 -m bench.cuda --output "$OUT/RESULTS-cuda.md" \
    --json "$OUT/bench-cuda.json" "$@" 2>&1 | tail -60
fi
if [ "$mode" = profile ]; then
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
if [ "$mode" = sweeps ] || [ "$mode" = all ]; then
  # code generation choices on the GEMM family and the convolutions:
  # cp.async or not, and the registers ptxas may use
  timeout 200 python3 -m bench.cuda_sweep \
    --kernels matmul_4096,mlp_8192x4096,tmm_128x4096x16384,conv2d_32x128x128_58,gconv_c16_14,kronecker3_256_16x64 \
    --options codegen --budget-s 170 --out "$OUT" 2>&1 | tail -8
  # a short reduction staged whole or 32 at a time (tbmm)
  timeout 90 python3 -m bench.cuda_sweep --kernels tbmm_16000x26x72x26 \
    --options reduction_tile --budget-s 60 --out "$OUT" 2>&1 | tail -8
  # a sum shared by blocks with atomics against one block (issue 34)
  timeout 90 python3 -m bench.cuda_sweep --kernels sum_16M --options split \
    --budget-s 60 --out "$OUT" 2>&1 | tail -8
fi
