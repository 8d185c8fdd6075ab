#pragma once
// A multicanonical run on a walker ensemble: the Wang-Landau phase, then thermalization and
// production with the weights frozen.

#include "sim/config.hpp"
#include "sim/engine/multicanonical/walker_ensemble.hpp"
#include "sim/output/multicanonical_output.hpp"

namespace lattica {

/// The walker settings of a multicanonical configuration.
WalkerSettings walker_settings(const Config& config);

/// The total energy of bin k (k satisfied bonds of `bonds`): Ising dV - 2k, Potts -k.
int64_t muca_energy(bool ising, int64_t bonds, int64_t k);

/// Runs the whole multicanonical chain of `config` on `walkers` (built from
/// walker_settings(config)); progress lines on stderr unless quiet.
MulticanonicalRecord run_multicanonical(const Config& config, WalkerEnsemble& walkers, bool quiet);

}  // namespace lattica
