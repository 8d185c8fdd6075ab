#pragma once
// The index of a parameter sweep: which point ran with which parameters into which file.

#include <string>

#include "sim/config.hpp"

namespace lattica {

/// Writes plan.index_path (JSON, schema "lattica-index/1") atomically: a temporary file renamed
/// into place, so array jobs writing the same index concurrently never leave a torn file.
/// Throws std::runtime_error on I/O failure.
void write_sweep_index(const RunPlan& plan);

}  // namespace lattica
