#include "sim/checkpoint_parts.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "sim/decomposition.hpp"
#include "sim/output/file_copy.hpp"
#include "sim/output/hdf5.hpp"
#include "sim/parallel/slab_fft.hpp"

namespace lattica {

namespace {

constexpr char kDataset[] = "configuration";
// A part's rows of axis 0 of the structure factor's running sums (SlabFft's rows of its rank).
constexpr char kSpectrumSum[] = "structure_factor_power_sum";
constexpr char kSpectrumSquares[] = "structure_factor_power_squares";

std::string part_path(const std::string& checkpoint, const std::string& generation, int rank) {
  return checkpoint_parts_folder(checkpoint) + "/" + generation + "/part-" + std::to_string(rank) +
         ".h5";
}

/// The HDF5 extents of a part or region: [replicas, sites per axis..., site bytes].
std::vector<hsize_t> dataset_extents(int32_t replicas, const std::vector<int64_t>& sites,
                                     uint64_t site_bytes) {
  std::vector<hsize_t> e{static_cast<hsize_t>(replicas)};
  for (int64_t n : sites) e.push_back(static_cast<hsize_t>(n));
  e.push_back(site_bytes);
  return e;
}

/// Writes this rank's box to its part file, on disk (written aside, flushed, renamed) on return.
void write_part(const std::string& path, const EngineState& e, const CheckpointParts& p) {
  quiet_hdf5();
  const std::string temporary = path + ".tmp";
  {
    H5Id file(
        H5_CHECK(H5Fcreate(temporary.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, file_access().get())),
        H5Fclose);
    const std::vector<hsize_t> extents =
        dataset_extents(p.replicas, e.region_extents, p.site_bytes);
    H5Id space(
        H5_CHECK(H5Screate_simple(static_cast<int>(extents.size()), extents.data(), nullptr)),
        H5Sclose);
    H5Id set(H5_CHECK(H5Dcreate2(file.get(), kDataset, H5T_NATIVE_UINT8, space.get(), H5P_DEFAULT,
                                 H5P_DEFAULT, H5P_DEFAULT)),
             H5Dclose);
    H5_CHECK(H5Dwrite(set.get(), H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                      e.configuration.data()));
    write_numeric_attribute(set.get(), "origin", H5T_NATIVE_INT64, e.region_origin.data(),
                            e.region_origin.size(), false);
    const StructureFactorSums& sf = e.structure_factor;
    if (sf.samples > 0 && !sf.power_sum.empty()) {  // this rank's rows of the spectrum's sums
      for (const auto& [name, values] :
           {std::pair{kSpectrumSum, &sf.power_sum}, {kSpectrumSquares, &sf.power_squares}}) {
        const hsize_t size = values->size();
        H5Id rows_space(H5_CHECK(H5Screate_simple(1, &size, nullptr)), H5Sclose);
        H5Id rows(H5_CHECK(H5Dcreate2(file.get(), name, H5T_NATIVE_DOUBLE, rows_space.get(),
                                      H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)),
                  H5Dclose);
        H5_CHECK(
            H5Dwrite(rows.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values->data()));
      }
    }
    H5_CHECK(H5Fflush(file.get(), H5F_SCOPE_GLOBAL));
  }
  replace_by(temporary, path);
}

/// A stretch of the region along one axis that does not wrap around the lattice: region
/// indices offset .. offset + count - 1 are global coordinates first .. first + count - 1.
struct Stretch {
  int64_t first, offset, count;
};

/// The region origin .. origin + extent - 1 (modulo `length`) as stretches that do not wrap.
std::vector<Stretch> stretches(int64_t origin, int64_t extent, int64_t length) {
  std::vector<Stretch> out;
  int64_t at = ((origin % length) + length) % length;
  for (int64_t offset = 0; offset < extent;) {
    const int64_t count = std::min(extent - offset, length - at);
    out.push_back({at, offset, count});
    offset += count;
    at = 0;
  }
  return out;
}

/// Reads the overlap of part `rank` (box origin `box_origin`, extents `box`) with the region into
/// `region` (HDF5 extents `region_extents`): every combination of the axes' stretches.
void read_overlap(const std::string& path, const std::vector<int64_t>& box_origin,
                  const std::vector<int64_t>& box, const std::vector<std::vector<Stretch>>& axes,
                  const std::vector<hsize_t>& region_extents, const CheckpointParts& p,
                  unsigned char* region) {
  const size_t d = box.size();
  H5Id file;
  H5Id set, file_space;
  H5Id memory(H5_CHECK(H5Screate_simple(static_cast<int>(region_extents.size()),
                                        region_extents.data(), nullptr)),
              H5Sclose);
  std::vector<size_t> pick(d, 0);  // the stretch of each axis in this combination
  for (;;) {
    std::vector<hsize_t> file_start(d + 2, 0), memory_start(d + 2, 0), count(d + 2, 0);
    count[0] = static_cast<hsize_t>(p.replicas);
    count[d + 1] = p.site_bytes;
    bool overlaps = true;
    for (size_t a = 0; a < d && overlaps; ++a) {
      const Stretch& s = axes[a][pick[a]];
      const int64_t low = std::max(s.first, box_origin[a]);
      const int64_t high = std::min(s.first + s.count, box_origin[a] + box[a]);
      overlaps = low < high;
      file_start[a + 1] = static_cast<hsize_t>(low - box_origin[a]);
      memory_start[a + 1] = static_cast<hsize_t>(s.offset + low - s.first);
      count[a + 1] = static_cast<hsize_t>(high - low);
    }
    if (overlaps) {
      if (set.get() < 0) {  // opened at the first overlap: parts without one are not read
        if (!std::filesystem::exists(path))
          throw CheckpointError("its part " + path + " is missing");
        file = H5Id(H5_CHECK(H5Fopen(path.c_str(), H5F_ACC_RDONLY, file_access().get())), H5Fclose);
        set = H5Id(H5_CHECK(H5Dopen2(file.get(), kDataset, H5P_DEFAULT)), H5Dclose);
        file_space = H5Id(H5_CHECK(H5Dget_space(set.get())), H5Sclose);
        const std::vector<hsize_t> wanted = dataset_extents(p.replicas, box, p.site_bytes);
        std::vector<hsize_t> found(wanted.size() + 1);
        const int rank = H5_CHECK(H5Sget_simple_extent_ndims(file_space.get()));
        if (rank != static_cast<int>(wanted.size()) ||
            H5Sget_simple_extent_dims(file_space.get(), found.data(), nullptr) != rank ||
            !std::equal(wanted.begin(), wanted.end(), found.begin()))
          throw CheckpointError("its part " + path + " does not hold its box's shape");
      }
      H5_CHECK(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, file_start.data(), nullptr,
                                   count.data(), nullptr));
      H5_CHECK(H5Sselect_hyperslab(memory.get(), H5S_SELECT_SET, memory_start.data(), nullptr,
                                   count.data(), nullptr));
      H5_CHECK(H5Dread(set.get(), H5T_NATIVE_UINT8, memory.get(), file_space.get(), H5P_DEFAULT,
                       region));
    }
    size_t a = 0;  // the next combination, like an odometer
    while (a < d && ++pick[a] == axes[a].size()) pick[a++] = 0;
    if (a == d) return;
  }
}

}  // namespace

