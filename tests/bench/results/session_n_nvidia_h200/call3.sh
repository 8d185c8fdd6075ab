# Session n, call 3: the whole-lattice (32-bit) bonds and moves and the flattening of the
# representatives only, against call 1's binary (cluster_bench_call1: aligned tiles alone), in the
# same job; every case checked against the global union-find and the serial labels.
export PATH=$PWD/.gpu/bin:$PATH
for round in 1 2; do
  for b in cluster_bench_call1 cluster_bench; do
    $b --repeats 20 --filter "critical tiles" > $OUT/${b}_critical_$round.txt 2>&1; echo "$b critical $round rc=$?" >> $OUT/steps.txt
  done
done
cluster_bench --repeats 5 --json $OUT/cluster_bench_all.json > $OUT/cluster_bench_all.txt 2>&1; echo "all rc=$?" >> $OUT/steps.txt
cat $OUT/steps.txt; grep -h "32x128 @512\|8x16x32 @512" $OUT/cluster_bench*_critical_2.txt
