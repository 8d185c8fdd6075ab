#!/usr/bin/env bash
# Session f, device call 2 (issue 23): phi^4 double, Metropolis + MALA + S(k), larger than one
# H200 holds: one GPU refuses 1184^3 and runs 1152^3; two run 1376^3, checkpoint, resume.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONUNBUFFERED=1 SIM_REQUIRE_GPU=1
L=/tmp/logs2; W=/work5; mkdir -p $L /tmp/b $W; T0=$SECONDS; SRC=$PWD
tar xJf .gpu/gpu.tar.xz -C /tmp/b; source /tmp/b/gpu/env.sh; B=/tmp/b/gpu/bin
{ nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv,noheader; nproc; free -g | head -2; df -h $W; } > $L/machine.txt 2>&1
save() { tar czf $OUT/logs2.tgz -C /tmp logs2; cp $L/steps.txt $OUT/ 2>/dev/null; }
step() { local name=$1 t=$2; shift 2; local s=$SECONDS; echo "$name starts $(date '+%Y/%m/%d %H:%M:%S')" >> $L/times.txt; timeout $t "$@" > $L/$name.log 2>&1; echo "$name rc=$? $((SECONDS-s))s $(grep -E 'device memory|needs .* MiB|peak host|wrote|snapshots written|error|checkpoint' $L/$name.log | head -6 | tr '\n' ' ')" >> $L/steps.txt; save; }
# GPU memory of both cards every second (the peak of each run).
nvidia-smi --query-gpu=timestamp,index,memory.used --format=csv,noheader,nounits -l 1 > $L/gpu_memory.csv 2>&1 &
SMI=$!
cd $W
BIG="$SRC/.gpu/big.toml --set measure.structure_factor_tables=\"radial\""
step one_gpu_1184_refused 60 $B/sim $BIG -o one.h5 --force --set lattice.dims=[1184,1184,1184]
step two_gpu_1376 330 mpirun -n 2 $B/sim $BIG -o big.h5 --force --set lattice.dims=[1376,1376,1376]
ls -la $W $W/* >> $L/two_gpu_1376.log 2>&1; df -h $W >> $L/two_gpu_1376.log
step two_gpu_1376_resume 200 mpirun -n 2 $B/sim $BIG -o big.h5 --resume --set lattice.dims=[1376,1376,1376] --set run.measurements=3
python3 - > $L/big_check.log 2>&1 <<'PY'
import h5py
f = h5py.File("big.h5", "r")
sf = f["correlators/structure_factor"]
print("snapshots", f["snapshots/configuration"].shape, "sweeps", f["snapshots/sweep"][...])
print("energy", f["observables/energy"][...].ravel(), "sweep", f["observables/sweep"][...].ravel())
print("S(k) samples", sf.attrs["samples"], "tables", sf.attrs["tables"], "xi2", sf.attrs["xi2"], "series s0", sf["series/s0"][...].ravel())
print({k: v for k, v in f.attrs.items() if "accept" in k or k in ("backend", "ranks")})
PY
cat $L/big_check.log >> $L/steps.txt; save
rm -rf $W/big.h5*
step one_gpu_1152 200 $B/sim $BIG -o one.h5 --force --set lattice.dims=[1152,1152,1152] --set run.measurements=1 --set run.checkpoint_every=0
rm -rf $W/one.h5*
kill $SMI
echo "end $(date '+%Y/%m/%d %H:%M:%S')" >> $L/times.txt
echo "total $((SECONDS-T0)) s" >> $L/steps.txt; save
