#pragma once
// A multicanonical run on a walker ensemble: the Wang-Landau phase, then thermalization and
// production with the weights frozen.

#include <cstdint>
#include <functional>
#include <vector>

#include "sim/checkpoint.hpp"
#include "sim/config.hpp"
#include "sim/engine/multicanonical/walker_ensemble.hpp"
#include "sim/output/multicanonical_output.hpp"

namespace lattica {

/// The walker settings of a multicanonical configuration.
WalkerSettings walker_settings(const Config& config);

/// The total energy of every bin: exact for Ising and Potts (bin k: k satisfied bonds), the
/// bins' centres for O(n) and phi^4 (NaN for the bins below and above the window).
std::vector<double> muca_bin_energies(const Config& config);

/// Runs the whole multicanonical chain of `config` on `walkers` (built from
/// walker_settings(config)); progress lines on stderr unless quiet.
MulticanonicalRecord run_multicanonical(const Config& config, WalkerEnsemble& walkers, bool quiet);

/// Where a multicanonical run may stop: after each Wang-Landau iteration, thermalization chunk
/// and measurement, with the walkers' sweeps before and after it, whether it was the run's last,
/// and the maker of that moment's checkpoint. Returns true to stop there.
using MulticanonicalStep =
    std::function<bool(uint64_t previous, uint64_t done, bool last,
                       const std::function<MulticanonicalCheckpoint()>& checkpoint)>;

/// The same chain, continued from `resume` (null: from the start), calling `step` (when set)
/// at every point where it may stop. *stopped says whether it stopped there; the record is
/// then unfinished. Continuing from a checkpoint gives the uninterrupted run's chain.
MulticanonicalRecord run_multicanonical(const Config& config, WalkerEnsemble& walkers, bool quiet,
                                        const MulticanonicalCheckpoint* resume,
                                        const MulticanonicalStep& step, bool* stopped);

}  // namespace lattica
