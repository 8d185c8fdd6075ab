#pragma once
// Whole output files on disk: the length their HDF5 superblock records, working copies, and
// replacing a file by its copy atomically. (Resumes and --recover work on a copy, so that a
// failure leaves the file as it was.)

#include <cstdint>
#include <string>

namespace lattica {

/// The file length an HDF5 superblock records (its end-of-file address plus the base
/// address), or -1 when the file does not start with a superblock this reader knows.
int64_t recorded_length(const std::string& path);

/// Makes a file's length and the end its superblock records agree before HDF5 writes to it;
/// says what it did (empty: nothing). A file left by a crash or a full disk in the middle of a
/// flush can be shorter: it is padded with zeros, without which HDF5 refuses to open it. Or
/// longer: bytes written after the superblock was last written, which metadata written in the
/// same flush may point to; the recorded end is raised to the file's length, so that HDF5
/// allocates new space after them instead of over them (which corrupts the file: "addr
/// overflow", "message not aligned"). HdfError when it cannot.
std::string match_recorded_length(const std::string& path);

/// Cuts a closed HDF5 file down to the length its superblock records: the room
/// reserve_file_space() made past HDF5's data and HDF5 did not use. HdfError when it cannot.
void trim_to_recorded_length(const std::string& path);

/// Copies a file, replacing `to`; HdfError (the copy removed) when it cannot, e.g. on a full
/// disk.
void copy_whole_file(const std::string& from, const std::string& to);

/// Replaces `path` by the complete file `working` atomically: on disk first, then renamed (and
/// the rename on disk, where the directory can be synced). HdfError when it cannot.
void replace_by(const std::string& working, const std::string& path);

/// Syncs the directory holding `path`, so that a rename or creation there reaches the disk
/// (where the filesystem lets directories be synced; nothing otherwise).
void sync_directory_of(const std::string& path);

}  // namespace lattica
