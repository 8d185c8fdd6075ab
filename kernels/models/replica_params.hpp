#pragma once
// The couplings of every replica of one launch. Most runs give all replicas the same Params
// (passed by value, as before); parallel tempering gives each replica slot its rung's: a table
// of the rungs' Params and the rung of every slot, both in the backend's memory, where the
// exchange step permutes the rungs among the slots (sim/engine/tempering.hpp) without copying
// any Params. Either way the per-site physics reads one Params, so the models stay written
// once for both backends. The seed is the run's, the same for every replica (every rung's
// Params are built from the one seed): kernels take it from seed(), never from a table entry,
// so the random streams' keys do not wait for a table load and the compiler can derive the
// Philox round keys once per thread.

#include <cstdint>

#include "kernels/common/host_device.hpp"

namespace lattica {

/// Params of replica r: table[rung_of[r]] when there is a table, else the shared set. Trivially
/// copyable, passed to kernels by value; the table (if any) lives in the backend's memory.
/// Kernels read them through with(), whose two branches each name one memory statically: a
/// pointer that may point at either would make the device copy the kernel's parameters to
/// local memory.
template <class Params>
struct ReplicaParams {
  Params shared;                     ///< every replica's when table is null; its seed always is
  const Params* table = nullptr;     ///< [rung], or null
  const int32_t* rung_of = nullptr;  ///< [replica]: its entry of the table (with a table)

  ReplicaParams() = default;
  /// Implicit from one Params: every replica the same (the run without tempering).
  LATTICA_HD ReplicaParams(const Params& params, const Params* rungs = nullptr,
                           const int32_t* rung_of_replica = nullptr)
      : shared(params), table(rungs), rung_of(rung_of_replica) {}

  /// f(replica's Params).
  template <class F>
  LATTICA_HD_INLINE auto with(int64_t replica, const F& f) const {
    return table ? f(table[rung_of[replica]]) : f(shared);
  }
  /// Every replica's seed.
  LATTICA_HD_INLINE uint64_t seed() const { return shared.seed; }
};

/// Every replica's couplings the same, read from the kernel's parameters: what the per-site
/// functors launch with outside tempering. ReplicaParams' runtime choice inlines the physics
/// once per branch, which made untempered phi^4 updates 4-5 % slower.
template <class Params>
struct SharedParams {
  Params shared;
  template <class F>
  LATTICA_HD_INLINE auto with(int64_t, const F& f) const {
    return f(shared);
  }
  LATTICA_HD_INLINE uint64_t seed() const { return shared.seed; }
};

/// Each replica its rung's couplings, from the table in the backend's memory (tempering); the
/// seed, every replica's, from the kernel's parameters: read from the table, it put a load
/// before every thread's first Philox block and, in the tempered Ising update's PTX, the round
/// keys' additions into every block drawn.
template <class Params>
struct TableParams {
  const Params* table;     ///< [rung]
  const int32_t* rung_of;  ///< [replica]
  uint64_t run_seed;
  template <class F>
  LATTICA_HD_INLINE auto with(int64_t replica, const F& f) const {
    return f(table[rung_of[replica]]);
  }
  LATTICA_HD_INLINE uint64_t seed() const { return run_seed; }
};

/// launch(SharedParams) or launch(TableParams), as `params` has a table or not: a per-site
/// functor templated on its couplings is instantiated twice and reads either with no branch.
template <class Params, class Launch>
void launch_with_couplings(const ReplicaParams<Params>& params, const Launch& launch) {
  if (params.table) {
    launch(TableParams<Params>{params.table, params.rung_of, params.shared.seed});
  } else {
    launch(SharedParams<Params>{params.shared});
  }
}

}  // namespace lattica
