#pragma once
// `sim bench`: the device's copy bandwidth, then every update kernel of a model timed on the
// chosen backend (CUDA events, median of repeats after a warm-up), with the CPU backend's rate
// for comparison; printed as a table and optionally written as JSON.

#include <cstdint>
#include <string>
#include <vector>

namespace lattica {

struct BenchOptions {
  std::string model = "ising";  ///< ising, potts, on, phi4
  int q = 3;                    ///< Potts states
  int n = 3;                    ///< O(n) components
  std::vector<int64_t> dims;    ///< empty: a size that fills a large GPU
  std::vector<int64_t> cpu_dims;  ///< empty: a size the CPU times in seconds
  int repeats = 7;
  std::string kernel;     ///< empty: every kernel of the model; else one name (kernels_of)
  std::string precision;  ///< empty: both; "float" or "double" (continuous models)
  std::string json_path;  ///< empty: no JSON
  int device = 0;
};

/// Runs the benchmark; returns the process exit code.
int run_bench(const BenchOptions& options);

}  // namespace lattica
