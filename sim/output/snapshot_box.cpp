#include "sim/output/snapshot_box.hpp"

#include <stdexcept>

#include "sim/communicator.hpp"
#include "sim/output/hdf5.hpp"

namespace lattica {

FrameBlock snapshot_box_block(hid_t set, const std::vector<int64_t>& dims, int replicas,
                              const std::vector<int64_t>& origin,
                              const std::vector<int64_t>& extents) {
  // The frame's axes: [replicas,] the lattice's (the last in bytes when bit-packed)
  // [, components], as the output made them.
  H5Id space(H5_CHECK(H5Dget_space(set)), H5Sclose);
  std::vector<hsize_t> frame(
      static_cast<size_t>(H5_CHECK(H5Sget_simple_extent_ndims(space.get()))));
  H5_CHECK(H5Sget_simple_extent_dims(space.get(), frame.data(), nullptr));
  frame.erase(frame.begin());  // the frames' axis
  FrameBlock b;
  if (replicas > 1) {
    b.start.push_back(0);
    b.count.push_back(static_cast<hsize_t>(replicas));
  }
  for (size_t a = 0; a < dims.size(); ++a) {
    b.start.push_back(static_cast<hsize_t>(origin[a]));
    b.count.push_back(static_cast<hsize_t>(extents[a]));
  }
  const hsize_t packing = static_cast<hsize_t>(dims.back()) / frame[b.start.size() - 1];
  b.start.back() /= packing;  // 1, or 8 sites a byte
  b.count.back() /= packing;
  for (size_t a = b.start.size(); a < frame.size(); ++a) {  // the components
    b.start.push_back(0);
    b.count.push_back(frame[a]);
  }
  return b;
}

std::vector<hsize_t> snapshot_chunk(const std::vector<hsize_t>& row,
                                    const std::vector<int64_t>& box, int replicas,
                                    size_t element_bytes) {
  std::vector<hsize_t> chunk{1};
  chunk.insert(chunk.end(), row.begin(), row.end());
  // A box's chunk: its leading axes (the last is never split, so its bytes stay the row's).
  const size_t first = replicas > 1 ? 2 : 1;
  for (size_t a = 0; a + 1 < box.size(); ++a) chunk[first + a] = static_cast<hsize_t>(box[a]);
  // At most 64 MiB (HDF5 caps a chunk at 4 GiB, and smaller chunks keep partial reads cheap).
  auto bytes = [&] {
    hsize_t b = element_bytes;
    for (hsize_t c : chunk) b *= c;
    return b;
  };
  for (size_t axis = 1; axis < chunk.size() && bytes() > (hsize_t(64) << 20); ++axis) {
    while (chunk[axis] > 1 && bytes() > (hsize_t(64) << 20)) chunk[axis] = (chunk[axis] + 1) / 2;
  }
  return chunk;
}

#ifdef LATTICA_PARALLEL_HDF5

bool collective_snapshots_built() { return true; }

namespace {

/// HDF5's reasons for not transferring collectively (H5Pget_mpio_no_collective_cause bits).
std::string no_collective_causes(uint32_t causes) {
  const std::pair<uint32_t, const char*> names[] = {
      {H5D_MPIO_SET_INDEPENDENT, "independent transfer asked for"},
      {H5D_MPIO_DATATYPE_CONVERSION, "datatype conversion"},
      {H5D_MPIO_DATA_TRANSFORMS, "data transforms"},
      {H5D_MPIO_MPI_OPT_TYPES_ENV_VAR_DISABLED, "MPI derived types disabled"},
      {H5D_MPIO_NOT_SIMPLE_OR_SCALAR_DATASPACES, "not simple dataspaces"},
      {H5D_MPIO_NOT_CONTIGUOUS_OR_CHUNKED_DATASET, "neither contiguous nor chunked"},
      {H5D_MPIO_PARALLEL_FILTERED_WRITES_DISABLED, "filtered writes disabled"},
      {H5D_MPIO_ERROR_WHILE_CHECKING_COLLECTIVE_POSSIBLE, "error while checking"}};
  std::string text;
  for (const auto& [bit, name] : names) {
    if (causes & bit) text += (text.empty() ? "" : ", ") + std::string(name);
  }
  return text.empty() ? "no cause given" : text;
}

/// Throws unless the extendable dataset `set` has `rows` rows.
void expect_rows(hid_t set, int64_t rows) {
  H5Id space(H5_CHECK(H5Dget_space(set)), H5Sclose);
  std::vector<hsize_t> size(static_cast<size_t>(H5_CHECK(H5Sget_simple_extent_ndims(space.get()))));
  H5_CHECK(H5Sget_simple_extent_dims(space.get(), size.data(), nullptr));
  if (size[0] != static_cast<hsize_t>(rows))
    throw HdfError("/snapshots/configuration has " + std::to_string(size[0]) +
                   " frames where the output recorded " + std::to_string(rows));
}

}  // namespace

void write_snapshot_frame_collectively(const std::string& path, int64_t row,
                                       const std::vector<int64_t>& dims, int replicas,
                                       const std::vector<int64_t>& origin,
                                       const std::vector<int64_t>& extents, const void* box,
                                       const Communicator& ranks) {
  const auto* comm = static_cast<const MPI_Comm*>(ranks.mpi_comm());
  if (!comm) throw std::logic_error("write_snapshot_frame_collectively: no MPI communicator");
  quiet_hdf5();
  H5Id access = file_access();
  H5_CHECK(H5Pset_fapl_mpio(access.get(), *comm, MPI_INFO_NULL));
  // Every call from here to the close is collective: a rank that fails must not close the file
  // while the others wait elsewhere, so on failure the file is left open (the failure ends
  // every rank).
  H5Id file(H5_CHECK(H5Fopen(path.c_str(), H5F_ACC_RDWR, access.get())), H5Fclose);
  H5Id set;
  try {
    set = open_set(file.get(), "snapshots/configuration");
    expect_rows(set.get(), row + 1);
    const FrameBlock b = snapshot_box_block(set.get(), dims, replicas, origin, extents);
    std::vector<hsize_t> start{static_cast<hsize_t>(row)}, count{1};
    start.insert(start.end(), b.start.begin(), b.start.end());
    count.insert(count.end(), b.count.begin(), b.count.end());
    H5Id file_space(H5_CHECK(H5Dget_space(set.get())), H5Sclose);
    H5_CHECK(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr,
                                 count.data(), nullptr));
    H5Id memory_space(
        H5_CHECK(H5Screate_simple(static_cast<int>(count.size()), count.data(), nullptr)),
        H5Sclose);
    // The file's own type in memory: no conversion, which would make the transfer independent.
    H5Id type(H5_CHECK(H5Dget_type(set.get())), H5Tclose);
    H5Id transfer(H5_CHECK(H5Pcreate(H5P_DATASET_XFER)), H5Pclose);
    H5_CHECK(H5Pset_dxpl_mpio(transfer.get(), H5FD_MPIO_COLLECTIVE));
    H5_CHECK(
        H5Dwrite(set.get(), type.get(), memory_space.get(), file_space.get(), transfer.get(), box));
    H5D_mpio_actual_io_mode_t mode = H5D_MPIO_NO_COLLECTIVE;
    H5_CHECK(H5Pget_mpio_actual_io_mode(transfer.get(), &mode));
    if (mode == H5D_MPIO_NO_COLLECTIVE || mode == H5D_MPIO_CHUNK_INDEPENDENT) {
      uint32_t local = 0, global = 0;
      H5_CHECK(H5Pget_mpio_no_collective_cause(transfer.get(), &local, &global));
      throw HdfError("HDF5 wrote the snapshot box of rank " + std::to_string(ranks.rank()) +
                     " to " + path + " independently, not collectively (" +
                     no_collective_causes(local | global) + ")");
    }
    H5_CHECK(H5Dclose(set.release()));
    H5_CHECK(H5Fclose(file.release()));
  } catch (...) {
    (void)set.release();
    (void)file.release();
    throw;
  }
}

#else

bool collective_snapshots_built() { return false; }

void write_snapshot_frame_collectively(const std::string&, int64_t, const std::vector<int64_t>&,
                                       int, const std::vector<int64_t>&,
                                       const std::vector<int64_t>&, const void*,
                                       const Communicator&) {
  throw std::logic_error("write_snapshot_frame_collectively: this build has no parallel HDF5");
}

#endif

}  // namespace lattica
