#!/usr/bin/env bash
# Device call 4: the slimmed distributed FFT on 2 GPU ranks, device memory per site, and a
# phi^4 lattice 1.5x larger than one GPU holds, run, checkpointed and resumed on 2 GPUs.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1 SIM_REQUIRE_GPU=1
L=/tmp/logs4; mkdir -p $L /tmp/b /work4; T0=$SECONDS
tar xJf .gpu/gpu.tar.xz -C /tmp/b
source /tmp/b/gpu/env.sh
B=/tmp/b/gpu/bin; export SIM_EXE=$B/sim SIM_SOURCE_DIR=$PWD
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; free -g; df -h /work4; } > $L/machine.txt 2>&1
save() { tar czf $OUT/logs4.tgz -C /tmp logs4; cp $L/steps.txt $OUT/ 2>/dev/null; }
step() { local name=$1 t=$2; shift 2; local s=$SECONDS; timeout $t "$@" > $L/$name.log 2>&1; echo "$name rc=$? $((SECONDS-s))s $(grep -E '^\[  (PASSED|FAILED) |^OK|^FAILED|^Ran |slab FFT on|ERROR SUMMARY|test_ranks|device memory|sim: wrote|needs .* MiB|out of memory|error' $L/$name.log | head -4 | tr '\n' ' ')" | tee -a $L/steps.txt; save; }
step slab_fft_gpu_1 40 $B/slab_fft_gpu_test
step slab_fft_gpu_2 40 mpirun -n 2 $B/slab_fft_gpu_test
step mpi_ranks_gpu 150 python3 tests/mpi/test_ranks.py $B/sim mpirun cuda /tmp/mpi_gpu phi4_3d_mala phi4_3d_langevin phi4_3d_spectral phi4_2d_spectral ising3d_spectral resume_spectral_mala
cd /work4
# Device memory per site: one GPU at 16^3 (the fixed part) and 384^3, two at 768x384x384.
step mem_1gpu_16 30 sim $OLDPWD/.gpu/big.toml -o m16.h5 --force --set lattice.dims=[16,16,16] --set run.checkpoint_every=0
step mem_1gpu_384 60 sim $OLDPWD/.gpu/big.toml -o m384.h5 --force --set lattice.dims=[384,384,384] --set run.checkpoint_every=0
step mem_2gpu_384 60 mpirun -n 2 sim $OLDPWD/.gpu/big.toml -o m384x2.h5 --force --set lattice.dims=[768,384,384] --set run.checkpoint_every=0
rm -f m16.h5 m384.h5 m384x2.h5
python3 - $L > $L/plan.txt 2>&1 <<'PY'
import re, sys, math
L = sys.argv[1]
def mib(name):
    t = open(f"{L}/{name}.log").read()
    m = re.search(r"device memory in use at the end(?:, per rank)? ([0-9.]+) MiB", t)
    return float(m.group(1))
total = float(open(f"{L}/machine.txt").read().split(",")[2].split()[0])  # MiB of one GPU
fixed, one, two = mib("mem_1gpu_16"), mib("mem_1gpu_384"), mib("mem_2gpu_384")
v = 384 ** 3
b1 = (one - fixed) * 2**20 / v            # bytes per site, one process
b2 = (two - fixed) * 2**20 / v            # bytes per site of a rank's share, 2 ranks
n1 = (total - fixed) * 2**20 / b1         # the most sites one GPU holds
side = 32 * math.ceil((1.5 * n1) ** (1 / 3) / 32)
per_rank = (fixed + b2 * side**3 / 2 / 2**20)
print(f"gpu {total:.0f} MiB, fixed {fixed:.0f} MiB; one process {b1:.1f} B/site, 2 ranks {b2:.1f} B/site")
print(f"one GPU holds at most {n1/1e9:.3f} G sites ({n1**(1/3):.0f}^3); target {side}^3 = {side**3/1e9:.3f} G sites = {side**3/n1:.2f} x")
print(f"predicted per rank {per_rank:.0f} MiB of {total:.0f}")
print(f"SIDE={side}")
PY
cat $L/plan.txt | tee -a $L/steps.txt; save
S=$(grep -o 'SIDE=[0-9]*' $L/plan.txt | cut -d= -f2)
if [ -n "$S" ]; then
  step big_1gpu 60 sim $OLDPWD/.gpu/big.toml -o big1.h5 --force --set lattice.dims=[$S,$S,$S]
  rm -f big1.h5*
  step big_2gpu 150 mpirun -n 2 sim $OLDPWD/.gpu/big.toml -o big.h5 --force --set lattice.dims=[$S,$S,$S]
  ls -la /work4 >> $L/big_2gpu.log; df -h /work4 >> $L/big_2gpu.log
  step big_2gpu_resume 120 mpirun -n 2 sim $OLDPWD/.gpu/big.toml -o big.h5 --resume --set lattice.dims=[$S,$S,$S] --set run.measurements=3
  python3 -c "import h5py; f=h5py.File('big.h5'); print({k: f['structure_factor'][k].shape for k in f['structure_factor']} if 'structure_factor' in f else list(f)); print('energy', f['observables/energy'][...].ravel()); print('mala', dict(f.attrs).get('mala_acceptance'))" >> $L/big_2gpu_resume.log 2>&1
  save
fi
echo "total $((SECONDS-T0)) s" >> $L/steps.txt; save
