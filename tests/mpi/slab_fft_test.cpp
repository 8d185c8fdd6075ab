// The slab-decomposed FFT (sim/parallel/slab_fft.hpp) against the single-process FFT
// (kernels/spectral/fft_cpu.hpp) on random data: 2-D, 3-D and 4-D lattices, even, odd and
// non-divisible extents, batches, an axis 0 shorter than the rank count. Every rank draws the
// same global field, transforms the whole of it alone and compares its own rows of the
// distributed spectrum, then of the distributed inverse (V times the field). BoxSlabs
// (sim/parallel/box_slabs.hpp) moves each rank's box of a decomposition to its slab and back,
// exactly, and the structure factor's tables made rank by rank are one process's. Run it alone or
// under mpirun with any rank count; exits 1 when any rank saw a difference beyond rounding.
// slab_fft_gpu_test.cu compiles this file for GPU ranks (device memory, NCCL): it exits 77
// without a GPU for every rank, and fails instead with SIM_REQUIRE_GPU=1.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/spectral/fft_cpu.hpp"
#include "sim/communicator.hpp"
#ifdef LATTICA_SLAB_FFT_TEST_CUDA
#include <cstdlib>
#include <cstring>

#include "kernels/backend/cuda_exec.cuh"
#include "sim/engine/engine.hpp"
#else
#include "kernels/backend/cpu_exec.hpp"
#endif
#include "sim/correlators.hpp"
#include "sim/decomposition.hpp"
#include "sim/parallel/box_slabs.hpp"
#include "sim/parallel/slab_fft.hpp"

