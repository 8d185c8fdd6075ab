#!/usr/bin/env bash
# Runs the whole test suite on a GPU machine from a bundle made on a build machine:
#   cmake -S . -B build-gpu -DCMAKE_CUDA_ARCHITECTURES=90 && cmake --build build-gpu -j
#   for e in build-gpu/tests/*_test build-gpu/sim; do device-bundle .gpu "$e" || true; done
#     (one at a time: device-bundle stops at an executable that needs none of the libraries
#      it copies, such as gpu_test; sim last, so its env.sh is written)
#   tests/run_gpu_suite.sh .gpu LOGDIR          (on the GPU machine, from the repo root)
# Every test program runs with SIM_REQUIRE_GPU=1 (a GPU test fails rather than skips), the GPU
# tests again under compute-sanitizer memcheck and racecheck, and the default input runs on the
# GPU and on the CPU, whose outputs must agree bit for bit. A summary table ends the output.
# SANITIZER_TOOLS="memcheck racecheck synccheck" (the default) chooses the compute-sanitizer tools.
set -uo pipefail
bundle=${1:-.gpu}
logs=${2:-gpu-logs}
mkdir -p "$logs"
# shellcheck disable=SC1091
source "$bundle/env.sh"
bundle=$(cd "$bundle" && pwd)  # absolute: the CLI tests run sim from scratch directories
export SIM_REQUIRE_GPU=1 SIM_EXE="$bundle/bin/sim" SIM_SOURCE_DIR="$PWD"
summary=()
record() { summary+=("$(printf '%-44s %s' "$1" "$2")"); }

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$logs/gpu.txt" 2>&1
# Every test program of the bundle (slab_fft_test is an MPI program: one process here, ranks below).
for t in $(cd "$bundle/bin" && ls -- *_test); do
  if [ "$t" = physics_test ]; then
    # CPU only, many small lattices: 8 shards of 2 threads each. One process with every core's
    # thread spends most of its time starting parallel regions (it outlasted 420 s on a
    # 16-core GPU machine; 8 shards of 32 threads each on 32 cores did not finish in 300 s).
    for i in 0 1 2 3 4 5 6 7; do
      GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i OMP_NUM_THREADS=2 timeout "${TEST_TIMEOUT:-600}" \
        "$bundle/bin/$t" --gtest_brief=1 > "$logs/$t.$i.log" 2>&1 &
    done
    failed=0
    for job in $(jobs -p); do wait "$job" || failed=$((failed + 1)); done
    record "$t (8 shards)" "failed shards: $failed $(cat "$logs/$t".*.log | grep -E '^\[  (PASSED|FAILED) ' | tr -s ' ' | tr '\n' ' ')"
    continue
  fi
  timeout "${TEST_TIMEOUT:-600}" "$bundle/bin/$t" --gtest_brief=1 > "$logs/$t.log" 2>&1
  rc=$?
  record "$t" "rc=$rc $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$logs/$t.log" | tr -s ' ' | tr '\n' ' ')"
done

sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
# Smaller chain cases keep the sanitizers' slowdown within minutes.
filter='*packed*:GpuSnapshots.*:GpuBox.*:*Lattices/1*:GpuPhilox.*:GpuReduce.*:GpuHistogram.*:*Ising2d_130x66*:*Ising2d_2x512*:*Ising3d_16x8x24*:*Ising4d_8x4x6x10*:*replicas*:*Potts2d_q3*:*Potts3d*:*Ising1d*:*Xy1d*:*O4_3d*:*Phi4_2d*:*Heisenberg2d*:*GpuStructureFactor.Potts3d*:GpuClusterLabels.Replicas*:GpuClusterLabels.EngineBonds*:GpuClusterLabels.TiledLabellingOfBoxes*'
# SANITIZER_TOOLS picks the tools (default all three; synccheck finds barrier misuse).
for tool in ${SANITIZER_TOOLS:-memcheck racecheck synccheck}; do
  if [ -n "$sanitizer" ]; then
    "$sanitizer" --tool "$tool" --error-exitcode 1 "$bundle/bin/gpu_test" --gtest_filter="$filter" --gtest_brief=1 \
      > "$logs/sanitizer_$tool.log" 2>&1
    rc=$?
    record "compute-sanitizer $tool gpu_test" "rc=$rc $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$logs/sanitizer_$tool.log" | tr '\n' ' ')"
  else
    record "compute-sanitizer $tool" "not found"
  fi
done

