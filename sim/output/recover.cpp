// Output files on disk after the run: whether one is finished, and --recover's repair of one
// left by a crash, a full disk or a copy cut short.

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <utility>

#include "sim/output.hpp"
#include "sim/output/file_copy.hpp"
#include "sim/output/hdf5.hpp"
#include "sim/output/record_series.hpp"

namespace lattica {

namespace {

/// How many of the first `rows` rows of an extendable (chunked) dataset lie in the first
/// `present` bytes of the file: a row counts only when every chunk holding it was allocated
/// and ends within them. Beyond them a cut-short file holds padding, not data.
int64_t rows_in_file(hid_t set, int64_t rows, int64_t present) {
  H5Id plist(H5_CHECK(H5Dget_create_plist(set)), H5Pclose);
  H5Id space(H5_CHECK(H5Dget_space(set)), H5Sclose);
  const int rank = H5_CHECK(H5Sget_simple_extent_ndims(space.get()));
  std::vector<hsize_t> dims(static_cast<size_t>(rank)), chunk(static_cast<size_t>(rank));
  H5_CHECK(H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr));
  H5_CHECK(H5Pget_chunk(plist.get(), rank, chunk.data()));
  std::vector<hsize_t> offset(static_cast<size_t>(rank), 0);
  for (hsize_t first = 0; first < static_cast<hsize_t>(rows); first += chunk[0]) {
    // Every chunk of this block of rows: an odometer over the chunk grid of the other axes.
    std::fill(offset.begin(), offset.end(), 0);
    offset[0] = first;
    for (bool more = true; more;) {
      unsigned filters = 0;
      haddr_t address = HADDR_UNDEF;
      hsize_t bytes = 0;
      H5_CHECK(H5Dget_chunk_info_by_coord(set, offset.data(), &filters, &address, &bytes));
      if (address == HADDR_UNDEF || static_cast<int64_t>(address + bytes) > present)
        return static_cast<int64_t>(first);
      more = false;
      for (int a = rank - 1; a >= 1 && !more; --a) {
        offset[a] += chunk[a];
        more = offset[a] < dims[a];
        if (!more) offset[a] = 0;
      }
    }
  }
  return rows;
}

/// The datasets of a file with contiguous storage whose bytes go beyond the first `present`
/// bytes of the file (results written at the end of a run, e.g. the histograms).
std::vector<std::string> contiguous_sets_beyond(hid_t file, int64_t present) {
  struct Search {
    int64_t present;
    std::vector<std::string> names;
  } search{present, {}};
  auto visit = [](hid_t object, const char* name, const H5O_info_t* info, void* data) -> herr_t {
    if (info->type != H5O_TYPE_DATASET) return 0;
    auto* s = static_cast<Search*>(data);
    const hid_t set = H5Dopen2(object, name, H5P_DEFAULT);
    if (set < 0) return -1;
    const haddr_t offset = H5Dget_offset(set);  // HADDR_UNDEF unless contiguous and allocated
    const hsize_t bytes = H5Dget_storage_size(set);
    if (H5Dclose(set) < 0) return -1;
    if (offset != HADDR_UNDEF && static_cast<int64_t>(offset + bytes) > s->present)
      s->names.push_back(std::string("/") + name);
    return 0;
  };
  H5_CHECK(H5Ovisit2(file, H5_INDEX_NAME, H5_ITER_INC, visit, &search, H5O_INFO_BASIC));
  return search.names;
}

/// Whether every group along `path` exists (H5Lexists needs every parent of a path to exist,
/// so the path's prefixes are tested in turn).
bool path_exists(hid_t file, const std::string& path) {
  bool exists = true;
  for (size_t end = 0; exists && end != std::string::npos;) {
    end = path.find('/', end + 1);
    exists = H5_CHECK(H5Lexists(file, path.substr(0, end).c_str(), H5P_DEFAULT)) > 0;
  }
  return exists;
}

/// Keeps of a series group's extendable datasets only the committed rows whose every byte is
/// in the first `present` bytes of the file, lowering committed_length where the file was cut
/// short; appends what it did to `done`.
void repair_series_group(hid_t file, const char* group_name, int64_t present,
                         std::vector<std::string>& done) {
  if (!path_exists(file, group_name)) return;
  H5Id group = open_group(file, group_name);
  if (H5_CHECK(H5Aexists(group.get(), "committed_length")) <= 0) return;
  int64_t committed = 0;
  {
    H5Id attr(H5_CHECK(H5Aopen(group.get(), "committed_length", H5P_DEFAULT)), H5Aclose);
    H5_CHECK(H5Aread(attr.get(), H5T_NATIVE_INT64, &committed));
  }
  // The group's extendable datasets: the series that committed_length vouches for.
  std::vector<std::pair<std::string, H5Id>> series;
  H5G_info_t info{};
  H5_CHECK(H5Gget_info(group.get(), &info));
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    char name[256];
    H5_CHECK(H5Lget_name_by_idx(group.get(), ".", H5_INDEX_NAME, H5_ITER_INC, i, name, sizeof name,
                                H5P_DEFAULT));
    H5O_info_t object{};
    H5_CHECK(H5Oget_info_by_name(group.get(), name, &object, H5P_DEFAULT));
    if (object.type != H5O_TYPE_DATASET) continue;
    H5Id set = open_set(group.get(), name);
    H5Id space(H5_CHECK(H5Dget_space(set.get())), H5Sclose);
    const int rank = H5_CHECK(H5Sget_simple_extent_ndims(space.get()));
    std::vector<hsize_t> max_dims(static_cast<size_t>(rank));
    H5_CHECK(H5Sget_simple_extent_dims(space.get(), nullptr, max_dims.data()));
    if (rank > 0 && max_dims[0] == H5S_UNLIMITED) series.emplace_back(name, std::move(set));
  }
  // Committed rows that were never in this file (cut short by a copy) are padding now.
  int64_t kept = committed;
  for (const auto& [name, set] : series)
    kept = std::min(kept, rows_in_file(set.get(), kept, present));
  if (kept < committed) {
    done.push_back(std::string(group_name) + ": only " + std::to_string(kept) + " of " +
                   std::to_string(committed) +
                   " committed rows are in the file; committed_length lowered to " +
                   std::to_string(kept));
    set_int64_attribute(group.get(), "committed_length", kept);
  }
  for (const auto& [name, set] : series) {
    H5Id space(H5_CHECK(H5Dget_space(set.get())), H5Sclose);
    std::vector<hsize_t> dims(
        static_cast<size_t>(H5_CHECK(H5Sget_simple_extent_ndims(space.get()))));
    H5_CHECK(H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr));
    if (dims[0] <= static_cast<hsize_t>(kept)) continue;
    done.push_back(std::string(group_name) + "/" + name + ": " + std::to_string(dims[0]) +
                   " rows cut to " + std::to_string(kept));
    truncate_rows(set.get(), kept);
  }
}

}  // namespace

