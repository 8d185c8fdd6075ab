# Session n, call 9: two experiments for the next step, timed beside the final code's phases on
# 2D aligned tiles (cluster_bench's "experiments" line): the move decided at the representatives
# (checked to flip the same spins) and the 2D Ising bonds with a Philox block per two sites.
export PATH=$PWD/.gpu/bin:$PATH
cluster_bench --repeats 20 --filter "2D" --json $OUT/cluster_bench_2d.json > $OUT/cluster_bench_2d.txt 2>&1; echo "2d rc=$?" >> $OUT/steps.txt
cat $OUT/steps.txt; grep -h "FAIL\|cluster_bench:" $OUT/*.txt | head; grep -h -A1 "32x128 @512 *0\|32x128 @512   " $OUT/cluster_bench_2d.txt