std::string checkpoint_parts_folder(const std::string& checkpoint) { return checkpoint + ".parts"; }

void remove_checkpoint_parts(const std::string& checkpoint) {
  std::error_code ignored;  // nothing there, or nothing to do about it
  std::filesystem::remove_all(checkpoint_parts_folder(checkpoint), ignored);
}

void write_decomposed_checkpoint(const std::string& checkpoint, Checkpoint c,
                                 const Decomposition& decomposition, int replicas,
                                 Communicator& comm) {
  // A new folder per checkpoint, named by rank 0, so the parts the manifest names stay whole.
  int64_t stamp = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
  comm.broadcast(&stamp, sizeof stamp, 0);
  CheckpointParts& p = c.parts;
  p.generation = "sweep-" + std::to_string(c.sweep) + "-" + std::to_string(stamp);
  p.dims = decomposition.dims();
  p.grid = decomposition.grid();
  p.replicas = replicas;
  p.site_bytes = c.engine.configuration.size() /
                 static_cast<size_t>(replicas * volume_of(decomposition.box()));
  const std::string path = part_path(checkpoint, p.generation, comm.rank());
  std::string failure;
  try {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    write_part(path, c.engine, p);
  } catch (const std::exception& e) {
    failure = e.what();
  }
  if (comm.max(failure.empty() ? 0 : 1) != 0) {
    throw CheckpointError("cannot write checkpoint " + checkpoint + ": " +
                          (failure.empty() ? "another rank could not write its part" : failure));
  }
  if (comm.rank() != 0) return;
  sync_directory_of(std::filesystem::path(path).parent_path().string());  // the new folder
  c.engine.configuration.clear();
  c.engine.region_origin.clear();
  c.engine.region_extents.clear();
  c.engine.structure_factor.first_row = 0;  // the rows are in the parts
  c.engine.structure_factor.power_sum.clear();
  c.engine.structure_factor.power_squares.clear();
  write_checkpoint(checkpoint, c);
  std::error_code ignored;  // an older generation left behind costs disk space only
  for (const auto& entry :
       std::filesystem::directory_iterator(checkpoint_parts_folder(checkpoint), ignored)) {
    if (entry.path().filename() != p.generation) std::filesystem::remove_all(entry.path(), ignored);
  }
}

