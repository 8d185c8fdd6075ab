# Session n, call 2: Nsight Compute of the phases of a Swendsen-Wang step at 2D 4096^2, beta_c
# (cluster_bench, the engine's tiles 32 x 128 @512, aligned kernel): where the instructions go.
export PATH=$PWD/.gpu/bin:$PATH
L=/tmp/l2; mkdir -p $L; T0=$SECONDS
prof() { local name=$1 regex=$2 skip=$3
  timeout 150 ncu --kernel-name-base demangled --set full --import-source yes -k regex:$regex --launch-skip $skip --launch-count 1 -o $L/$name \
    cluster_bench --repeats 1 --filter "4096^2 critical tiles 32x128 @512" > $L/run_$name.txt 2>&1
  echo "$name rc=$? $((SECONDS-T0)) s" >> $OUT/steps.txt
  ncu -i $L/$name.ncu-rep --page details > $OUT/details_$name.txt 2>&1
  ncu -i $L/$name.ncu-rep --page source --csv --print-source sass | gzip > $OUT/sass_$name.csv.gz; }
prof bonds ClusterBonds 106
prof move MoveClusters 106
prof tiles label_aligned_tiles 2
prof flatten flatten_tiles 6
prof faces unite_tile_faces 6
cat $OUT/steps.txt
grep -E "Duration|Executed Ipc Active|Avg. Active Threads|Registers Per|Achieved Occ|Executed Instructions  " $OUT/details_*.txt
