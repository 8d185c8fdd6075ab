#pragma once
// Checkpoints of decomposed runs (issue 22): every rank writes only its box, as a part file of
// plain HDF5 (OUTPUT.checkpoint.parts/GENERATION/part-R.h5, dataset "configuration" of shape
// [replicas, box extents..., site bytes]); once every part is on disk, rank 0 replaces the
// manifest OUTPUT.checkpoint (sim/checkpoint.hpp, with CheckpointParts) atomically and removes
// the older generations. A crash at any moment leaves a manifest whose parts are complete. A
// resume on any number of ranks reads from each part only its overlap with the rank's box. A
// run with the structure factor adds each rank's rows of its running sums to the part (the
// manifest keeps the rest of StructureFactorSums), read back by the rows a rank needs.

#include <cstdint>
#include <string>
#include <vector>

#include "sim/checkpoint.hpp"
#include "sim/communicator.hpp"
#include "sim/decomposition.hpp"

namespace lattica {

/// The folder of the parts of checkpoint `checkpoint` (one folder per generation inside).
std::string checkpoint_parts_folder(const std::string& checkpoint);

/// Writes a decomposed run's checkpoint (collective): each rank its box (c.engine's
/// configuration and region, EngineState), every part on disk before rank 0 writes the manifest
/// to `checkpoint`; c's other contents matter on rank 0 only. Throws CheckpointError on every
/// rank when one rank cannot write its part (the old checkpoint stays).
void write_decomposed_checkpoint(const std::string& checkpoint, Checkpoint c,
                                 const Decomposition& decomposition, int replicas,
                                 Communicator& comm);

/// Removes the parts of `checkpoint` (before a fresh run, after a single file replaced them).
void remove_checkpoint_parts(const std::string& checkpoint);

/// Every replica's configuration of the sites x_a = origin[a] + i_a (modulo the lattice) for
/// i_a < extents[a], lexicographic over that region, read from the parts that manifest `c` (read
/// from `checkpoint`) names, each part only where it overlaps the region. CheckpointError (or
/// HdfError) when a part is missing, damaged or of another shape.
std::vector<unsigned char> read_checkpoint_region(const std::string& checkpoint,
                                                  const Checkpoint& c,
                                                  const std::vector<int64_t>& origin,
                                                  const std::vector<int64_t>& extents);

/// Rows first_row .. first_row + rows - 1 of axis 0 of the structure factor's running sums
/// (power_sum, power_squares) into `sums`, from the parts that manifest `c` names (each holds
/// the rows of its rank's slab). CheckpointError (or HdfError) when a part needed is missing,
/// lacks them or holds another number of rows.
void read_checkpoint_spectrum_rows(const std::string& checkpoint, const Checkpoint& c,
                                   int64_t first_row, int64_t rows, StructureFactorSums& sums);

}  // namespace lattica
