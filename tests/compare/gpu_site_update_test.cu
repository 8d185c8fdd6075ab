// One site update of every continuous model and algorithm, on the device and on the host, from
// the same spin, neighbours and random words: the per-site physics agrees to rounding. Pins
// down a CPU/GPU difference to one move before whole chains are compared.

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/backend/cpu_exec.hpp"
#include "kernels/backend/cuda_exec.cuh"
#include "kernels/models/lattice_model.hpp"
#include "kernels/models/on.hpp"
#include "kernels/models/phi4.hpp"
#include "tests/support/gpu.hpp"

namespace lattica {
namespace {

constexpr int kD = 2;

/// Site i: a hot-start spin and 2D hot-start neighbours, then one update.
template <class Model>
struct OneUpdate {
  typename Model::Params params;
  UpdateAlgorithm algorithm;
  typename Model::Spin* start;
  typename Model::Spin* out;
  int* accepted;
  LATTICA_HD_INLINE void operator()(int64_t i) const {
    typename Model::Spin nb[2 * kD];
    for (int k = 0; k < 2 * kD; ++k)
      nb[k] = Model::initial(params, true, 1 + k, i);  // other replicas' hot starts
    const typename Model::Spin old = Model::initial(params, true, 0, i);
    start[i] = old;
    SiteRandom random(params.seed, RngStream::site_update, 0, static_cast<uint64_t>(i),
                      update_step(7, 0, 0));
    int a = 0;
    out[i] = Model::template update<kD>(params, algorithm, old, nb, random, a);
    accepted[i] = a;
  }
};

/// Largest component difference of two spins.
template <class Real>
double max_difference(Real a, Real b) {
  return std::fabs(double(a) - double(b));
}
template <class Real, int N>
double max_difference(const OnSpin<Real, N>& a, const OnSpin<Real, N>& b) {
  double worst = 0;
  for (int c = 0; c < N; ++c) worst = std::max(worst, max_difference(a.c[c], b.c[c]));
  return worst;
}

template <class Model>
void compare(const typename Model::Params& params, UpdateAlgorithm algorithm, double tolerance,
             const char* what) {
  using Spin = typename Model::Spin;
  const int64_t n = 1 << 16;
  CpuExec cpu(0);
  CudaExec gpu(0);
  HostBuffer<Spin> h_start(n), h_out(n);
  HostBuffer<int> h_accepted(n);
  cpu.for_each(
      n, OneUpdate<Model>{params, algorithm, h_start.data(), h_out.data(), h_accepted.data()});
  DeviceBuffer<Spin> d_start(n), d_out(n);
  DeviceBuffer<int> d_accepted(n);
  gpu.for_each(
      n, OneUpdate<Model>{params, algorithm, d_start.data(), d_out.data(), d_accepted.data()});
  std::vector<Spin> g_start(n), g_out(n);
  std::vector<int> g_accepted(n);
  gpu.copy_to_host(d_start, g_start.data());
  gpu.copy_to_host(d_out, g_out.data());
  gpu.copy_to_host(d_accepted, g_accepted.data());
  double worst_start = 0, worst = 0;
  int64_t first_bad = -1, accept_differs = 0;
  for (int64_t i = 0; i < n; ++i) {
    worst_start = std::max(worst_start, max_difference(h_start.data()[i], g_start[i]));
    const double d = max_difference(h_out.data()[i], g_out[i]);
    if (d > tolerance && first_bad < 0) first_bad = i;
    worst = std::max(worst, d);
    accept_differs += h_accepted.data()[i] != g_accepted[i];
  }
  EXPECT_LE(worst_start, tolerance) << what << ": hot start";
  EXPECT_LE(worst, tolerance) << what << ": after one update (first bad site " << first_bad << ")";
  EXPECT_EQ(accept_differs, 0) << what;
}

TEST(GpuSiteUpdate, OnModelsAgreeToRounding) {
  LATTICA_REQUIRE_GPU_OR_SKIP();
  const OnParams p{77, 0.9, 0.3, 0.8, 2, kD};
  for (UpdateAlgorithm a :
       {UpdateAlgorithm::metropolis, UpdateAlgorithm::heatbath, UpdateAlgorithm::overrelaxation}) {
    const std::string what = "algorithm " + std::to_string(static_cast<int>(a));
    // The heat bath's sqrt(1 - x^2) near x = +-1 turns an ulp of x (from the two libraries'
    // sin and cos) into up to 1e-4 in float and 2e-11 in double (one site in 2^16 here).
    compare<OnModel<double, 2>>(p, a, 1e-10, ("O(2) double, " + what).c_str());
    compare<OnModel<double, 3>>(p, a, 1e-10, ("O(3) double, " + what).c_str());
    compare<OnModel<double, 4>>(p, a, 1e-10, ("O(4) double, " + what).c_str());
    compare<OnModel<float, 2>>(p, a, 1e-3, ("O(2) float, " + what).c_str());
    compare<OnModel<float, 3>>(p, a, 1e-3, ("O(3) float, " + what).c_str());
  }
}

TEST(GpuSiteUpdate, Phi4AgreesToRounding) {
  LATTICA_REQUIRE_GPU_OR_SKIP();
  const Phi4Params p{78, 0.2, 1.1, 0.05, 1.3, 3, kD};
  for (UpdateAlgorithm a : {UpdateAlgorithm::metropolis, UpdateAlgorithm::overrelaxation}) {
    const std::string what = "algorithm " + std::to_string(static_cast<int>(a));
    compare<Phi4Model<double>>(p, a, 1e-12, ("phi4 double, " + what).c_str());
    compare<Phi4Model<float>>(p, a, 1e-4, ("phi4 float, " + what).c_str());
  }
}

/// Three sweeps of `algorithms` over both colours of every replica of a hot start on the GPU
/// (UpdateColour in runs of kRun), with each run located in 32-bit arithmetic (Index uint32_t,
/// the engine's choice for every lattice of up to 2^32 sites) or in 64 bits (otherwise run only
/// by larger lattices); the spins and the accepted counts afterwards.
template <int D, class Model, int kRun, class Index>
std::pair<std::vector<typename Model::Spin>, std::vector<uint8_t>> sweeps_on_gpu(
    const typename Model::Params& params, const std::vector<UpdateAlgorithm>& algorithms,
    std::array<int64_t, D> dims, int replicas) {
  using Spin = typename Model::Spin;
  using Params = typename Model::Params;
  CudaExec gpu(0);
  const Checkerboard<D> lattice = Checkerboard<D>::make(dims.data());
  EXPECT_TRUE(lattice.fits_32_bits());
  const int64_t n = replicas * lattice.volume(), half = replicas * lattice.half_volume;
  DeviceBuffer<Spin> spins(n);
  DeviceBuffer<uint8_t> accepted(half);
  gpu.for_each(n, Initialize<D, Model>{lattice, params, spins.data(), true});
  for (uint64_t sweep = 0; sweep < 3; ++sweep) {
    for (size_t pass = 0; pass < algorithms.size(); ++pass) {
      for (int colour = 0; colour < 2; ++colour) {
        gpu.for_each(half / kRun, UpdateColour<D, Model, false, SharedParams<Params>, kRun, Index>{
                                      lattice,
                                      {params},
                                      spins.data(),
                                      accepted.data(),
                                      colour,
                                      algorithms[pass],
                                      static_cast<uint32_t>(pass),
                                      sweep});
      }
    }
  }
  std::vector<Spin> out(n);
  std::vector<uint8_t> counts(half);
  gpu.copy_to_host(spins, out.data());
  gpu.copy_to_host(accepted, counts.data());
  return {out, counts};
}

template <int D, class Model, int kRun>
void expect_same_in_32_and_64_bits(const typename Model::Params& params,
                                   const std::vector<UpdateAlgorithm>& algorithms,
                                   std::array<int64_t, D> dims, int replicas, const char* what) {
  const auto narrow = sweeps_on_gpu<D, Model, kRun, uint32_t>(params, algorithms, dims, replicas);
  const auto wide = sweeps_on_gpu<D, Model, kRun, int64_t>(params, algorithms, dims, replicas);
  ASSERT_EQ(narrow.first.size(), wide.first.size());
  int64_t differ = 0;
  for (size_t i = 0; i < narrow.first.size(); ++i)
    differ += std::memcmp(&narrow.first[i], &wide.first[i], sizeof(narrow.first[i])) != 0;
  EXPECT_EQ(differ, 0) << what << ": sites that differ";
  EXPECT_EQ(narrow.second, wide.second) << what << ": accepted moves";
  // The sweeps moved the spins away from their hot start.
  const auto start = sweeps_on_gpu<D, Model, kRun, uint32_t>(params, {}, dims, replicas);
  int64_t moved = 0;
  for (size_t i = 0; i < start.first.size(); ++i)
    moved += std::memcmp(&narrow.first[i], &start.first[i], sizeof(start.first[i])) != 0;
  EXPECT_GT(moved, static_cast<int64_t>(start.first.size()) / 2) << what;
}

TEST(GpuSiteUpdate, RunsLocatedIn32And64BitsAgreeBitForBit) {
  LATTICA_REQUIRE_GPU_OR_SKIP();
  const std::vector<UpdateAlgorithm> local{UpdateAlgorithm::metropolis,
                                           UpdateAlgorithm::overrelaxation};
  const OnParams on3{79, 0.7, 0.2, 0.9, 1, 3};
  expect_same_in_32_and_64_bits<3, OnModel<float, 3>, 2>(on3, local, {6, 10, 8}, 3,
                                                         "O(3) float 3D, runs of 2");
  const OnParams on2{80, 1.1, 0.0, 1.2, 2, 4};
  expect_same_in_32_and_64_bits<4, OnModel<double, 2>, 1>(on2, {UpdateAlgorithm::heatbath},
                                                          {4, 6, 4, 8}, 2, "O(2) double 4D");
  const Phi4Params phi4{81, 0.18, 1.1, 0.02, 1.5, 1, 2};
  expect_same_in_32_and_64_bits<2, Phi4Model<float>, 8>(phi4, local, {6, 48}, 2,
                                                        "phi4 float 2D, runs of 8");
  const Phi4Params phi4_3d{82, 0.18, 1.1, 0.02, 1.5, 1, 3};
  expect_same_in_32_and_64_bits<3, Phi4Model<double>, 4>(phi4_3d, local, {4, 6, 16}, 1,
                                                         "phi4 double 3D, runs of 4");
}

}  // namespace
}  // namespace lattica
