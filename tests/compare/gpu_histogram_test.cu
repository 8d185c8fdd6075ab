// GPU histograms (shared-memory privatised and global, with warp aggregation) against plain
// host counts, on uniform, heavily contended and wide data.

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "kernels/backend/cuda_exec.cuh"
#include "tests/support/gpu.hpp"

namespace lattica {
namespace {

struct ReadBin {
  const long long* bins;
  __device__ int64_t operator()(int64_t i) const { return bins[i]; }
};

std::vector<unsigned long long> device_counts(const CudaExec& exec,
                                              const std::vector<long long>& bin, int64_t bins) {
  DeviceBuffer<long long> d_bin(static_cast<int64_t>(bin.size()));
  exec.copy_to_device(bin.data(), d_bin);
  DeviceBuffer<unsigned long long> counts(bins);
  exec.histogram(static_cast<int64_t>(bin.size()), ReadBin{d_bin.data()}, bins, counts);
  std::vector<unsigned long long> host(static_cast<size_t>(bins));
  exec.copy_to_host(counts, host.data());
  return host;
}

std::vector<unsigned long long> host_counts(const std::vector<long long>& bin, int64_t bins) {
  std::vector<unsigned long long> c(static_cast<size_t>(bins), 0);
  for (long long b : bin) {
    if (b >= 0) ++c[static_cast<size_t>(b)];
  }
  return c;
}

TEST(GpuHistogram, UniformSharedMemoryPath) {
  LATTICA_REQUIRE_GPU_OR_SKIP();
  CudaExec exec(0);
  std::mt19937_64 gen(1);
  for (int64_t n : {1, 31, 1000, 1 << 20, 3000017}) {
    std::vector<long long> bin(static_cast<size_t>(n));
    for (auto& b : bin) b = static_cast<long long>(gen() % 4097) - 1;  // includes skipped (-1)
    EXPECT_EQ(device_counts(exec, bin, 4096), host_counts(bin, 4096)) << "n = " << n;
  }
}

TEST(GpuHistogram, HeavyContentionOneBin) {
  LATTICA_REQUIRE_GPU_OR_SKIP();
  CudaExec exec(0);
  std::vector<long long> bin(10000019, 7);
  const auto got = device_counts(exec, bin, 16);
  EXPECT_EQ(got, host_counts(bin, 16));
  EXPECT_EQ(got[7], 10000019ULL);
}

TEST(GpuHistogram, WideHistogramGlobalPath) {
  LATTICA_REQUIRE_GPU_OR_SKIP();
  CudaExec exec(0);
  std::mt19937_64 gen(2);
  const int64_t bins = 3 * kHistogramSharedBins + 5;
  std::vector<long long> bin(2000003);
  for (auto& b : bin) b = static_cast<long long>(gen() % (bins + 1)) - 1;
  for (size_t i = 0; i < bin.size(); i += 3) bin[i] = 12345;  // a contended bin among many
  EXPECT_EQ(device_counts(exec, bin, bins), host_counts(bin, bins));
}

TEST(GpuHistogram, ClearsPreviousCounts) {
  LATTICA_REQUIRE_GPU_OR_SKIP();
  CudaExec exec(0);
  std::vector<long long> bin(1000, 3);
  DeviceBuffer<long long> d_bin(1000);
  exec.copy_to_device(bin.data(), d_bin);
  DeviceBuffer<unsigned long long> counts(8);
  exec.histogram(1000, ReadBin{d_bin.data()}, 8, counts);
  exec.histogram(1000, ReadBin{d_bin.data()}, 8, counts);
  std::vector<unsigned long long> host(8);
  exec.copy_to_host(counts, host.data());
  EXPECT_EQ(host[3], 1000ULL);
}

}  // namespace
}  // namespace lattica
