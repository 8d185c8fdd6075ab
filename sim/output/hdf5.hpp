#pragma once
// The output's HDF5 toolkit: checked calls (H5_CHECK), file access, attributes, groups.
// For the output's own sources only: it defines the H5_CHECK macro.

#include <cstdint>
#include <string>
#include <vector>

#include "sim/output/h5_id.hpp"

namespace lattica {

/// Throws HdfError naming the call, its place and HDF5's error stack (one line).
[[noreturn]] void throw_hdf(const char* call, const char* file, int line);

template <class T>
T check_h5(T result, const char* call, const char* file, int line) {
  if (result < 0) throw_hdf(call, file, line);
  return result;
}

/// Evaluates an HDF5 call; throws HdfError when it fails (a negative result).
#define H5_CHECK(call) ::lattica::check_h5((call), #call, __FILE__, __LINE__)

/// Silences HDF5's own printing once; errors reach the user through HdfError instead.
void quiet_hdf5();

/// File access: HDF5 locks files it writes, which fails on filesystems without lock support
/// (common on Lustre and NFS). Unless HDF5_USE_FILE_LOCKING says otherwise (HDF5 honours it:
/// FALSE, TRUE or BEST_EFFORT), lock where the filesystem can and go on without where it cannot.
H5Id file_access();

/// Bytes of an array of `shape` values of HDF5 type `type` (one value for an empty shape).
int64_t bytes_of(hid_t type, const std::vector<hsize_t>& shape);

/// Makes room in the file holding `object` for `bytes` of data (and 64 KiB for HDF5's metadata)
/// past the space HDF5 has allocated, before HDF5 writes them. A
/// full disk, a quota or a file-size limit then fails here (HdfError naming the file and the
/// cause), with the file as its last flush left it, instead of half-way through a flush of
/// HDF5's metadata, which can leave objects pointing past the file's end so that no resume can
/// open it. HDF5 cuts the room it did not use off at its next flush. Nothing for files not on
/// HDF5's default (POSIX) driver, or on filesystems that cannot reserve space.
void reserve_file_space(hid_t object, int64_t bytes);

/// Creates a group, or opens an existing group or dataset (`name` may be a path).
H5Id create_group(hid_t parent, const char* name);
H5Id open_group(hid_t parent, const char* name);
H5Id open_set(hid_t parent, const char* name);

/// Writes a new UTF-8 string attribute.
void write_string_attribute(hid_t object, const char* name, const std::string& value);

/// Replaces (or creates) a string attribute.
void replace_string_attribute(hid_t object, const char* name, const std::string& value);

/// A string attribute's value; empty when the object has no such attribute.
std::string read_string_attribute(hid_t object, const char* name);

/// Writes a new numeric attribute of `n` values of `type` (scalar: one value, no axis).
template <class T>
void write_numeric_attribute(hid_t object, const char* name, hid_t type, const T* values, hsize_t n,
                             bool scalar) {
  H5Id space(scalar ? H5_CHECK(H5Screate(H5S_SCALAR)) : H5_CHECK(H5Screate_simple(1, &n, nullptr)),
             H5Sclose);
  H5Id attr(H5_CHECK(H5Acreate2(object, name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT)),
            H5Aclose);
  H5_CHECK(H5Awrite(attr.get(), type, values));
}

/// Sets (creating on first use) a scalar int64 attribute.
void set_int64_attribute(hid_t object, const char* name, int64_t value);

/// Sets (replacing an earlier one) a scalar double attribute.
void replace_double_attribute(hid_t object, const char* name, double value);

}  // namespace lattica
