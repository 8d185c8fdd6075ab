#include "sim/output/record_series.hpp"

#include <algorithm>
#include <utility>

#include "sim/output/hdf5.hpp"

namespace lattica {

namespace {

/// An empty dataset of shape [0, row...], unlimited along axis 0.
H5Id create_extendable(hid_t parent, const Column& c) {
  std::vector<hsize_t> dims{0}, max_dims{H5S_UNLIMITED};
  for (hsize_t t : c.row) {
    dims.push_back(t);
    max_dims.push_back(t);
  }
  H5Id space(
      H5_CHECK(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), max_dims.data())),
      H5Sclose);
  H5Id plist(H5_CHECK(H5Pcreate(H5P_DATASET_CREATE)), H5Pclose);
  H5_CHECK(H5Pset_chunk(plist.get(), static_cast<int>(c.chunk.size()), c.chunk.data()));
  if (c.allocate_early) H5_CHECK(H5Pset_alloc_time(plist.get(), H5D_ALLOC_TIME_EARLY));
  return H5Id(H5_CHECK(H5Dcreate2(parent, c.name.c_str(), c.type, space.get(), H5P_DEFAULT,
                                  plist.get(), H5P_DEFAULT)),
              H5Dclose);
}

/// Writes the block at `start` of extents `block` (axis 0: rows) of a dataset.
void write_rows(hid_t set, hid_t type, const std::vector<hsize_t>& start,
                const std::vector<hsize_t>& block, const void* data) {
  H5Id file_space(H5_CHECK(H5Dget_space(set)), H5Sclose);
  H5_CHECK(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr,
                               block.data(), nullptr));
  H5Id memory_space(
      H5_CHECK(H5Screate_simple(static_cast<int>(block.size()), block.data(), nullptr)), H5Sclose);
  H5_CHECK(H5Dwrite(set, type, memory_space.get(), file_space.get(), H5P_DEFAULT, data));
}

/// Writes `count` rows of shape `row` at row `first` of an extendable dataset, growing it; only
/// grows it when data is null.
void append_rows(hid_t set, hid_t type, int64_t first, int64_t count,
                 const std::vector<hsize_t>& row, const void* data) {
  std::vector<hsize_t> size{static_cast<hsize_t>(first + count)},
      start{static_cast<hsize_t>(first)}, block{static_cast<hsize_t>(count)};
  for (hsize_t t : row) {
    size.push_back(t);
    start.push_back(0);
    block.push_back(t);
  }
  H5_CHECK(H5Dset_extent(set, size.data()));
  if (data) write_rows(set, type, start, block, data);
}

}  // namespace

Column make_column(std::string name, hid_t type, std::vector<hsize_t> row, hsize_t rows,
                   std::string description) {
  // Chunks are placed whole: with wide rows (thousands of replicas) `rows` of them would put
  // hundreds of MiB in the file for the first measurement. At most 1 MiB then, or one row.
  constexpr hsize_t kLargestChunk = hsize_t(1) << 20;
  const auto row_bytes = static_cast<hsize_t>(bytes_of(type, row));
  if (row_bytes > 0) rows = std::max<hsize_t>(1, std::min(rows, kLargestChunk / row_bytes));
  std::vector<hsize_t> chunk{rows};
  chunk.insert(chunk.end(), row.begin(), row.end());
  return Column{std::move(name), type, std::move(row), std::move(chunk), std::move(description)};
}

std::vector<hsize_t> replica_axis(int replicas) {
  return replicas > 1 ? std::vector<hsize_t>{static_cast<hsize_t>(replicas)}
                      : std::vector<hsize_t>{};
}

void truncate_rows(hid_t set, int64_t rows) {
  H5Id space(H5_CHECK(H5Dget_space(set)), H5Sclose);
  std::vector<hsize_t> dims(static_cast<size_t>(H5_CHECK(H5Sget_simple_extent_ndims(space.get()))));
  H5_CHECK(H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr));
  if (dims[0] < static_cast<hsize_t>(rows)) {
    throw HdfError("the output file has " + std::to_string(dims[0]) +
                   " rows where the checkpoint recorded " + std::to_string(rows) +
                   "; it does not belong to this checkpoint");
  }
  dims[0] = static_cast<hsize_t>(rows);
  H5_CHECK(H5Dset_extent(set, dims.data()));
}

