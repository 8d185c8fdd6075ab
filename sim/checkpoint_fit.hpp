#pragma once
// Whether a checkpoint can continue the run an input describes (--resume), beyond its checksum.

#include <string>

#include "sim/checkpoint.hpp"

namespace lattica {

struct Config;

/// Checks that checkpoint `c`, read from `path`, can continue the run `config` describes: its
/// counts agree with the run's schedule at its sweep, and its configuration has the lattice's
/// size and holds only states the model reaches (Ising +-1, Potts 0 .. q-1, unit O(n) vectors,
/// finite phi^4 values). Throws CheckpointError naming everything that is wrong.
void check_checkpoint_fits(const Checkpoint& c, const Config& config, const std::string& path);

}  // namespace lattica
