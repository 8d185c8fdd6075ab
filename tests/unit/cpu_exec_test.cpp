// The CPU execution policy: coverage of for_each and thread-count-independent reductions.

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/backend/cpu_exec.hpp"

namespace lattica {
namespace {

TEST(CpuExec, ForEachVisitsEveryIndexOnce) {
  std::vector<int> hits(100003, 0);
  CpuExec(2).for_each(static_cast<int64_t>(hits.size()), [&](int64_t i) { hits[i] += 1; });
  for (int h : hits) ASSERT_EQ(h, 1);
}

TEST(CpuExec, IntegerReductionIsExact) {
  std::mt19937_64 gen(3);
  std::vector<long long> data(1000001);
  long long want = 0;
  for (auto& x : data) {
    x = static_cast<long long>(gen() >> 20) - (1LL << 43);
    want += x;
  }
  for (int threads : {1, 2, 3}) {
    EXPECT_EQ(CpuExec(threads).reduce_sum<long long>(static_cast<int64_t>(data.size()),
                                                     [&](int64_t i) { return data[i]; }),
              want);
  }
}

TEST(CpuExec, FloatingReductionDoesNotDependOnThreads) {
  std::mt19937_64 gen(4);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> data(777777);
  for (auto& x : data) x = u(gen) * std::exp(10 * u(gen));
  auto f = [&](int64_t i) { return data[i]; };
  const double one = CpuExec(1).reduce_sum<double>(static_cast<int64_t>(data.size()), f);
  EXPECT_EQ(CpuExec(2).reduce_sum<double>(static_cast<int64_t>(data.size()), f), one);
  EXPECT_EQ(CpuExec(5).reduce_sum<double>(static_cast<int64_t>(data.size()), f), one);
}

}  // namespace
}  // namespace lattica

namespace lattica {
namespace {

// Each segment of a segmented reduction is the reduction of that segment alone, bit for bit.
TEST(CpuExec, SegmentsEqualSeparateReductions) {
  std::vector<double> data(7 * 1001);
  for (size_t i = 0; i < data.size(); ++i) data[i] = std::sin(0.37 * static_cast<double>(i)) * 1e3;
  const int64_t n = 1001;
  std::vector<double> got(7);
  const CpuExec exec(2);
  exec.reduce_segments_into<double>(
      7, n, [&](int64_t s, int64_t i) { return data[static_cast<size_t>(s * n + i)]; }, got.data());
  for (int64_t s = 0; s < 7; ++s) {
    EXPECT_EQ(got[s], exec.reduce_sum<double>(
                          n, [&](int64_t i) { return data[static_cast<size_t>(s * n + i)]; }))
        << "segment " << s;
  }
}

TEST(CpuExec, HistogramMatchesNaiveCount) {
  std::mt19937_64 gen(5);
  std::vector<int64_t> bin(300001);
  for (auto& b : bin) b = static_cast<int64_t>(gen() % 1000) - 1;  // -1: skipped
  std::vector<unsigned long long> want(999, 0);
  for (int64_t b : bin) {
    if (b >= 0) ++want[static_cast<size_t>(b)];
  }
  for (int threads : {1, 3}) {
    CpuExec exec(threads);
    auto counts = exec.allocate<unsigned long long>(1200);  // larger than needed
    exec.histogram(
        static_cast<int64_t>(bin.size()), [&](int64_t i) { return bin[i]; }, 999, counts);
    EXPECT_EQ(std::vector<unsigned long long>(counts.data(), counts.data() + 999), want);
  }
}

}  // namespace
}  // namespace lattica