std::vector<std::string> recover_output(const std::string& path) {
  quiet_hdf5();
  if (recorded_length(path) < 0) {
    throw InputError(path + ": not an HDF5 file written by sim (no HDF5 superblock at its " +
                     "start); nothing to recover");
  }
  std::error_code ec;
  const auto present = static_cast<int64_t>(std::filesystem::file_size(path, ec));
  if (ec) throw HdfError("cannot read the size of " + path + ": " + ec.message());
  // The repair goes into a copy, so a failure (a full disk, damage HDF5 cannot read) leaves
  // the file as it was.
  const std::string working = working_copy_path(path);
  copy_whole_file(path, working);
  std::vector<std::string> done;
  try {
    const std::string matched = match_recorded_length(working);
    if (!matched.empty()) done.push_back(matched);
    H5Id file(H5_CHECK(H5Fopen(working.c_str(), H5F_ACC_RDWR, file_access().get())), H5Fclose);
    for (const char* group_name :
         {"observables", "snapshots", "correlators/structure_factor/series",
          "correlators/timeslice", "tempering"})
      repair_series_group(file.get(), group_name, present, done);
    // Results written in one piece (histograms, the averaged structure factor) that the file
    // does not hold in full are removed rather than read as zeros.
    for (const std::string& name : contiguous_sets_beyond(file.get(), present)) {
      H5_CHECK(H5Ldelete(file.get(), name.c_str(), H5P_DEFAULT));
      done.push_back(name + ": removed, its data is not in the file");
    }
    H5_CHECK(H5Fflush(file.get(), H5F_SCOPE_GLOBAL));
    H5_CHECK(H5Fclose(file.release()));
    if (done.empty()) {
      std::filesystem::remove(working);
    } else {
      replace_by(working, path);
    }
  } catch (...) {
    std::remove(working.c_str());
    throw;
  }
  return done;
}

bool output_finished(const std::string& path) {
  quiet_hdf5();
  if (recorded_length(path) < 0) return false;
  // Unchecked on purpose: a file HDF5 cannot open (cut short, damaged) is not finished.
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, file_access().get());
  if (file < 0) {
    H5Eclear2(H5E_DEFAULT);
    return false;
  }
  int64_t finished = 0;
  const hid_t attr = H5Aopen(file, "finished", H5P_DEFAULT);
  if (attr >= 0) {
    if (H5Aread(attr, H5T_NATIVE_INT64, &finished) < 0) finished = 0;
    H5Aclose(attr);
  }
  H5Fclose(file);
  H5Eclear2(H5E_DEFAULT);
  return finished == 1;
}

}  // namespace lattica
