#!/usr/bin/env bash
# Session h, device call 6: q = 10 at L = 48 and 64 with 1024 walkers (each about 20 million
# site updates per second) and 600000 production sweeps, side by side on the GPU, so that every
# walker can tunnel between the phases; the same binaries as call 5.
set -uo pipefail
export PYTHONUNBUFFERED=1
L=/tmp/logs6; mkdir -p $L /tmp/b $L/fo; T0=$SECONDS
rm -rf /tmp/b/gpu; tar xJf .gpu/gpu.tar.xz -C /tmp/b; source /tmp/b/gpu/env.sh
B=/tmp/b/gpu/bin
fo() { python3 tests/bench/potts_first_order.py $L/fo --sim $B/sim --walkers 1024 --measurements 500 --measure-every 1200 --thermalization 20000 --max-sweeps 400000 "$@"; }
( fo --sizes 64 --budget 330 > $L/fo_64.txt 2>&1 ) &
( fo --sizes 48 --budget 330 > $L/fo_48.txt 2>&1 ) &
wait
echo "total $((SECONDS-T0)) s" > $L/steps.txt
rm -f $L/fo/*.h5 $L/fo/*.checkpoint; tar czf $OUT/logs6.tgz -C /tmp logs6
