#pragma once
// Vectors of 32-bit lanes for the CPU backend's word-parallel kernels (the multi-spin-coded
// Ising update, kernels/models/ising_packed_lanes.hpp): GCC and Clang vector extensions, so the
// bit operations become SSE2, AVX2 or NEON instructions. The one operation the extensions do not
// express well, Philox's 32 x 32 -> 64-bit products (GCC multiplies 64-bit lanes in full), is
// written with x86 intrinsics on x86-64 and lane by lane elsewhere (GenericLanes).
//
// run_cpu_lanes picks the widest lanes the CPU has: Avx2Lanes (8 words) where the CPU runs AVX2,
// whatever the build's target, else Sse2Lanes (4 words, every x86-64) or GenericLanes. Under GCC
// the AVX2 code is compiled by its target pragma into one function per kernel (flatten), into
// which the kernel's templates, compiled for the build's target, are inlined; their vector
// operations then become AVX2 instructions, except two things GCC settles before inlining: a
// vector built from a scalar is built lane by lane, and a 32-byte vector passed by value changes
// the calling convention. So the kernels pass vectors by reference and build them from scalars
// with Lanes::splat, outside their inner loops. Every lane type gives the same bits. Host code
// only: nvcc never includes this header.

#include <cstdint>
#include <cstring>

#include "kernels/rng/philox.hpp"

#if defined(__x86_64__) && defined(__SSE2__)
#include <immintrin.h>
#define LATTICA_CPU_LANES_SSE2 1
#if defined(__AVX2__) || (defined(__GNUC__) && !defined(__clang__))
#define LATTICA_CPU_LANES_AVX2 1  // in the build's target, or by GCC's target pragma
#endif
#endif

namespace lattica {

/// v = the words p[0 .. lanes - 1] (any alignment).
template <class Words>
inline void load_lanes(const uint32_t* p, Words& v) {
  std::memcpy(&v, p, sizeof v);
}

/// p[0 .. lanes - 1] = v.
template <class Words>
inline void store_lanes(const Words& v, uint32_t* p) {
  std::memcpy(p, &v, sizeof v);
}

/// out = the number of set bits of each lane of v (bit operations only: no per-lane popcount
/// instruction before AVX-512).
template <class Words>
inline void popcount_lanes(const Words& v, Words& out) {
  Words x = v - ((v >> 1) & 0x55555555u);
  x = (x & 0x33333333u) + ((x >> 2) & 0x33333333u);
  x = (x + (x >> 4)) & 0x0f0f0f0fu;
  x += x >> 8;
  out = (x + (x >> 16)) & 0x3fu;
}

/// Lanes of any target, each operation written lane by lane or with plain vector operators (the
/// compiler vectorises what it can): the portable fallback, and the reference the tests hold
/// the x86 lanes to.
struct GenericLanes {
  static constexpr int kWords = 4;
  using Words = uint32_t __attribute__((vector_size(4 * kWords)));

  /// 64-bit lanes of the same size, each holding a word in its low half (philox_lanes).
  using Pairs = uint64_t __attribute__((vector_size(4 * kWords)));

  /// lo = the 64-bit products of m and the low halves of a's lanes, hi = lo >> 32 (the MulHiLo
  /// of philox4x32_round on Pairs: the high halves of a, hi and lo play no part).
  struct MulPairs {
    void operator()(uint32_t m, const Pairs& a, Pairs& hi, Pairs& lo) const {
      for (int j = 0; j < kWords / 2; ++j) lo[j] = uint64_t(m) * static_cast<uint32_t>(a[j]);
      hi = lo >> 32;
    }
  };

  /// v = x in every lane (Words or Pairs).
  template <class V, class T>
  static void splat(T x, V& v) {
    v = V{} + x;
  }

  /// Whether any bit of v is set.
  static bool any(const Words& v) {
    uint32_t bits = 0;
    for (int j = 0; j < kWords; ++j) bits |= v[j];
    return bits != 0;
  }