namespace lattica {
namespace {

#ifdef LATTICA_SLAB_FFT_TEST_CUDA
using Exec = CudaExec;
#else
using Exec = CpuExec;
#endif

/// `values` in the backend's memory.
template <class T>
typename Exec::template Buffer<T> on_backend(const Exec& exec, const std::vector<T>& values) {
  auto buffer = exec.template allocate<T>(static_cast<int64_t>(values.size()));
  if (!values.empty()) exec.copy_to_device(values.data(), buffer);
  return buffer;
}

/// A backend buffer's values in host memory.
template <class T>
std::vector<T> on_host(const Exec& exec, const typename Exec::template Buffer<T>& buffer) {
  std::vector<T> values(static_cast<size_t>(buffer.size()));
  if (!values.empty()) exec.copy_to_host(buffer, values.data());
  return values;
}

struct Case {
  std::vector<int64_t> dims;
  int batch;
};

std::string describe(const Case& c) {
  std::string text = "dims [";
  for (size_t a = 0; a < c.dims.size(); ++a) text += (a ? "," : "") + std::to_string(c.dims[a]);
  return text + "] batch " + std::to_string(c.batch);
}

/// The largest |a - b| over the elements, relative to the largest |b|.
template <class T, class Norm>
double relative_error(const T* a, const T* b, int64_t n, Norm norm) {
  double error = 0, scale = 0;
  for (int64_t i = 0; i < n; ++i) {
    error = std::max(error, norm(a[i], b[i]));
    scale = std::max(scale, norm(b[i], T{}));
  }
  return scale > 0 ? error / scale : error;
}

double complex_distance(const Complex& a, const Complex& b) {
  return std::hypot(a.re - b.re, a.im - b.im);
}
double real_distance(double a, double b) { return std::abs(a - b); }

/// Runs one case; returns the number of failed checks on this rank.
int check(const Exec& exec, Communicator& comm, const Case& c) {
  const CpuFft whole(c.dims, c.batch);
  const int64_t volume = whole.real_size(), modes = whole.complex_size();
  std::mt19937_64 random(20261124 + static_cast<uint64_t>(volume * 31 + c.batch));
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<double> field(static_cast<size_t>(volume * c.batch));
  for (double& x : field) x = uniform(random);
  std::vector<Complex> spectrum(static_cast<size_t>(modes * c.batch));
  whole.forward(field.data(), spectrum.data());

  SlabFft<Exec> fft(exec, comm, c.dims, c.batch);
  const int64_t row_real = volume / c.dims[0], row_modes = modes / c.dims[0];
  // This rank's rows of the field and of the spectrum, [b][row][...].
  std::vector<double> my_field, expected_field;
  std::vector<Complex> expected_spectrum;
  for (int b = 0; b < c.batch; ++b) {
    const auto* f = field.data() + b * volume + fft.first_row() * row_real;
    my_field.insert(my_field.end(), f, f + fft.rows() * row_real);
    const auto* s = spectrum.data() + b * modes + fft.first_row() * row_modes;
    expected_spectrum.insert(expected_spectrum.end(), s, s + fft.rows() * row_modes);
  }
  if (static_cast<int64_t>(my_field.size()) != fft.local_real_size() ||
      static_cast<int64_t>(expected_spectrum.size()) != fft.local_complex_size()) {
    std::fprintf(stderr, "rank %d, %s: local sizes %lld, %lld, expected %zu, %zu\n", comm.rank(),
                 describe(c).c_str(), static_cast<long long>(fft.local_real_size()),
                 static_cast<long long>(fft.local_complex_size()), my_field.size(),
                 expected_spectrum.size());
    return 1;
  }
  const auto field_held = on_backend(exec, my_field);
  auto spectrum_held = exec.template allocate<Complex>(fft.local_complex_size());
  auto back_held = exec.template allocate<double>(fft.local_real_size());
  fft.forward(field_held.data(), spectrum_held.data());
  fft.inverse(spectrum_held.data(), back_held.data());
  const std::vector<Complex> my_spectrum = on_host(exec, spectrum_held);
  const std::vector<double> back = on_host(exec, back_held);
  // The overwriting inverse (no buffer of its own) gives the same field, bit for bit.
  fft.inverse_overwriting(spectrum_held.data(), back_held.data());
  const bool same_inverse = on_host(exec, back_held) == back;
  for (double& x : my_field) x *= static_cast<double>(volume);  // unnormalised round trip

  int failures = 0;
  if (!same_inverse) {
    std::fprintf(stderr, "rank %d of %d, %s: inverse_overwriting differs from inverse\n",
                 comm.rank(), comm.size(), describe(c).c_str());
    ++failures;
  }
  const double tolerance = 1e-13 * std::log2(static_cast<double>(volume) + 1);
  const double forward_error =
      relative_error(my_spectrum.data(), expected_spectrum.data(),
                     static_cast<int64_t>(my_spectrum.size()), complex_distance);
  const double inverse_error = relative_error(back.data(), my_field.data(),
                                              static_cast<int64_t>(back.size()), real_distance);
  for (const auto& [what, error] : {std::pair<const char*, double>{"forward", forward_error},
                                    std::pair<const char*, double>{"inverse", inverse_error}}) {
    if (!(error <= tolerance)) {  // NaN fails too
      std::fprintf(stderr,
                   "rank %d of %d, %s: %s differs from the single-process FFT by %.3g "
                   "(relative; tolerance %.3g)\n",
                   comm.rank(), comm.size(), describe(c).c_str(), what, error, tolerance);
      ++failures;
    }
  }
  return failures;
}

/// Each rank's box of `grid` (empty: the automatic one) moves to its slab of axis 0 and back,
/// bit for bit; lattices that the ranks cannot split are skipped. Returns the failures.
int check_box_slabs(const Exec& exec, Communicator& comm, const std::vector<int64_t>& dims,
                    std::vector<int> grid, int batch) {
  std::unique_ptr<Decomposition> boxes;
  try {
    boxes = std::make_unique<Decomposition>(dims, grid, comm.size());
  } catch (const std::exception&) {
    return 0;  // no such grid for this rank count
  }
  const auto sites = [](const std::vector<int64_t>& extents) {
    int64_t n = 1;
    for (int64_t l : extents) n *= l;
    return n;
  };
  const int64_t volume = sites(dims), box = sites(boxes->box());
  std::vector<double> whole(static_cast<size_t>(volume * batch));
  for (size_t i = 0; i < whole.size(); ++i) whole[i] = static_cast<double>(i);  // names each site
  std::vector<double> box_field(static_cast<size_t>(box * batch));
  std::vector<double> stored(static_cast<size_t>(sites(boxes->storage_extents())));
  for (int b = 0; b < batch; ++b) {
    boxes->box_from_whole(comm.rank(), whole.data() + b * volume, stored.data(), sizeof(double));
    boxes->interior_of_box(comm.rank(), stored.data(), box_field.data() + b * box, sizeof(double));
  }
  const AxisSplit rows{dims[0], comm.size()};
  BoxSlabs<Exec> slabs(exec, comm, *boxes, rows, batch, sizeof(double));
  const int64_t row = volume / dims[0], first = rows.first(comm.rank());
  const auto box_held = on_backend(exec, box_field);
  auto slab_held = exec.template allocate<double>(slabs.slab_sites() * batch);
  auto back_held = exec.template allocate<double>(static_cast<int64_t>(box_field.size()));
  slabs.to_slab(box_held.data(), slab_held.data());
  slabs.to_box(slab_held.data(), back_held.data());
  const std::vector<double> slab = on_host(exec, slab_held);
  const std::vector<double> back = on_host(exec, back_held);
  bool same = slabs.slab_sites() == rows.count(comm.rank()) * row && back == box_field;
  for (int b = 0; same && b < batch; ++b) {
    same = std::equal(slab.begin() + b * slabs.slab_sites(),
                      slab.begin() + (b + 1) * slabs.slab_sites(),
                      whole.begin() + b * volume + first * row);
  }
  if (same) return 0;
  std::fprintf(stderr, "rank %d of %d: BoxSlabs, %s: box and slab differ\n", comm.rank(),
               comm.size(), describe({dims, batch}).c_str());
  return 1;
}

/// The structure factor's tables made rank by rank from each rank's rows of the running sums
/// (sim/correlators.hpp) against one process's tables of the whole sums: the same rows of S,
/// its error and connected part, G to rounding, the whole lattice's shells to rounding, and
/// the mean field and xi2 exactly.
int check_tables(Communicator& comm, const std::vector<int64_t>& dims) {
  StructureFactorSums whole;
  whole.dims = dims;
  whole.components = 2;
  whole.samples = 5;
  const int d = static_cast<int>(dims.size());
  const int64_t modes = half_spectrum_size(dims.data(), d), row_modes = modes / dims[0];
  std::mt19937_64 random(7 + static_cast<uint64_t>(modes));
  std::uniform_real_distribution<double> uniform(0.5, 2.0);
  for (int64_t k = 0; k < modes; ++k) {
    whole.power_sum.push_back(5 * uniform(random));
    whole.power_squares.push_back(30 * uniform(random));
  }
  whole.power_sum[0] = 50;  // S(0) above S(k_min): a finite xi2 to compare
  whole.mean_field_sum = {0.3, -0.2};
  const int64_t longest = *std::max_element(dims.begin(), dims.end());
  for (int a = 0; a < d; ++a) {
    if (dims[a] == longest) whole.min_axes.push_back(a);
  }
  const StructureFactorTables one = structure_factor_tables(whole);

  const AxisSplit rows{dims[0], comm.size()};
  StructureFactorSums mine = whole;
  mine.first_row = rows.first(comm.rank());
  const int64_t first = mine.first_row * row_modes, count = rows.count(comm.rank()) * row_modes;
  mine.power_sum.assign(whole.power_sum.begin() + first, whole.power_sum.begin() + first + count);
  mine.power_squares.assign(whole.power_squares.begin() + first,
                            whole.power_squares.begin() + first + count);
  if (comm.rank() != 0) mine.mean_field_sum = whole.mean_field_sum;  // every rank has it
  const StructureFactorTables split = structure_factor_tables(mine, &comm);

  const int64_t row_sites = volume_of(dims) / dims[0];
  const int64_t sites = rows.count(comm.rank()) * row_sites;
  const auto same_rows = [&](const std::vector<double>& a, const std::vector<double>& b,
                             int64_t offset, int64_t n) {
    return static_cast<int64_t>(a.size()) == n &&
           std::equal(a.begin(), a.end(), b.begin() + offset);
  };
  const auto close = [](const std::vector<double>& a, const std::vector<double>& b) {
    return a.size() == b.size() &&
           relative_error(a.data(), b.data(), static_cast<int64_t>(a.size()), real_distance) <
               1e-12;
  };
  const std::vector<double> g_rows(one.g.begin() + split.first_row * row_sites,
                                   one.g.begin() + split.first_row * row_sites + sites);
  const bool agree = split.first_row == mine.first_row && split.rows == rows.count(comm.rank()) &&
                     same_rows(split.s, one.s, first, count) &&
                     same_rows(split.s_error, one.s_error, first, count) &&
                     same_rows(split.s_connected, one.s_connected, first, count) &&
                     close(split.g, g_rows) && close(split.radial_k, one.radial_k) &&
                     close(split.radial_s, one.radial_s) &&
                     split.radial_modes == one.radial_modes && split.mean_field == one.mean_field &&
                     std::isfinite(one.xi2) && split.xi2 == one.xi2 && split.momenta == one.momenta;
  if (agree) return 0;
  std::fprintf(stderr, "rank %d of %d: structure factor tables of %s differ\n", comm.rank(),
               comm.size(), describe({dims, 1}).c_str());
  return 1;
}

/// Plans that cannot be made are refused with std::invalid_argument.
int check_refusals(const Exec& exec, Communicator& comm) {
  int failures = 0;
  const std::vector<Case> refused = {{{16}, 1}, {{8, 0}, 1}, {{0, 8, 8}, 1}, {{8, 8}, 0}};
  for (const Case& c : refused) {
    try {
      SlabFft<Exec> fft(exec, comm, c.dims, c.batch);
      std::fprintf(stderr, "%s: not refused\n", describe(c).c_str());
      ++failures;
    } catch (const std::invalid_argument&) {
    }
  }
  return failures;
}

}  // namespace
}  // namespace lattica

