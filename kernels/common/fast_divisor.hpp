#pragma once
// Division of unsigned integers by a divisor fixed at launch time, by a multiply-high and shifts
// instead of the GPU's long division sequence (Granlund and Montgomery, PLDI 1994), exact for
// every n. 32 bits: n / d = (umulhi(n, m) + n) >> l with l = ceil(log2 d) and
// m = floor(2^32 (2^l - d) / d) + 1, the sum taken in 64 bits. 64 bits, where that sum would
// overflow: t = umulhi(n, m), n / d = (t + ((n - t) >> min(l, 1))) >> max(l - 1, 0).

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

/// floor(a * b / 2^64), exactly, on host and device.
LATTICA_HD_INLINE uint64_t multiply_high(uint64_t a, uint64_t b) {
#if defined(__CUDA_ARCH__)
  return __umul64hi(a, b);
#else
  return static_cast<uint64_t>((static_cast<unsigned __int128>(a) * b) >> 64);
#endif
}

/// The same for 64-bit n (a lattice's site indices may pass 2^32): a 64-bit division is a long
/// subroutine on the GPU, this a multiply-high, a subtraction and three shifts or adds.
struct FastDivisor64 {
  uint64_t divisor;
  uint64_t multiplier;
  uint32_t shift1;
  uint32_t shift2;

  /// Precondition: d >= 1.
  static FastDivisor64 make(uint64_t d) {
    uint32_t l = 0;
    while (l < 64 && (uint64_t(1) << l) < d) ++l;
    using U128 = unsigned __int128;
    const U128 numerator = (U128(1) << 64) * ((U128(1) << l) - d);
    return {d, static_cast<uint64_t>(numerator / d + 1), l > 0 ? 1u : 0u, l > 0 ? l - 1 : 0u};
  }

  LATTICA_HD_INLINE uint64_t divide(uint64_t n) const {
    const uint64_t t = multiply_high(n, multiplier);
    return (t + ((n - t) >> shift1)) >> shift2;
  }
  /// For the non-negative signed indices of the lattice code.
  LATTICA_HD_INLINE int64_t divide(int64_t n) const {
    return static_cast<int64_t>(divide(static_cast<uint64_t>(n)));
  }
};

}  // namespace lattica
