#pragma once
// Division of 32-bit unsigned integers by a divisor fixed at launch time, by a multiply-high
// and a shift instead of the GPU's long division sequence (the round-up method of Granlund and
// Montgomery): n / d = (umulhi(n, m) + n) >> l with l = ceil(log2 d) and
// m = floor(2^32 (2^l - d) / d) + 1, exact for every 32-bit n.

#include <cstdint>

#include "kernels/common/host_device.hpp"

namespace lattica {

struct FastDivisor {
  uint32_t divisor;
  uint32_t multiplier;
  uint32_t shift;

  /// Precondition: d >= 1.
  static FastDivisor make(uint32_t d) {
    uint32_t l = 0;
    while ((uint64_t(1) << l) < d) ++l;
    const uint64_t m = ((uint64_t(1) << 32) * ((uint64_t(1) << l) - d)) / d + 1;
    return {d, static_cast<uint32_t>(m), l};
  }

  LATTICA_HD_INLINE uint32_t divide(uint32_t n) const {
#if defined(__CUDA_ARCH__)
    const uint32_t high = __umulhi(n, multiplier);
#else
    const auto high = static_cast<uint32_t>((uint64_t(n) * multiplier) >> 32);
#endif
    return static_cast<uint32_t>((uint64_t(high) + n) >> shift);
  }
};

}  // namespace lattica
