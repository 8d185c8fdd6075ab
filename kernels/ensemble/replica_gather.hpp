#pragma once
// Copies whole replicas within a configuration (population annealing's resampling): replica r of
// the result is replica source[r] of the old configuration. One description for both backends;
// each replica is `units` consecutive storage units (sites, or words of packed spins).

#include <cstdint>

#include "kernels/common/host_device.hpp"

namespace lattica {

/// to[r * units + j] = from[source[r] * units + j] over i = r * units + j. Precondition: to and
/// from do not overlap, every source[r] is a replica.
template <class Unit>
struct GatherReplicas {
  const Unit* from;
  Unit* to;
  const int32_t* source;  ///< [replica], in the backend's memory
  int64_t units;          ///< per replica

  LATTICA_HD_INLINE void operator()(int64_t i) const {
    const int64_t r = i / units;
    to[i] = from[static_cast<int64_t>(source[r]) * units + (i - r * units)];
  }
};

/// to[i] = from[i]: the gathered replicas back into the storage.
template <class Unit>
struct CopyUnits {
  const Unit* from;
  Unit* to;

  LATTICA_HD_INLINE void operator()(int64_t i) const { to[i] = from[i]; }
};

}  // namespace lattica
