#!/usr/bin/env bash
# Session j, device call 5 (issue 20): phi^4 float at 256^3 with runs of 4 sites per thread (the
# merged code, 52 registers) against runs of 2 (update_run_length 2: 39 registers, more
# instructions per update), interleaved, and ncu's issue slots and occupancy of the runs of 2.
set -uo pipefail
L=/tmp/logs5; mkdir -p $L/json /tmp/b; T0=$SECONDS
rm -rf /tmp/b/gpu; tar xJf .gpu2/gpu.tar.xz -C /tmp/b; source /tmp/b/gpu/env.sh
B=/tmp/b/gpu/bin
cd /tmp && mkdir -p w && cd w
for round in 1 2; do
  for exe in sim sim_run2; do
    for k in metropolis overrelaxation; do
      timeout 60 $B/$exe bench --model phi4 --precision float --dims 256 256 256 --kernel $k --repeats 5 --json $L/json/${exe}_${k}_$round.json >> $L/bench.txt 2>&1
      echo "$exe $k $round: $(grep -o '"site_updates_per_ns": [0-9.]*' $L/json/${exe}_${k}_$round.json)" >> $L/steps.txt
    done
  done
done
timeout 60 ncu --clock-control none --kernel-name-base demangled -k regex:UpdateColour --launch-skip 2 --launch-count 1 \
  --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats \
  --metrics smsp__inst_executed.sum,smsp__thread_inst_executed.sum \
  $B/sim_run2 bench --model phi4 --precision float --dims 128 128 128 --kernel metropolis --repeats 1 > $L/ncu_phi4f_metropolis_run2.txt 2>&1
echo "ncu rc=$? $((SECONDS-T0)) s" >> $L/steps.txt
cp -r $L/* $OUT/
