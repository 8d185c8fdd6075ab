#!/bin/bash
# Runs every point of a parameter sweep as one task of a Slurm job array, one GPU per task.
# Submit from the directory that should receive the output files:
#   sbatch --array=0-19 inputs/slurm_sweep.sh inputs/fss2d.toml
# (the array range is 0 .. number of points - 1; `sim INPUT --task-id 999` prints the count).
#SBATCH --job-name=lattica-sweep
#SBATCH --gres=gpu:1
#SBATCH --cpus-per-task=4
#SBATCH --time=01:00:00
#SBATCH --output=lattica-%A_%a.log
set -euo pipefail
input=${1:?usage: sbatch --array=0-N inputs/slurm_sweep.sh INPUT.toml [sim options]}
shift
# Each task writes its own <stem>.<task>.h5 with the seed the full sweep would use, and the
# same index file (written atomically, identical from every task).
exec "${SIM:-sim}" "$input" --task-id "$SLURM_ARRAY_TASK_ID" --quiet "$@"
