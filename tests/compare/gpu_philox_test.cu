// The project's device Philox (cuRAND's block function) and cuRAND's documented device API
// (curand_init + curand4) against the host implementation, bit for bit.

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "kernels/backend/cuda_exec.cuh"
#include "kernels/rng/philox.hpp"
#include "tests/support/gpu.hpp"

namespace lattica {
namespace {

__global__ void philox_kernel(const PhiloxCounter* counters, const PhiloxKey* keys, int n,
                              PhiloxBlock* direct, PhiloxBlock* documented) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const PhiloxCounter c = counters[i];
  const PhiloxKey k = keys[i];
  direct[i] = philox4x32_10(c, k);
  // curand_init(seed, subsequence, offset): subsequence fills counter words z, w and offset/4
  // fills x, y, so this is the same block through cuRAND's public interface.
  curandStatePhilox4_32_10_t state;
  const unsigned long long seed = k.x | (static_cast<unsigned long long>(k.y) << 32);
  const unsigned long long subsequence = c.z | (static_cast<unsigned long long>(c.w) << 32);
  const unsigned long long step = c.x | (static_cast<unsigned long long>(c.y) << 32);
  curand_init(seed, subsequence, 4 * step, &state);
  const uint4 r = curand4(&state);
  documented[i] = {r.x, r.y, r.z, r.w};
}

TEST(GpuPhilox, DeviceEqualsHost) {
  LATTICA_REQUIRE_GPU_OR_SKIP();
  const int n = 1 << 20;
  std::mt19937_64 gen(2026);
  std::vector<PhiloxCounter> counters(n);
  std::vector<PhiloxKey> keys(n);
  for (int i = 0; i < n; ++i) {
    // Steps below 2^62 so 4 * step fits curand_init's 64-bit offset; sites use the full
    // 40-bit range, every stream id and replica, seeds all 64 bits.
    const uint64_t step = gen() >> 2, site = gen() >> 24, seed = gen();
    const auto replica = static_cast<uint32_t>(gen() % kMaxReplicas);
    const auto stream = static_cast<RngStream>(gen() % 3 == 0 ? 0xFF : gen() % 2);
    counters[i] =
        philox_counter(stream, replica, site, i % 7 == 0 ? static_cast<uint64_t>(i) : step);
    keys[i] = philox_key(seed);
  }
  DeviceBuffer<PhiloxCounter> d_counters(n);
  DeviceBuffer<PhiloxKey> d_keys(n);
  DeviceBuffer<PhiloxBlock> d_direct(n), d_documented(n);
  LATTICA_CUDA_CHECK(cudaMemcpy(d_counters.data(), counters.data(), n * sizeof(PhiloxCounter),
                                cudaMemcpyHostToDevice));
  LATTICA_CUDA_CHECK(
      cudaMemcpy(d_keys.data(), keys.data(), n * sizeof(PhiloxKey), cudaMemcpyHostToDevice));
  philox_kernel<<<(n + 255) / 256, 256>>>(d_counters.data(), d_keys.data(), n, d_direct.data(),
                                          d_documented.data());
  LATTICA_CUDA_CHECK(cudaGetLastError());
  LATTICA_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<PhiloxBlock> direct(n), documented(n);
  LATTICA_CUDA_CHECK(
      cudaMemcpy(direct.data(), d_direct.data(), n * sizeof(PhiloxBlock), cudaMemcpyDeviceToHost));
  LATTICA_CUDA_CHECK(cudaMemcpy(documented.data(), d_documented.data(), n * sizeof(PhiloxBlock),
                                cudaMemcpyDeviceToHost));
  int mismatches = 0;
  for (int i = 0; i < n; ++i) {
    const PhiloxBlock want = philox4x32_10_host(counters[i], keys[i]);
    const bool ok_direct = direct[i].x == want.x && direct[i].y == want.y &&
                           direct[i].z == want.z && direct[i].w == want.w;
    const bool ok_documented = documented[i].x == want.x && documented[i].y == want.y &&
                               documented[i].z == want.z && documented[i].w == want.w;
    if (!ok_direct || !ok_documented) {
      if (++mismatches < 5)
        ADD_FAILURE() << "input " << i << ": direct " << ok_direct << ", curand4 " << ok_documented;
    }
  }
  EXPECT_EQ(mismatches, 0);
}

}  // namespace
}  // namespace lattica
