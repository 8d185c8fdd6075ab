// GPU reductions (warp shuffle -> block -> grid) against plain host sums on random data.

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/backend/cuda_exec.cuh"
#include "kernels/models/ising.hpp"
#include "tests/support/gpu.hpp"

namespace lattica {
namespace {

template <class T>
struct ReadArray {
  const T* data;
  __device__ T operator()(int64_t i) const { return data[i]; }
};

template <class T>
DeviceBuffer<T> upload(const CudaExec& exec, const std::vector<T>& host) {
  DeviceBuffer<T> d(static_cast<int64_t>(host.size()));
  exec.copy_to_device(host.data(), d);
  return d;
}

// Sizes below one warp, around block and grid limits, and beyond the grid-stride point.
const std::vector<int64_t> kSizes{1,   7,    31,     32,     33,     255,    256,
                                  257, 1000, 262143, 262144, 262145, 5000003};

TEST(GpuReduce, Int64MatchesHostSumExactly) {
  LATTICA_REQUIRE_GPU_OR_SKIP();
  CudaExec exec(0);
  std::mt19937_64 gen(17);
  for (int64_t n : kSizes) {
    std::vector<long long> data(static_cast<size_t>(n));
    long long want = 0;
    for (auto& x : data) {
      x = static_cast<long long>(gen() >> 24) - (1LL << 39);  // large, mixed-sign values
      want += x;
    }
    auto d = upload(exec, data);
    EXPECT_EQ(exec.reduce_sum<long long>(n, ReadArray<long long>{d.data()}), want) << "n = " << n;
  }
}

struct PairFromArrays {
  const long long* a;
  const long long* b;
  __device__ IsingSums operator()(int64_t i) const { return {a[i], b[i]}; }
};

TEST(GpuReduce, StructOfInt64MatchesHost) {
  LATTICA_REQUIRE_GPU_OR_SKIP();
  CudaExec exec(0, 128);
  std::mt19937_64 gen(18);
  for (int64_t n : kSizes) {
    std::vector<long long> a(static_cast<size_t>(n)), b(static_cast<size_t>(n));
    IsingSums want{0, 0};
    for (int64_t i = 0; i < n; ++i) {
      a[i] = static_cast<long long>(gen() % 17) - 8;
      b[i] = static_cast<long long>(gen() >> 1) % 1000003 - 500001;
      want = want + IsingSums{a[i], b[i]};
    }
    auto da = upload(exec, a);
    auto db = upload(exec, b);
    const IsingSums got = exec.reduce_sum<IsingSums>(n, PairFromArrays{da.data(), db.data()});
    EXPECT_EQ(got.bonds, want.bonds) << "n = " << n;
    EXPECT_EQ(got.magnetization, want.magnetization) << "n = " << n;
  }
}

// The exact accumulation adds to what the destination holds (fused measurements add to a
// cleared slot), with mixed signs, over every size.
TEST(GpuReduce, ExactAccumulationAddsToTheDestination) {
  LATTICA_REQUIRE_GPU_OR_SKIP();
  CudaExec exec(0);
  std::mt19937_64 gen(19);
  DeviceBuffer<IsingSums> slot(2);
  exec.zero(slot);
  IsingSums want{0, 0};
  for (int64_t n : kSizes) {
    std::vector<long long> a(static_cast<size_t>(n)), b(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      a[i] = static_cast<long long>(gen() >> 20) - (1LL << 43);
      b[i] = -static_cast<long long>(gen() % 1000);
      want = want + IsingSums{a[i], b[i]};
    }
    auto da = upload(exec, a);
    auto db = upload(exec, b);
    exec.accumulate_exact_into<IsingSums>(n, PairFromArrays{da.data(), db.data()}, slot.data() + 1);
    IsingSums got[2];
    exec.copy_to_host(slot, got);
    EXPECT_EQ(got[1].bonds, want.bonds) << "n = " << n;
    EXPECT_EQ(got[1].magnetization, want.magnetization) << "n = " << n;
    EXPECT_EQ(got[0].bonds, 0);  // the neighbouring slot is untouched
  }
}

TEST(GpuReduce, DoubleMatchesHostToRoundingAndRepeats) {
  LATTICA_REQUIRE_GPU_OR_SKIP();
  CudaExec exec(0);
  std::mt19937_64 gen(19);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int64_t n : kSizes) {
    std::vector<double> data(static_cast<size_t>(n));
    long double want = 0, magnitude = 0;
    for (auto& x : data) {
      x = (u(gen) - 0.3) * 1e3;
      want += x;
      magnitude += std::fabs(x);
    }
    auto d = upload(exec, data);
    const double got = exec.reduce_sum<double>(n, ReadArray<double>{d.data()});
    EXPECT_NEAR(got, static_cast<double>(want), 1e-13 * static_cast<double>(magnitude) + 1e-12)
        << "n = " << n;
    // Fixed launch shape, fixed order: the same bits every time.
    EXPECT_EQ(exec.reduce_sum<double>(n, ReadArray<double>{d.data()}), got) << "n = " << n;
  }
}

// Segment s of a segmented reduction: s * n + i of one array.
struct SegmentOfArray {
  const double* data;
  int64_t n;
  __device__ double operator()(int64_t s, int64_t i) const { return data[s * n + i]; }
};

// Every segment's sum is bit for bit the reduction of that segment alone (so a run's measured
// sums do not depend on how many replicas it has), also where the segments' partials need
// several chunks (many segments of many blocks).
TEST(GpuReduce, SegmentsEqualSeparateReductionsBitForBit) {
  LATTICA_REQUIRE_GPU_OR_SKIP();
  CudaExec exec(0);
  std::mt19937_64 gen(20);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const std::vector<std::pair<int64_t, int64_t>> shapes{{1, 1000},   {3, 1},      {5, 257},
                                                        {64, 32768}, {1500, 100}, {9, 300000}};
  for (const auto& [segments, n] : shapes) {
    std::vector<double> data(static_cast<size_t>(segments * n));
    for (auto& x : data) x = u(gen) * 1e3 + 1e-3 * u(gen);
    auto d = upload(exec, data);
    DeviceBuffer<double> together(segments), alone(segments);
    exec.reduce_segments_into<double>(segments, n, SegmentOfArray{d.data(), n}, together.data());
    for (int64_t s = 0; s < segments; ++s) {
      exec.reduce_sum_into<double>(n, ReadArray<double>{d.data() + s * n}, alone.data() + s);
    }
    std::vector<double> got(static_cast<size_t>(segments)), want(got.size());
    exec.copy_to_host(together, got.data());
    exec.copy_to_host(alone, want.data());
    for (int64_t s = 0; s < segments; ++s) {
      ASSERT_EQ(got[s], want[s]) << segments << " segments of " << n << ", segment " << s;
    }
  }
}

}  // namespace
}  // namespace lattica
