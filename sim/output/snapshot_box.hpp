#pragma once
// A decomposed run's snapshot boxes in a frame of /snapshots/configuration: where a box goes,
// and, with parallel HDF5, every rank writing its own box into the frame collectively.

#include <cstdint>
#include <string>
#include <vector>

#include "sim/output/h5_id.hpp"

namespace lattica {

class Communicator;

/// Where a box of the lattice lies in one frame of /snapshots/configuration: start and count
/// along the frame's axes ([replicas,] the lattice's, the last in bytes when bit-packed [,
/// components]).
struct FrameBlock {
  std::vector<hsize_t> start, count;
};

/// The block of the sites x_a = origin[a] + i_a, i_a < extents[a] (a box; the last axis whole)
/// of every replica in a frame of `set`, the snapshot dataset of a lattice of extents `dims`
/// with `replicas` replicas.
FrameBlock snapshot_box_block(hid_t set, const std::vector<int64_t>& dims, int replicas,
                              const std::vector<int64_t>& origin,
                              const std::vector<int64_t>& extents);

/// Chunks of /snapshots/configuration for frames of shape `row` whose boxes have the extents
/// `box` (the lattice's axes; empty: the whole lattice): one frame's box, all replicas and
/// components, halved along the leading axes to at most 64 MiB.
std::vector<hsize_t> snapshot_chunk(const std::vector<hsize_t>& row,
                                    const std::vector<int64_t>& box, int replicas,
                                    size_t element_bytes);

/// Whether this build writes a decomposed run's snapshots collectively (parallel HDF5 over
/// MPI-IO) rather than a box at a time through rank 0.
bool collective_snapshots_built();

/// Collective over `ranks` (every rank calls it with its own box): opens the output file at
/// `path` with the MPI-IO driver and writes this rank's box (replica-major, lexicographic over
/// the box, in the snapshot format) into frame `row`, the last, of /snapshots/configuration with
/// one collective transfer, then closes the file. Nothing but the box's bytes changes: rank 0
/// appended the frame, whose chunks have their place in the file (allocated early,
/// snapshot_chunks_placed_early). Throws HdfError when a call fails, the dataset has other than
/// row + 1 frames, or HDF5 did not transfer the box collectively (naming its reason).
/// Preconditions: collective_snapshots_built(), ranks.mpi_comm() not null, no process holds the
/// file open.
void write_snapshot_frame_collectively(const std::string& path, int64_t row,
                                       const std::vector<int64_t>& dims, int replicas,
                                       const std::vector<int64_t>& origin,
                                       const std::vector<int64_t>& extents, const void* box,
                                       const Communicator& ranks);

}  // namespace lattica