RecordSeries RecordSeries::create(hid_t parent, const char* name,
                                  const std::vector<Column>& columns) {
  RecordSeries s;
  s.group_ = create_group(parent, name);
  for (const Column& c : columns) {
    s.sets_.push_back(create_extendable(s.group_.get(), c));
    if (!c.description.empty())
      write_string_attribute(s.sets_.back().get(), "description", c.description);
    s.names_.push_back(c.name);
    s.types_.push_back(c.type);
    s.rows_.push_back(c.row);
  }
  s.commit();
  return s;
}

RecordSeries RecordSeries::open(hid_t parent, const char* path, const std::vector<Column>& columns,
                                int64_t rows) {
  RecordSeries s;
  s.group_ = open_group(parent, path);
  for (const Column& c : columns) {
    s.sets_.push_back(open_set(s.group_.get(), c.name.c_str()));
    s.names_.push_back(c.name);
    s.types_.push_back(c.type);
    s.rows_.push_back(c.row);
  }
  for (const H5Id& set : s.sets_) truncate_rows(set.get(), rows);
  s.length_ = rows;
  return s;
}

void RecordSeries::append(int64_t count, const std::vector<const void*>& data) {
  // Room first: the chunks the new rows start (chunks are placed whole), and each column's
  // share of metadata (its chunk index grows).
  int64_t bytes = 0;
  for (size_t i = 0; i < sets_.size(); ++i) {
    const int64_t row_bytes = bytes_of(types_[i], rows_[i]);
    H5Id plist(H5_CHECK(H5Dget_create_plist(sets_[i].get())), H5Pclose);
    std::vector<hsize_t> chunk(rows_[i].size() + 1, 1);
    H5_CHECK(H5Pget_chunk(plist.get(), static_cast<int>(chunk.size()), chunk.data()));
    const auto rows = static_cast<int64_t>(chunk[0]);
    const auto placed = [rows](int64_t n) { return (n + rows - 1) / rows * rows; };
    bytes += (placed(length_ + count) - placed(length_)) * row_bytes + 4096;
  }
  reserve_file_space(group_.get(), bytes);
  for (size_t i = 0; i < sets_.size(); ++i)
    append_rows(sets_[i].get(), types_[i], length_, count, rows_[i], data[i]);
  length_ += count;
}

void RecordSeries::write_block(size_t column, int64_t row, const std::vector<hsize_t>& start,
                               const std::vector<hsize_t>& count, const void* data) {
  std::vector<hsize_t> first{static_cast<hsize_t>(row)}, block{1};
  first.insert(first.end(), start.begin(), start.end());
  block.insert(block.end(), count.begin(), count.end());
  reserve_file_space(group_.get(), bytes_of(types_[column], count));
  write_rows(sets_[column].get(), types_[column], first, block, data);
}

void RecordSeries::commit() { set_int64_attribute(group_.get(), "committed_length", length_); }

void RecordSeries::close() {
  sets_.clear();
  group_.reset();
}

void RecordSeries::detach() {
  if (!exists()) return;
  const ssize_t size = H5_CHECK(H5Iget_name(group_.get(), nullptr, 0));
  std::string path(static_cast<size_t>(size) + 1, '\0');
  H5_CHECK(H5Iget_name(group_.get(), path.data(), path.size()));
  path.resize(static_cast<size_t>(size));
  // Closed one by one, so that a failure is reported.
  for (H5Id& set : sets_) H5_CHECK(H5Dclose(set.release()));
  sets_.clear();
  H5_CHECK(H5Gclose(group_.release()));
  path_ = std::move(path);
}

void RecordSeries::attach(hid_t file) {
  if (path_.empty()) return;
  group_ = open_group(file, path_.c_str());
  for (const std::string& name : names_) sets_.push_back(open_set(group_.get(), name.c_str()));
  path_.clear();
}

}  // namespace lattica
