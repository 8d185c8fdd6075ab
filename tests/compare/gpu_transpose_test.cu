// GPU transposes, axis permutations and checkerboard <-> lexicographic permutations
// (kernels/transpose/transpose.cuh) against the host versions (themselves checked against
// naive index arithmetic in tests/unit/transpose_test.cpp). Every field's values encode their
// positions, every comparison and round trip is exact, and every output sits between guard
// bytes that must come back untouched.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/backend/cuda_exec.cuh"
#include "kernels/transpose/transpose.cuh"
#include "tests/support/gpu.hpp"

namespace lattica {
namespace {

// Element types besides the integers and floating point: a 16-byte complex-like pair (aligned
// to 8 only, so it moves as a 16-byte word only when the pointers allow), an odd 12-byte
// vector that moves as itself, and a 48-byte one that is split into words.
struct Pair16 {
  double re, im;
  static Pair16 encode(int64_t i) { return {static_cast<double>(i), -0.25 - i}; }
};
struct Vec12 {
  float x, y, z;
  static Vec12 encode(int64_t i) {
    return {static_cast<float>(i % (1 << 24)), static_cast<float>(i >> 24), -1.5f};
  }
};
struct Wide48 {
  double v[6];
  static Wide48 encode(int64_t i) {
    Wide48 w;
    for (int k = 0; k < 6; ++k) w.v[k] = static_cast<double>(i * 6 + k);
    return w;
  }
};

/// The value that element i of a test field holds: exact, and different from its neighbours.
template <class T>
T encode(int64_t i) {
  if constexpr (std::is_integral<T>::value) {
    return static_cast<T>(i * 131 + (i >> 8));  // modulo 2^8: neighbours still differ
  } else if constexpr (std::is_floating_point<T>::value) {
    return static_cast<T>(i % (1 << 24));  // exact in float
  } else {
    return T::encode(i);
  }
}

template <class T>
std::vector<T> encoded_field(int64_t n) {
  std::vector<T> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = encode<T>(i);
  return v;
}

template <class T>
::testing::AssertionResult same_bytes(const std::vector<T>& got, const std::vector<T>& want) {
  if (got.size() != want.size()) return ::testing::AssertionFailure() << "sizes differ";
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::memcmp(&got[i], &want[i], sizeof(T)) != 0) {
      return ::testing::AssertionFailure()
             << "first difference at element " << i << " of " << got.size();
    }
  }
  return ::testing::AssertionSuccess();
}

constexpr size_t kGuardBytes = 256;
constexpr unsigned char kSentinel = 0xA5;

/// n values of T in device memory, `offset` bytes past a 256-byte boundary (to test
/// misaligned pointers), between guard bytes that hold kSentinel.
template <class T>
class GuardedArray {
 public:
  GuardedArray(int64_t n, size_t offset)
      : n_(n), offset_(offset), raw_(static_cast<int64_t>(2 * kGuardBytes + bytes() + offset)) {
    LATTICA_CUDA_CHECK(cudaMemset(raw_.data(), kSentinel, static_cast<size_t>(raw_.size())));
  }
  T* data() { return reinterpret_cast<T*>(raw_.data() + kGuardBytes + offset_); }
  size_t bytes() const { return static_cast<size_t>(n_) * sizeof(T); }

  void upload(const std::vector<T>& values) {
    LATTICA_CUDA_CHECK(cudaMemcpy(data(), values.data(), bytes(), cudaMemcpyHostToDevice));
  }
  /// The values, after checking that nothing was written outside them.
  std::vector<T> download() {
    std::vector<unsigned char> all(static_cast<size_t>(raw_.size()));
    LATTICA_CUDA_CHECK(cudaMemcpy(all.data(), raw_.data(), all.size(), cudaMemcpyDeviceToHost));
    const size_t begin = kGuardBytes + offset_, end = begin + bytes();
    for (size_t b = 0; b < all.size(); ++b) {
      if ((b < begin || b >= end) && all[b] != kSentinel) {
        ADD_FAILURE() << "write outside the output at byte " << static_cast<int64_t>(b - begin);
        break;
      }
    }
    std::vector<T> values(static_cast<size_t>(n_));
    std::memcpy(values.data(), all.data() + begin, bytes());
    return values;
  }