  /// out[j] = v[j + 1], and `in` in the last lane.
  static void after(const Words& v, uint32_t in, Words& out) {
    for (int j = 0; j + 1 < kWords; ++j) out[j] = v[j + 1];
    out[kWords - 1] = in;
  }

  /// out[j] = v[j - 1], and `in` in the first lane.
  static void before(const Words& v, uint32_t in, Words& out) {
    for (int j = kWords - 1; j > 0; --j) out[j] = v[j - 1];
    out[0] = in;
  }

  /// In every group of `run` lanes (run = 1, 2 or 4 dividing kWords), out's lane i = v's lane
  /// i + 1 (step 1) or i - 1 (step -1) of the group, wrapped.
  static void rotate_runs(const Words& v, int run, int step, Words& out) {
    for (int j = 0; j < kWords; ++j) out[j] = v[j - j % run + (j % run + step + run) % run];
  }
};

#if defined(LATTICA_CPU_LANES_SSE2)
/// Lanes of SSE2: 4 words, one 128-bit register (the members are GenericLanes's).
struct Sse2Lanes {
  static constexpr int kWords = 4;
  using Words = uint32_t __attribute__((vector_size(4 * kWords)));

  using Pairs = uint64_t __attribute__((vector_size(4 * kWords)));

  struct MulPairs {
    void operator()(uint32_t m, const Pairs& a, Pairs& hi, Pairs& lo) const {
      lo = (Pairs)_mm_mul_epu32((__m128i)a, _mm_set1_epi32(static_cast<int>(m)));
      hi = lo >> 32;
    }
  };

  static void splat(uint32_t x, Words& v) { v = (Words)_mm_set1_epi32(static_cast<int>(x)); }
  static void splat(uint64_t x, Pairs& v) { v = (Pairs)_mm_set1_epi64x(static_cast<long long>(x)); }

  static bool any(const Words& v) {
    return _mm_movemask_epi8(_mm_cmpeq_epi32((__m128i)v, _mm_setzero_si128())) != 0xffff;
  }

  static void after(const Words& v, uint32_t in, Words& out) {
    out = (Words)_mm_or_si128(_mm_srli_si128((__m128i)v, 4),
                              _mm_slli_si128(_mm_cvtsi32_si128(static_cast<int>(in)), 12));
  }

  static void before(const Words& v, uint32_t in, Words& out) {
    out =
        (Words)_mm_or_si128(_mm_slli_si128((__m128i)v, 4), _mm_cvtsi32_si128(static_cast<int>(in)));
  }

  static void rotate_runs(const Words& v, int run, int step, Words& out) {
    const __m128i x = (__m128i)v;
    out = run == 1   ? v
          : run == 2 ? (Words)_mm_shuffle_epi32(x, 0xb1)
          : step > 0 ? (Words)_mm_shuffle_epi32(x, 0x39)
                     : (Words)_mm_shuffle_epi32(x, 0x93);
  }
};
#endif

/// The ten round keys of a Philox key in vectors (philox_lanes).
template <class Lanes>
struct PhiloxLaneKeys {
  typename Lanes::Pairs x[10], y[10];

  explicit PhiloxLaneKeys(PhiloxKey key) {
    for (int round = 0; round < 10; ++round) {
      const PhiloxKey k = philox_round_key(key, round);
      Lanes::splat(uint64_t{k.x}, x[round]);
      Lanes::splat(uint64_t{k.y}, y[round]);
    }
  }
};

/// Philox4x32-10 of every lane's counter (u = x, y, z, w, one counter per lane) in place, with
/// one key: the rounds on the even lanes and on the odd ones, each word in the low half of a
/// 64-bit lane, where one multiply instruction gives both words of a product.
template <class Lanes>
inline void philox_lanes(typename Lanes::Words (&u)[4], const PhiloxLaneKeys<Lanes>& keys) {
  using Pairs = typename Lanes::Pairs;
  Pairs even[4], odd[4];
  for (int c = 0; c < 4; ++c) {
    even[c] = (Pairs)u[c];
    odd[c] = (Pairs)u[c] >> 32;
  }
  const typename Lanes::MulPairs mul{};
  for (int round = 0; round < 10; ++round) {
    philox4x32_round(even[0], even[1], even[2], even[3], keys.x[round], keys.y[round], mul);
    philox4x32_round(odd[0], odd[1], odd[2], odd[3], keys.x[round], keys.y[round], mul);
  }
  for (int c = 0; c < 4; ++c) {
    u[c] = (typename Lanes::Words)((even[c] & 0xffffffffu) | (odd[c] << 32));
  }
}

#if defined(LATTICA_CPU_LANES_AVX2)
#if !defined(__AVX2__)
#pragma GCC push_options
#pragma GCC target("avx2")
#endif

/// Lanes of AVX2: 8 words, one 256-bit register (the members are GenericLanes's). Only for code
/// that runs where the CPU has AVX2 (run_cpu_lanes).
struct Avx2Lanes {
  static constexpr int kWords = 8;
  using Words = uint32_t __attribute__((vector_size(4 * kWords)));

