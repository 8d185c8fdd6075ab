#pragma once
// Counter-based Philox4x32-10: the only source of randomness in a Lattica chain.
//
// Key     = the 64-bit run seed (low word first), exactly as curand_init(seed, ...) keys it.
// Counter = (step low, step high, site low, site bits 32-39 | stream << 8 | replica << 16).
// This is the layout curand_init(seed, subsequence = site | stream << 40 | replica << 48,
// offset = 4 * step) produces, so the cuRAND device API and the host implementation name the
// same numbers.
// No generator state exists anywhere: a number is a pure function of (seed, stream, site, step).

#include <cstdint>

#include "kernels/common/fast_divisor.hpp"  // multiply_high
#include "kernels/common/host_device.hpp"

#if defined(__CUDACC__)
#include <curand_kernel.h>
#endif

namespace lattica {

/// Independent random streams. Appending is allowed; renumbering changes every chain.
enum class RngStream : uint32_t {
  site_update = 0,    ///< per-site Monte Carlo moves, step = update_step(sweep, pass, draw)
  initial_state = 1,  ///< hot start, step = 0
  mala_accept = 2,    ///< a whole-lattice proposal's accept/reject, site = 0, step as site_update
  cluster_bond = 3,   ///< a site's bonds to its +e_a neighbours and to the ghost spin,
                      ///< step = update_step(sweep, pass, 2 * cluster)
  cluster_move = 4,   ///< a cluster's new state, site = its canonical label - 1 (one-bit moves:
                      ///< (label - 1) / 128, bit (label - 1) % 128), step as cluster_bond
  cluster_pick = 5,   ///< a cluster pass's seed site and embedding direction, site = 0, same step
  replica_exchange = 6,  ///< parallel tempering: replica = ladder, site = rung pair, step = sweep
  multicanonical = 7,    ///< multicanonical walkers: replica = walker, site = site,
                         ///< step = update_step(sweep, 0, 0)
  population_resampling = 8,  ///< population annealing: replica = population, site = draw,
                              ///< step = annealing step
  test = 0xFF,                ///< reserved for tests
};

/// Step word of a site update's counter: the sweep, the pass within the sweep's update sequence
/// and the draw (Philox block) within one site update, so a move may use many random numbers.
constexpr int kRngDrawBits = 16;
constexpr int kRngPassBits = 4;
constexpr uint64_t kMaxRngDraws = uint64_t(1) << kRngDrawBits;  ///< blocks per site update
constexpr uint32_t kMaxUpdatePasses = 1u << kRngPassBits;       ///< passes per sweep
constexpr uint64_t kMaxSweeps = uint64_t(1) << (64 - kRngDrawBits - kRngPassBits);  ///< 2^44

LATTICA_HD_INLINE uint64_t update_step(uint64_t sweep, uint32_t pass, uint32_t draw) {
  return (sweep << (kRngDrawBits + kRngPassBits)) | (uint64_t(pass) << kRngDrawBits) | draw;
}

/// Sites are named by their global lexicographic index, which must stay below 2^40.
constexpr uint64_t kMaxRngSites = uint64_t(1) << 40;
/// Independent replicas of one chain are numbered 0 .. kMaxReplicas - 1.
constexpr uint32_t kMaxReplicas = 1u << 16;

struct PhiloxCounter {
  uint32_t x, y, z, w;
};
struct PhiloxKey {
  uint32_t x, y;
};
struct PhiloxBlock {
  uint32_t x, y, z, w;
};

/// Key for a run seed.
LATTICA_HD_INLINE PhiloxKey philox_key(uint64_t seed) {
  return {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)};
}

/// Counter for (stream, replica, site, step). Preconditions: site < kMaxRngSites,
/// replica < kMaxReplicas.
LATTICA_HD_INLINE PhiloxCounter philox_counter(RngStream stream, uint32_t replica, uint64_t site,
                                               uint64_t step) {
  return {
      static_cast<uint32_t>(step), static_cast<uint32_t>(step >> 32), static_cast<uint32_t>(site),
      static_cast<uint32_t>(site >> 32) | (static_cast<uint32_t>(stream) << 8) | (replica << 16)};
}

/// 32 x 32 -> 64-bit products as their high and low words, for philox4x32_round on uint32_t.
struct ScalarMulHiLo {
  LATTICA_HD_INLINE void operator()(uint32_t m, const uint32_t& a, uint32_t& hi,
                                    uint32_t& lo) const {
    const uint64_t p = uint64_t(m) * a;
    hi = static_cast<uint32_t>(p >> 32);
    lo = static_cast<uint32_t>(p);
  }
};

/// The key of Philox round `round` (0-9): the Weyl key schedule.
LATTICA_HD_INLINE PhiloxKey philox_round_key(PhiloxKey k, int round) {
  const auto r = static_cast<uint32_t>(round);
  return {k.x + 0x9E3779B9u * r, k.y + 0xBB67AE85u * r};
}

