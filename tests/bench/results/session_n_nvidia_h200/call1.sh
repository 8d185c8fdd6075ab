# Session n, call 1: the aligned tile labelling (label_aligned_tiles_kernel) against the generic
# kernels on the same bonds (cluster_bench's "generic" variants), every case checked against the
# global union-find and, up to 2^21 sites, the serial labels.
export PATH=$PWD/.gpu/bin:$PATH
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv > $OUT/machine.txt
cluster_bench --repeats 20 --filter critical --json $OUT/cluster_bench_critical.json > $OUT/cluster_bench_critical.txt 2>&1; echo "critical rc=$?" >> $OUT/steps.txt
cluster_bench --repeats 5 --json $OUT/cluster_bench_all.json > $OUT/cluster_bench_all.txt 2>&1; echo "all rc=$?" >> $OUT/steps.txt
cat $OUT/steps.txt; cat $OUT/cluster_bench_critical.txt