std::vector<unsigned char> read_checkpoint_region(const std::string& checkpoint,
                                                  const Checkpoint& c,
                                                  const std::vector<int64_t>& origin,
                                                  const std::vector<int64_t>& extents) {
  const CheckpointParts& p = c.parts;
  int parts = 1;
  for (int n : p.grid) parts *= n;
  std::vector<std::vector<Stretch>> axes;
  for (size_t a = 0; a < p.dims.size(); ++a)
    axes.push_back(stretches(origin[a], extents[a], p.dims[a]));
  const std::vector<hsize_t> region_extents = dataset_extents(p.replicas, extents, p.site_bytes);
  std::vector<unsigned char> region(static_cast<size_t>(volume_of(extents) * p.replicas) *
                                    p.site_bytes);
  std::unique_ptr<Decomposition> grid;
  try {
    grid = std::make_unique<Decomposition>(p.dims, p.grid, parts);
  } catch (const std::exception&) {
    throw CheckpointError("checkpoint " + checkpoint +
                          ": its grid of parts does not fit its lattice");
  }
  quiet_hdf5();
  try {
    for (int rank = 0; rank < parts; ++rank) {
      read_overlap(part_path(checkpoint, p.generation, rank), grid->box_origin(rank), grid->box(),
                   axes, region_extents, p, region.data());
    }
  } catch (const CheckpointError& e) {
    throw CheckpointError("checkpoint " + checkpoint + ": " + e.what());
  }
  return region;
}

void read_checkpoint_spectrum_rows(const std::string& checkpoint, const Checkpoint& c,
                                   int64_t first_row, int64_t rows, StructureFactorSums& sums) {
  const CheckpointParts& p = c.parts;
  int parts = 1;
  for (int n : p.grid) parts *= n;
  std::vector<int64_t> half = p.dims;
  half.back() = half.back() / 2 + 1;
  const int64_t row_modes = volume_of(half) / half[0];
  const AxisSplit written{p.dims[0], parts};  // the rows of the run that wrote the parts
  sums.first_row = first_row;
  sums.power_sum.assign(static_cast<size_t>(rows * row_modes), 0.0);
  sums.power_squares.assign(sums.power_sum.size(), 0.0);
  quiet_hdf5();
  for (int rank = 0; rank < parts; ++rank) {
    const int64_t low = std::max(first_row, written.first(rank));
    const int64_t high = std::min(first_row + rows, written.first(rank) + written.count(rank));
    if (low >= high) continue;
    const std::string path = part_path(checkpoint, p.generation, rank);
    if (!std::filesystem::exists(path))
      throw CheckpointError("checkpoint " + checkpoint + ": its part " + path + " is missing");
    H5Id file(H5_CHECK(H5Fopen(path.c_str(), H5F_ACC_RDONLY, file_access().get())), H5Fclose);
    for (const auto& [name, values] :
         {std::pair{kSpectrumSum, &sums.power_sum}, {kSpectrumSquares, &sums.power_squares}}) {
      if (H5_CHECK(H5Lexists(file.get(), name, H5P_DEFAULT)) <= 0)
        throw CheckpointError("checkpoint " + checkpoint + ": its part " + path +
                              " lacks the structure factor's sums");
      H5Id set(H5_CHECK(H5Dopen2(file.get(), name, H5P_DEFAULT)), H5Dclose);
      H5Id file_space(H5_CHECK(H5Dget_space(set.get())), H5Sclose);
      hsize_t size = 0;
      if (H5_CHECK(H5Sget_simple_extent_ndims(file_space.get())) != 1 ||
          H5Sget_simple_extent_dims(file_space.get(), &size, nullptr) != 1 ||
          size != static_cast<hsize_t>(written.count(rank) * row_modes))
        throw CheckpointError("checkpoint " + checkpoint + ": its part " + path +
                              " does not hold its rows of the structure factor's sums");
      const hsize_t start = static_cast<hsize_t>((low - written.first(rank)) * row_modes);
      const hsize_t count = static_cast<hsize_t>((high - low) * row_modes);
      H5_CHECK(
          H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, &start, nullptr, &count, nullptr));
      H5Id memory(H5_CHECK(H5Screate_simple(1, &count, nullptr)), H5Sclose);
      H5_CHECK(H5Dread(set.get(), H5T_NATIVE_DOUBLE, memory.get(), file_space.get(), H5P_DEFAULT,
                       values->data() + (low - first_row) * row_modes));
    }
  }
}

}  // namespace lattica