/// One round of Philox4x32 (Salmon et al., SC'11) on the counter words (x, y, z, w), in place,
/// with the round's key (kx, ky). W is uint32_t, or a host vector of lanes holding several
/// counters (kernels/backend/cpu_lanes.hpp), with K likewise; mul(m, a, hi, lo) sets the high
/// and low words of m * a.
template <class W, class K, class MulHiLo>
LATTICA_HD_INLINE void philox4x32_round(W& x, W& y, W& z, W& w, const K& kx, const K& ky,
                                        const MulHiLo& mul) {
  W hi0, lo0, hi1, lo1;
  mul(0xD2511F53u, x, hi0, lo0);
  mul(0xCD9E8D57u, z, hi1, lo1);
  x = hi1 ^ y ^ kx;
  y = lo1;
  z = hi0 ^ w ^ ky;
  w = lo0;
}

/// Philox4x32-10 on the host. Tests check it against Random123 and, on a GPU, against cuRAND.
inline PhiloxBlock philox4x32_10_host(PhiloxCounter c, PhiloxKey k) {
  for (int round = 0; round < 10; ++round) {
    const PhiloxKey key = philox_round_key(k, round);
    philox4x32_round(c.x, c.y, c.z, c.w, key.x, key.y, ScalarMulHiLo{});
  }
  return {c.x, c.y, c.z, c.w};
}

/// One Philox4x32-10 block: the cuRAND device API on the GPU, the host version on the CPU.
LATTICA_HD_INLINE PhiloxBlock philox4x32_10(PhiloxCounter c, PhiloxKey k) {
#if defined(__CUDA_ARCH__)
  const uint4 r = curand_Philox4x32_10(make_uint4(c.x, c.y, c.z, c.w), make_uint2(k.x, k.y));
  return {r.x, r.y, r.z, r.w};
#else
  return philox4x32_10_host(c, k);
#endif
}

/// The random words of one site at one step, consumed in order: words 0-3 are Philox block
/// `step`, words 4-7 block `step + 1`, and so on; a site update starts at
/// update_step(sweep, pass, 0), so a move that needs a variable number of words (rejection
/// sampling) may draw up to kMaxRngDraws blocks.
class SiteRandom {
 public:
  LATTICA_HD_INLINE SiteRandom(uint64_t seed, RngStream stream, uint32_t replica, uint64_t site,
                               uint64_t step)
      : key_(philox_key(seed)), counter_(philox_counter(stream, replica, site, step)) {}

  /// The next 32-bit word.
  LATTICA_HD_INLINE uint32_t next() {
    if (used_ == 4) {
      block_ = philox4x32_10(counter_, key_);
      ++counter_.x;  // the draw field is the low bits of the step word
      ++blocks_;
      used_ = 0;
    }
    switch (used_++) {  // a switch, not an indexed array, keeps the block in registers
      case 0:
        return block_.x;
      case 1:
        return block_.y;
      case 2:
        return block_.z;
      default:
        return block_.w;
    }
  }

  /// Philox blocks drawn so far; a move must stop before kMaxRngDraws.
  LATTICA_HD_INLINE uint32_t blocks_drawn() const { return blocks_; }

 private:
  PhiloxKey key_;
  PhiloxCounter counter_;
  PhiloxBlock block_{};
  uint32_t blocks_ = 0;
  int used_ = 4;
};

/// Sites that share one Philox stream in the bit-sliced scheme (LaneRandom): up to 32 sites of
/// one colour, consecutive in checkerboard storage along the last axis.
constexpr int kLanesPerGroup = 32;

/// The random word of one site in a group of up to kLanesPerGroup same-colour sites that share
/// one Philox stream, bit-sliced: the site's uniform 32-bit word u has, as its bits from the
/// most significant down, bit `lane` of the group's successive words. A multi-spin-coded kernel
/// thus draws one word for 32 sites at a time, and a comparison u < t needs the words only up to
/// the first bit where u and t differ (2 bits per site on average, exact at any precision).
class LaneRandom {
 public:
  /// group: the stream of the group's first site; lane: the site's position in the group.
  LATTICA_HD_INLINE LaneRandom(const SiteRandom& group, int lane) : group_(group), lane_(lane) {}

  /// Whether u < threshold, drawing the group's words most significant bit first.
  LATTICA_HD_INLINE bool below(uint32_t threshold) {
    for (int bit = 31; bit >= 0; --bit) {
      const uint32_t u = (group_.next() >> lane_) & 1u;
      const uint32_t t = (threshold >> bit) & 1u;
      if (u != t) return u < t;
    }
    return false;  // u == threshold
  }

  /// Philox blocks drawn so far.
  LATTICA_HD_INLINE uint32_t blocks_drawn() const { return group_.blocks_drawn(); }

 private:
  SiteRandom group_;
  int lane_;
};

/// The first 32 random bits for (seed, stream, replica, site, step).
LATTICA_HD_INLINE uint32_t philox_u32(uint64_t seed, RngStream stream, uint32_t replica,
                                      uint64_t site, uint64_t step) {
  return philox4x32_10(philox_counter(stream, replica, site, step), philox_key(seed)).x;
}

}  // namespace lattica
