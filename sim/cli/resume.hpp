#pragma once
// --resume: how each point of the plan continues, decided before anything is written.

#include <cstdint>

#include "sim/checkpoint.hpp"
#include "sim/communicator.hpp"
#include "sim/config.hpp"

namespace lattica::cli {

/// How a point of the plan starts.
enum class PointStart : int8_t { fresh, resume, skip };

/// The checkpoint a --resume continues from, checked against the input; InputError (exit 2,
/// nothing touched) when there is none or it belongs to another chain.
Checkpoint checkpoint_to_resume(const Config& config);

/// The same for a multicanonical point: its checkpoint, checked against the input.
MulticanonicalCheckpoint multicanonical_checkpoint_to_resume(const Config& config);

/// A decomposed checkpoint's configuration (collective): this rank's box with its ghost layers,
/// or the whole lattice when alone, read from the parts into c.engine; nothing for a single-file
/// checkpoint. InputError on every rank when one rank cannot read its box.
void read_resumed_configuration(Checkpoint& c, const Config& config, Communicator& world);

/// How --resume continues one point, decided by rank 0 while it holds the point's lock: from
/// its checkpoint; not at all when it is finished; from the start when it is a point of a sweep
/// that never got to it. InputError (exit 2, nothing touched) when it cannot continue.
PointStart resume_start(const Config& config, bool sweep);

}  // namespace lattica::cli
