# Session n, call 4: Nsight Compute of call 3's code (32-bit bonds and moves, aligned tiles that
# mark representatives), 2D 4096^2 at beta_c: the move, the bonds and the tiles' labelling.
export PATH=$PWD/.gpu/bin:$PATH
L=/tmp/l4; mkdir -p $L; T0=$SECONDS
prof() { local name=$1 regex=$2 skip=$3
  timeout 150 ncu --kernel-name-base demangled --set full --import-source yes -k regex:$regex --launch-skip $skip --launch-count 1 -o $L/$name \
    cluster_bench --repeats 1 --filter "4096^2 critical tiles 32x128 @512" > $L/run_$name.txt 2>&1
  echo "$name rc=$? $((SECONDS-T0)) s" >> $L/steps.txt
  ncu -i $L/$name.ncu-rep --page details > $L/details_$name.txt 2>&1
  ncu -i $L/$name.ncu-rep --page source --csv --print-source sass | gzip > $L/sass_$name.csv.gz; }
prof bonds ClusterBonds 106
prof move MoveClusters 106
prof tiles label_aligned_tiles 2
prof reps PointRepresentatives 2
cd $L && tar cf $OUT/call4.tar steps.txt details_* sass_*
cat $L/steps.txt; grep -E "Duration|Executed Ipc Active|Avg. Active Threads|Registers Per|Achieved Occ|Executed Instructions  |L1/TEX Hit|L2 Hit|Memory Throughput" $L/details_*.txt
