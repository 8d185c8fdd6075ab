#pragma once
// `sim bench`: the device's copy bandwidth, then every update kernel of a model timed on the
// chosen backend (CUDA events, median of repeats after a warm-up), with the CPU backend's rate
// for comparison; printed as a table and optionally written as JSON.

#include <cstdint>
#include <string>
#include <vector>

#include "sim/communicator.hpp"

namespace lattica {

struct BenchOptions {
  std::string model = "ising";    ///< ising, potts, on, phi4
  int q = 3;                      ///< Potts states
  int n = 3;                      ///< O(n) components
  std::vector<int64_t> dims;      ///< empty: a size that fills a large GPU
  std::vector<int64_t> cpu_dims;  ///< empty: a size the CPU times in seconds
  int repeats = 7;
  std::string kernel;     ///< empty: every kernel of the model; else one name (kernels_of)
  std::string precision;  ///< empty: both; "float" or "double" (continuous models)
  std::string json_path;  ///< empty: no JSON
  int device = 0;
  /// "weak" or "strong": time one kernel over 1, 2, 4, ... of the ranks of an MPI run
  /// (domain decomposition) instead; empty: the single-GPU benchmark.
  std::string scaling;
  std::string backend = "cuda";  ///< of the scaling benchmark: cuda or cpu
  int64_t walkers = 16384;       ///< --kernel multicanonical: walkers on the GPU
};

/// The --kernel of the scaling benchmark that times a structure-factor measurement (the
/// distributed FFT of a decomposed run) instead of an update sweep.
inline constexpr char kStructureFactorStep[] = "structure factor";
/// The --kernel of the scaling benchmark that times writing one snapshot frame to an HDF5 file
/// in the working directory, kSnapshotFile (removed afterwards), as a run writes it.
inline constexpr char kSnapshotStep[] = "snapshot";
inline constexpr char kSnapshotFile[] = "sim_bench_snapshots.h5";

/// Runs the benchmark on the ranks of `ranks` (the scaling benchmark uses them all, the
/// single-GPU one rank 0 alone); returns the process exit code.
int run_bench(const BenchOptions& options, Communicator& ranks);

/// `--kernel multicanonical`: multicanonical walkers of --model ising or potts on --dims
/// (default 16 x 16), --walkers of them on the GPU; returns the process exit code.
int run_multicanonical_bench(const BenchOptions& options);

}  // namespace lattica