int main(int argc, char** argv) {
  using namespace lattica;
  std::shared_ptr<Communicator> comm = start_processes(argc, argv);
  int failures = 0;
  try {
#ifdef LATTICA_SLAB_FFT_TEST_CUDA
    std::string reason;
    const int devices = cuda_device_count(reason);
    const char* required = std::getenv("SIM_REQUIRE_GPU");
    if (comm->max(devices == 0 ? 1 : 0) != 0) {
      const bool fail = required && std::strcmp(required, "1") == 0;
      if (comm->rank() == 0)
        std::printf("slab FFT on GPU ranks: %s: %s\n", fail ? "FAILED" : "skipped", reason.c_str());
      finish_processes();
      return fail ? 1 : 77;
    }
    const int device = comm->local_rank() % devices;
    const CudaExec exec(device);
    if (comm->size() > 1) comm->enable_device(device);  // NCCL; one rank copies its piece
#else
    const CpuExec exec(0);
#endif
    const std::vector<Case> cases = {
        {{8, 6}, 1},     {{7, 5}, 2},    {{3, 10}, 1},   {{2, 9}, 1},    {{16, 16}, 3},
        {{6, 4, 10}, 1}, {{5, 3, 7}, 3}, {{9, 6, 4}, 2}, {{1, 6, 6}, 1}, {{4, 3, 4, 5}, 2}};
    for (const Case& c : cases) failures += check(exec, *comm, c);
    const int n = comm->size();
    failures += check_box_slabs(exec, *comm, {8, 6}, {}, 1);
    failures += check_box_slabs(exec, *comm, {4, 8, 6}, {}, 2);
    failures += check_box_slabs(exec, *comm, {2, 4 * n, 6}, {1, n, 1}, 1);  // more ranks than rows
    failures += check_box_slabs(exec, *comm, {6, 4, 6}, {}, 1);
    failures += check_box_slabs(exec, *comm, {4, 4, 4, 6}, {}, 3);
    failures += check_refusals(exec, *comm);
    for (const std::vector<int64_t>& dims : std::vector<std::vector<int64_t>>{
             {8, 6}, {7, 5}, {2, 9}, {6, 4, 10}, {5, 7, 7}, {4, 3, 4, 5}})
      failures += check_tables(*comm, dims);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %d: %s\n", comm->rank(), e.what());
    failures = 1;
  }
  const int64_t worst = comm->max(failures);
  if (comm->rank() == 0) {
    std::printf("slab FFT on %d %s rank(s): %s\n", comm->size(), Exec::kBackendName,
                worst ? "FAILED" : "agrees");
  }
  finish_processes();
  return worst ? 1 : 0;
}