# The default input, exactly as a user runs it (auto picks the GPU), then on the CPU.
rm -f lattice.h5 lattice_cpu.h5
sim inputs/lattice.toml > "$logs/sim_gpu.log" 2>&1
record "sim inputs/lattice.toml" "rc=$? $(tail -1 "$logs/sim_gpu.log")"
sim inputs/lattice.toml --backend cpu --output lattice_cpu.h5 > "$logs/sim_cpu.log" 2>&1
record "sim inputs/lattice.toml --backend cpu" "rc=$? $(tail -1 "$logs/sim_cpu.log")"
python3 - lattice.h5 lattice_cpu.h5 > "$logs/compare.log" 2>&1 <<'PY'
import sys, h5py, numpy as np
a, b = h5py.File(sys.argv[1]), h5py.File(sys.argv[2])
assert a.attrs["backend"] == "cuda" and b.attrs["backend"] == "cpu", (a.attrs["backend"], b.attrs["backend"])
for name in ["observables/energy", "observables/magnetization", "observables/sweep",
             "snapshots/configuration", "snapshots/sweep"]:
    x, y = a[name][...], b[name][...]
    assert x.shape == y.shape and np.array_equal(x, y), name
print("identical:", a["observables/energy"].shape[0], "measurements,",
      a["snapshots/configuration"].shape[0], "snapshots; <e> =", a["observables/energy"][:].mean())
PY
record "GPU vs CPU output files" "rc=$? $(tail -1 "$logs/compare.log")"
cp lattice.h5 "$logs/lattice_gpu.h5" 2>/dev/null

# Every example input of a single run (a sweep input is left out), with its update rate.
for input in inputs/*.toml; do
  name=$(basename "$input" .toml)
  [ "$name" = lattice ] && continue
  grep -qE '^\s*(beta|h|kappa|lambda)\s*=\s*[\[{]|^\s*dims\s*=\s*\[\s*\[' "$input" && continue
  sim "$input" --output "/tmp/example_$name.h5" --force > "$logs/example_$name.log" 2>&1
  record "sim $input" "rc=$? $(grep -E 'sim: wrote|Metropolis step|Langevin step' "$logs/example_$name.log" | sed 's/^sim: //' | tr '\n' ' ')"
done

# Decomposed chains over MPI ranks, one GPU each (machines with 2 or more GPUs; NVLink
# multicast stays off), checked against the CPU's single-process chains, and the decomposed
# kernels and halo copies under compute-sanitizer memcheck (API errors not reported: NCCL's
# start-up probes kernels built for other GPUs and gets cudaErrorNoKernelImageForDevice, by
# design; Lattica checks every CUDA call itself).
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
if command -v mpirun > /dev/null && [ "$gpus" -ge 2 ]; then
  export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  python3 tests/mpi/test_ranks.py "$SIM_EXE" mpirun cuda /tmp/mpi_gpu > "$logs/mpi_ranks_gpu.log" 2>&1
  record "tests/mpi/test_ranks.py cuda ($gpus GPUs)" "rc=$? $(tail -1 "$logs/mpi_ranks_gpu.log")"
  if [ -x "$bundle/bin/slab_fft_gpu_test" ]; then
    mpirun -n 2 "$bundle/bin/slab_fft_gpu_test" > "$logs/slab_fft_gpu_2.log" 2>&1
    record "slab_fft_gpu_test, 2 GPU ranks" "rc=$? $(tail -1 "$logs/slab_fft_gpu_2.log")"
  fi
  if [ -n "$sanitizer" ]; then
    mpirun -n 2 "$sanitizer" --tool memcheck --report-api-errors no --error-exitcode 1 "$SIM_EXE" /tmp/mpi_gpu/ising3d_packed.toml \
      -o /tmp/mpi_gpu/memcheck_packed.h5 --force --set run.backend=\"cuda\" --set parallel.grid=[2,1,1] > "$logs/mpi_memcheck.log" 2>&1
    record "memcheck, 2 ranks, packed Ising" "rc=$? $(grep -c 'ERROR SUMMARY: 0 errors' "$logs/mpi_memcheck.log") ranks with 0 errors"
    mpirun -n 2 "$sanitizer" --tool memcheck --report-api-errors no --error-exitcode 1 "$SIM_EXE" /tmp/mpi_gpu/potts3d_heatbath.toml \
      -o /tmp/mpi_gpu/memcheck_potts.h5 --force --set run.backend=\"cuda\" > "$logs/mpi_memcheck_potts.log" 2>&1
    record "memcheck, 2 ranks, Potts" "rc=$? $(grep -c 'ERROR SUMMARY: 0 errors' "$logs/mpi_memcheck_potts.log") ranks with 0 errors"
  fi
else
  record "tests/mpi/test_ranks.py cuda" "skipped: $gpus GPU(s) or no mpirun"
fi

# sim bench for every model (JSON next to the logs, for tests/bench/results/); SUITE_BENCH=0
# leaves it out.
[ "${SUITE_BENCH:-1}" = 0 ] || for model in ising potts on phi4; do
  sim bench --model "$model" --json "$logs/bench_$model.json" > "$logs/bench_$model.txt" 2>&1
  record "sim bench --model $model" "rc=$? $(head -1 "$logs/bench_$model.txt")"
done

printf '\n==== GPU suite summary (%s) ====\n' "$(cat "$logs/gpu.txt")"
printf '%s\n' "${summary[@]}" | tee "$logs/summary.txt"