 private:
  int64_t n_;
  size_t offset_;
  DeviceBuffer<unsigned char> raw_;
};

/// A non-blocking stream, so nothing relies on the legacy default stream's ordering.
class Stream {
 public:
  Stream() { LATTICA_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(stream_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  operator cudaStream_t() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

/// Uploads `input`, runs launch(d_in, d_out, stream) into a guarded output of the same size
/// and returns the output. Both arrays sit `offset` bytes past an aligned address.
template <class T, class Launch>
std::vector<T> run_device(const std::vector<T>& input, Launch launch, size_t offset = 0) {
  const auto n = static_cast<int64_t>(input.size());
  GuardedArray<T> in(n, offset), out(n, offset);
  in.upload(input);
  // The memsets and copy above ran on the legacy default stream, which a non-blocking stream
  // does not wait for.
  LATTICA_CUDA_CHECK(cudaDeviceSynchronize());
  Stream stream;
  launch(static_cast<const T*>(in.data()), out.data(), static_cast<cudaStream_t>(stream));
  LATTICA_CUDA_CHECK(cudaStreamSynchronize(stream));
  return out.download();
}

template <class T>
class GpuTranspose : public ::testing::Test {};
using ElementTypes = ::testing::Types<int8_t, uint8_t, float, double, Pair16, Vec12, Wide48>;
TYPED_TEST_SUITE(GpuTranspose, ElementTypes);

TYPED_TEST(GpuTranspose, TwoDimensionalMatchesHostAndRoundTrips) {
  LATTICA_REQUIRE_GPU_OR_SKIP();
  using T = TypeParam;
  // Edges of the 32 x 32 tile, the narrow path (a side below 32) and single rows and columns.
  const std::vector<std::pair<int64_t, int64_t>> shapes{
      {1, 1},    {1, 1000}, {1000, 1}, {31, 33},   {32, 32}, {33, 31},  {1000, 7},
      {7, 1000}, {4097, 3}, {3, 4097}, {100, 257}, {64, 96}, {2, 5000}, {5000, 31}};
  for (int64_t batch : {1, 3}) {
    for (const auto& shape : shapes) {
      const int64_t rows = shape.first, cols = shape.second;
      SCOPED_TRACE(std::to_string(batch) + " x " + std::to_string(rows) + " x " +
                   std::to_string(cols));
      const auto input = encoded_field<T>(batch * rows * cols);
      std::vector<T> want(input.size());
      transpose_2d_host(input.data(), want.data(), batch, rows, cols);
      const auto got = run_device(input, [&](const T* in, T* out, cudaStream_t s) {
        transpose_2d(in, out, batch, rows, cols, s);
      });
      ASSERT_TRUE(same_bytes(got, want));
      const auto back = run_device(got, [&](const T* in, T* out, cudaStream_t s) {
        transpose_2d(in, out, batch, cols, rows, s);
      });
      ASSERT_TRUE(same_bytes(back, input));
    }
  }
}

/// Permutes a field of `extents` by `perm` on the device, compares with the host, and permutes
/// it back with the inverse permutation.
template <class T>
void check_permutation(const std::vector<int64_t>& extents, const std::vector<int>& perm,
                       size_t offset = 0) {
  SCOPED_TRACE("extents " + ::testing::PrintToString(extents) + " perm " +
               ::testing::PrintToString(perm) + " offset " + std::to_string(offset));
  const int rank = static_cast<int>(extents.size());
  const int64_t n = std::accumulate(extents.begin(), extents.end(), int64_t{1},
                                    [](int64_t a, int64_t b) { return a * b; });
  const auto input = encoded_field<T>(n);
  std::vector<T> want(input.size());
  permute_axes_host(input.data(), want.data(), rank, extents.data(), perm.data());
  const auto got = run_device(
      input,
      [&](const T* in, T* out, cudaStream_t s) {
        permute_axes(in, out, rank, extents.data(), perm.data(), s);
      },
      offset);
  ASSERT_TRUE(same_bytes(got, want));
  std::vector<int64_t> permuted(rank);
  std::vector<int> inverse(rank);
  for (int k = 0; k < rank; ++k) {
    permuted[k] = extents[perm[k]];
    inverse[perm[k]] = k;
  }
  const auto back = run_device(
      got,
      [&](const T* in, T* out, cudaStream_t s) {
        permute_axes(in, out, rank, permuted.data(), inverse.data(), s);
      },
      offset);
  ASSERT_TRUE(same_bytes(back, input));
}

template <class T>
void check_all_permutations(const std::vector<int64_t>& extents) {
  std::vector<int> perm(extents.size());
  std::iota(perm.begin(), perm.end(), 0);
  do {
    check_permutation<T>(extents, perm);
    if (::testing::Test::HasFatalFailure()) return;
  } while (std::next_permutation(perm.begin(), perm.end()));
}

TYPED_TEST(GpuTranspose, EveryPermutationOfRanksThreeToFive) {
  LATTICA_REQUIRE_GPU_OR_SKIP();
  using T = TypeParam;
  // Extents off the tile size; short axes take the narrow path, unit axes are dropped.
  for (const auto& extents : std::vector<std::vector<int64_t>>{
           {33, 5, 40}, {31, 64, 3}, {3, 33, 5, 40}, {2, 32, 1, 31}, {3, 4, 5, 6, 7}}) {
    check_all_permutations<T>(extents);
    if (this->HasFatalFailure()) return;
  }
}

TYPED_TEST(GpuTranspose, ComponentSplitsBothWays) {
  LATTICA_REQUIRE_GPU_OR_SKIP();
  using T = TypeParam;
  // AoS [V][n] <-> SoA [n][V] for n = 2 .. 8 (odd, power-of-two and other shared-memory
  // pitches), V not a multiple of any chunk, and with a batch (replicas) in front.
  for (int64_t n = 2; n <= 8; ++n) {
    check_permutation<T>({70001, n}, {1, 0});
    check_permutation<T>({n, 70001}, {1, 0});
    check_permutation<T>({3, 4099, n}, {0, 2, 1});
    if (this->HasFatalFailure()) return;
  }
}

TYPED_TEST(GpuTranspose, CheckerboardAndLexicographicRoundTrip) {
  LATTICA_REQUIRE_GPU_OR_SKIP();
  using T = TypeParam;
  // Odd half rows ({6}, {2, 10}, {4, 6, 2}, ...) take the per-pair path; half rows that are
  // multiples of 8 take the vector path for every element size.
  auto check = [](const auto& lattice, const std::vector<int64_t>& dims) {
    for (int64_t copies : {1, 3}) {
      SCOPED_TRACE("dims " + ::testing::PrintToString(dims) + " copies " + std::to_string(copies));
      const auto lexicographic = encoded_field<T>(copies * lattice.volume());
      std::vector<T> storage(lexicographic.size());
      lexicographic_to_checkerboard_host(lattice, lexicographic.data(), storage.data(), copies);
      const auto got_storage = run_device(lexicographic, [&](const T* in, T* out, cudaStream_t s) {
        lexicographic_to_checkerboard(lattice, in, out, copies, s);
      });
      ASSERT_TRUE(same_bytes(got_storage, storage));
      const auto got_lexicographic = run_device(storage, [&](const T* in, T* out, cudaStream_t s) {
        checkerboard_to_lexicographic(lattice, in, out, copies, s);
      });
      ASSERT_TRUE(same_bytes(got_lexicographic, lexicographic));
    }
  };
  auto lattice = [](std::vector<int64_t> dims, auto dimension) {
    return Checkerboard<decltype(dimension)::value>::make(dims.data());
  };
  using D1 = std::integral_constant<int, 1>;
  using D2 = std::integral_constant<int, 2>;
  using D3 = std::integral_constant<int, 3>;
  using D4 = std::integral_constant<int, 4>;
  const std::vector<std::vector<int64_t>> dims1{{6}, {2}, {16}, {1000}};
  const std::vector<std::vector<int64_t>> dims2{{2, 10}, {4, 32}, {66, 34}, {128, 128}};
  const std::vector<std::vector<int64_t>> dims3{{4, 6, 2}, {2, 6, 16}, {6, 10, 4}, {32, 32, 48}};
  const std::vector<std::vector<int64_t>> dims4{{2, 4, 6, 2}, {4, 2, 2, 16}, {6, 4, 8, 10}};
  for (const auto& d : dims1) check(lattice(d, D1{}), d);
  for (const auto& d : dims2) check(lattice(d, D2{}), d);
  for (const auto& d : dims3) check(lattice(d, D3{}), d);
  for (const auto& d : dims4) check(lattice(d, D4{}), d);
}

// Pointers aligned only to their element (or less than the word they could move as) take the
// element-wise paths; the results must not change.
TEST(GpuTransposeAlignment, MisalignedPointersGiveTheSameResults) {
  LATTICA_REQUIRE_GPU_OR_SKIP();
  check_permutation<Pair16>({33, 70}, {1, 0}, 8);
  check_permutation<Pair16>({1000, 3}, {1, 0}, 8);
  check_permutation<Pair16>({5, 7, 2}, {1, 0, 2}, 8);
  check_permutation<float>({5, 7, 2}, {1, 0, 2}, 4);
  check_permutation<float>({5, 7, 4}, {1, 0, 2}, 4);
  check_permutation<uint16_t>({9, 33, 40}, {2, 1, 0}, 2);
  const int64_t dims[2] = {4, 32};
  const auto lattice = Checkerboard<2>::make(dims);
  for (size_t offset : {size_t{4}, size_t{8}}) {
    const auto lexicographic = encoded_field<float>(2 * lattice.volume());
    const auto storage = run_device(
        lexicographic,
        [&](const float* in, float* out, cudaStream_t s) {
          lexicographic_to_checkerboard(lattice, in, out, 2, s);
        },
        offset);
    const auto back = run_device(
        storage,
        [&](const float* in, float* out, cudaStream_t s) {
          checkerboard_to_lexicographic(lattice, in, out, 2, s);
        },
        offset);
    EXPECT_TRUE(same_bytes(back, lexicographic)) << "offset " << offset;
  }
}

TEST(GpuTransposeAlignment, LargeFieldsAndEmptyOnes) {
  LATTICA_REQUIRE_GPU_OR_SKIP();
  // More tiles than one wave of blocks, and a 4-byte permutation in the tiled 3-D path.
  check_permutation<float>({2049, 1537}, {1, 0});
  check_permutation<double>({130, 70, 90}, {2, 1, 0});
  check_permutation<int8_t>({1 << 12, 1 << 11}, {1, 0});
  // Nothing to do for an empty array; refusals before anything runs.
  const int64_t empty[2] = {0, 7};
  const int swap[2] = {1, 0};
  permute_axes<float>(nullptr, nullptr, 2, empty, swap, nullptr);
  const int bad[2] = {1, 1};
  EXPECT_THROW(permute_axes<float>(nullptr, nullptr, 2, empty, bad, nullptr),
               std::invalid_argument);
  const int64_t odd_last[2] = {4, 5};
  const auto odd = Checkerboard<2>::make(odd_last);
  EXPECT_THROW(checkerboard_to_lexicographic(odd, static_cast<const float*>(nullptr),
                                             static_cast<float*>(nullptr), 1, nullptr),
               std::invalid_argument);
}

}  // namespace
}  // namespace lattica
