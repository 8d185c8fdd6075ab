# Session n, call 10: call 9's experiments and the move with a thread per two sites of a row,
# 2D 4096^2 and 8192^2 (all starts), checked to flip the same spins as MoveClusters.
export PATH=$PWD/.gpu/bin:$PATH
for L in 4096 8192; do
  cluster_bench --repeats 20 --filter "2D ${L}^2" --json $OUT/cluster_bench_$L.json > $OUT/cluster_bench_$L.txt 2>&1; echo "$L rc=$?" >> $OUT/steps.txt
done
cat $OUT/steps.txt; grep -h "FAIL\|cluster_bench:" $OUT/*.txt | head; grep -h -A1 "32x128 @512   " $OUT/cluster_bench_*.txt
