#pragma once
// Whether a checkpoint can continue the run an input describes (--resume), beyond its checksum.

#include <cstdint>
#include <string>
#include <vector>

#include "sim/checkpoint.hpp"

namespace lattica {

struct Config;

/// Checks that checkpoint `c`, read from `path`, can continue the run `config` describes: its
/// counts agree with the run's schedule at its sweep, and its configuration has the lattice's
/// size and holds only states the model reaches (Ising +-1, Potts 0 .. q-1, unit O(n) vectors,
/// finite phi^4 values). Throws CheckpointError naming everything that is wrong.
void check_checkpoint_fits(const Checkpoint& c, const Config& config, const std::string& path);

/// Checks the configuration a rank read from a decomposed checkpoint's parts (`sites` sites per
/// replica): only states the model reaches; throws CheckpointError naming the first other one.
void check_region_fits(const std::vector<unsigned char>& region, int64_t sites,
                       const Config& config, const std::string& path);

}  // namespace lattica