  using Pairs = uint64_t __attribute__((vector_size(4 * kWords)));

  struct MulPairs {
    void operator()(uint32_t m, const Pairs& a, Pairs& hi, Pairs& lo) const {
      lo = (Pairs)_mm256_mul_epu32((__m256i)a, _mm256_set1_epi32(static_cast<int>(m)));
      hi = lo >> 32;
    }
  };

  static void splat(uint32_t x, Words& v) { v = (Words)_mm256_set1_epi32(static_cast<int>(x)); }
  static void splat(uint64_t x, Pairs& v) {
    v = (Pairs)_mm256_set1_epi64x(static_cast<long long>(x));
  }

  static bool any(const Words& v) { return !_mm256_testz_si256((__m256i)v, (__m256i)v); }

  static void after(const Words& v, uint32_t in, Words& out) {
    const __m256i shifted =
        _mm256_permutevar8x32_epi32((__m256i)v, _mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 0));
    out = (Words)_mm256_blend_epi32(shifted, _mm256_set1_epi32(static_cast<int>(in)), 0x80);
  }

  static void before(const Words& v, uint32_t in, Words& out) {
    const __m256i shifted =
        _mm256_permutevar8x32_epi32((__m256i)v, _mm256_setr_epi32(0, 0, 1, 2, 3, 4, 5, 6));
    out = (Words)_mm256_blend_epi32(shifted, _mm256_set1_epi32(static_cast<int>(in)), 0x01);
  }

  static void rotate_runs(const Words& v, int run, int step, Words& out) {
    const __m256i x = (__m256i)v;
    out = run == 1   ? v
          : run == 2 ? (Words)_mm256_shuffle_epi32(x, 0xb1)
          : step > 0 ? (Words)_mm256_shuffle_epi32(x, 0x39)
                     : (Words)_mm256_shuffle_epi32(x, 0x93);
  }
};

/// f.template run<Avx2Lanes>(i), everything it calls compiled into this function for AVX2.
template <class F>
__attribute__((flatten)) auto run_avx2_lanes(const F& f, int64_t i) {
  return f.template run<Avx2Lanes>(i);
}

#if !defined(__AVX2__)
#pragma GCC pop_options
#endif
#endif

#if defined(LATTICA_CPU_LANES_SSE2)
using BaseLanes = Sse2Lanes;  ///< the lanes every CPU of the build's target has
#else
using BaseLanes = GenericLanes;
#endif

/// Whether this CPU (and its operating system) runs AVX2 code.
inline bool cpu_has_avx2() {
#if defined(__AVX2__)
  return true;
#elif defined(LATTICA_CPU_LANES_AVX2)
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
#else
  return false;
#endif
}

/// f.template run<Lanes>(i) with the widest lanes this CPU has (f computes the same bits with
/// every lane type).
template <class F>
auto run_cpu_lanes(const F& f, int64_t i) {
#if defined(LATTICA_CPU_LANES_AVX2)
  if (cpu_has_avx2()) return run_avx2_lanes(f, i);
#endif
  return f.template run<BaseLanes>(i);
}

}  // namespace lattica
