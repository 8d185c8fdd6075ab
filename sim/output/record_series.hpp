#pragma once
// Extendable datasets that grow by whole records, and the committed_length that vouches for
// them: the shape of every per-measurement and per-frame series in the output.

#include <cstdint>
#include <string>
#include <vector>

#include "sim/output/h5_id.hpp"

namespace lattica {

/// One dataset of a RecordSeries: [rows, row...], unlimited along the rows.
struct Column {
  std::string name;
  hid_t type = H5I_INVALID_HID;  ///< memory and file type of its values
  std::vector<hsize_t> row;      ///< shape of one row; empty: one value per row
  std::vector<hsize_t> chunk;    ///< chunk shape (rank 1 + row's); used when created
  std::string description;       ///< its description attribute when created; empty: none
  bool allocate_early = false;   ///< chunks get their place in the file as rows are appended
};

/// A column whose chunks hold `rows` whole rows, fewer where that would pass 1 MiB (at least one).
Column make_column(std::string name, hid_t type, std::vector<hsize_t> row, hsize_t rows,
                   std::string description = "");

/// {replicas} when there are several, else empty: the row shape of a per-replica value.
std::vector<hsize_t> replica_axis(int replicas);

/// Cuts an extendable dataset back to `rows` along axis 0; HdfError when it has fewer (then it
/// does not belong to the checkpoint that recorded them).
void truncate_rows(hid_t set, int64_t rows);

/// A group of columns that grow together, one row per record (a measurement, a frame), with
/// the group's committed_length attribute: the rows that a flush put on disk whole. A file cut
/// short is readable up to it (recover_output relies on the same attribute).
class RecordSeries {
 public:
  RecordSeries() = default;

  /// Creates group `name` under `parent` with empty columns and committed_length 0.
  static RecordSeries create(hid_t parent, const char* name, const std::vector<Column>& columns);

  /// Opens group `path` under `parent` and its columns, cut back to `rows` rows (a checkpoint's
  /// lengths: rows written after it are written again by the resumed run).
  static RecordSeries open(hid_t parent, const char* path, const std::vector<Column>& columns,
                           int64_t rows);

  /// Whether the series was created or opened.
  bool exists() const { return group_.get() >= 0; }
  hid_t group() const { return group_.get(); }
  hid_t column(size_t i) const { return sets_[i].get(); }
  /// Rows written so far.
  int64_t length() const { return length_; }

  /// Appends `count` rows: data[i] holds column i's rows, in the column's type (null: the
  /// column grows, its rows written later by write_block).
  void append(int64_t count, const std::vector<const void*>& data);

  /// Writes part of row `row` of column `column`: the block of the row's shape at `start` of
  /// extents `count` (axes of the row, as Column::row), from `data` in the column's type.
  void write_block(size_t column, int64_t row, const std::vector<hsize_t>& start,
                   const std::vector<hsize_t>& count, const void* data);

  /// Records every row written as committed; call once they are flushed to the file.
  void commit();

  /// Closes the group and its columns.
  void close();

  /// Closes the group and its columns but keeps what they are, for attach() to open them again
  /// in the same file (reopened); nothing when the series does not exist.
  void detach();
  /// Opens a detach()ed series again in `file` (its root), rows and length as they were.
  void attach(hid_t file);

 private:
  std::string path_;                ///< the group's path from the root, while detached
  std::vector<std::string> names_;  ///< the columns' names
  H5Id group_;
  std::vector<H5Id> sets_;
  std::vector<hid_t> types_;
  std::vector<std::vector<hsize_t>> rows_;  ///< row shape of each column
  int64_t length_ = 0;
};

}  // namespace lattica
