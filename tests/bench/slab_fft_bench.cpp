// Benchmark program (not a test): the slab-decomposed FFT's weak scaling on CPU ranks. Each
// rank holds a slab of --rows rows of axis 0 (default 64) of a lattice of extents
// [ranks * rows, L1, L2] (default L1 = L2 = 128), so the work per rank stays the same; prints,
// from rank 0, the seconds of one forward transform (the slowest rank's, median of --repeats)
// and the bytes each rank sends in its two all-to-alls.
//   mpirun -n 4 build/tests/slab_fft_bench [--rows N] [--extent L] [--repeats N]

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "kernels/backend/cpu_exec.hpp"
#include "sim/communicator.hpp"
#include "sim/parallel/slab_fft.hpp"

namespace {

int64_t option(int argc, char** argv, const char* name, int64_t fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], name) == 0) return std::atoll(argv[i + 1]);
  }
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace lattica;
  std::shared_ptr<Communicator> comm = start_processes(argc, argv);
  const int64_t rows = option(argc, argv, "--rows", 64),
                extent = option(argc, argv, "--extent", 128);
  const int repeats = static_cast<int>(option(argc, argv, "--repeats", 5));
  if (rows < 1 || extent < 1 || repeats < 1) {
    std::fprintf(stderr, "slab_fft_bench: --rows, --extent and --repeats must be positive\n");
    return 2;
  }
  const int ranks = comm->size();
  const CpuExec host(0);
  SlabFft<CpuExec> fft(host, *comm, {rows * ranks, extent, extent}, 1);
  std::vector<double> field(static_cast<size_t>(fft.local_real_size()));
  for (size_t i = 0; i < field.size(); ++i) field[i] = static_cast<double>(i % 97) - 48.0;
  std::vector<Complex> spectrum(static_cast<size_t>(fft.local_complex_size()));
  fft.forward(field.data(), spectrum.data());  // warm-up
  std::vector<double> seconds;
  for (int r = 0; r < repeats; ++r) {
    comm->max(0);  // start together
    const auto start = std::chrono::steady_clock::now();
    fft.forward(field.data(), spectrum.data());
    const double mine =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    seconds.push_back(static_cast<double>(comm->max(static_cast<int64_t>(mine * 1e9))) * 1e-9);
  }
  std::sort(seconds.begin(), seconds.end());
  // Each all-to-all keeps 1/ranks of the rank's spectrum slab and sends the rest.
  const double sent =
      2.0 * static_cast<double>(fft.local_complex_size()) * sizeof(Complex) * (ranks - 1) / ranks;
  if (comm->rank() == 0) {
    std::printf(
        "slab FFT [%lld, %lld, %lld] on %d rank(s): %.4f s per forward transform, "
        "%.1f MB sent per rank\n",
        static_cast<long long>(rows * ranks), static_cast<long long>(extent),
        static_cast<long long>(extent), ranks, seconds[seconds.size() / 2], sent / 1e6);
  }
  finish_processes();
  return 0;
}
