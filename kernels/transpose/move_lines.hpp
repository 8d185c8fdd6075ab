#pragma once
// Whole lines (runs of equal-sized elements) moved between a packed list and their places in an
// array, by a table of line indices: the packing and unpacking of the all-to-all exchanges that
// take a decomposed lattice's boxes to the slabs of a distributed FFT and back
// (sim/parallel/box_slabs.hpp), and a box's interior out of its ghost-framed storage. Either
// backend runs it with for_each over every word of the packed list.

#include <cstdint>

#include "kernels/common/host_device.hpp"

namespace lattica {

/// packed[q] = array[line[q]] (gather) or array[line[q]] = packed[q] (scatter), line by line:
/// element i of for_each is word i % line_words of packed line i / line_words. Word is the
/// widest unsigned type that divides a line's bytes.
template <class Word>
struct MoveLines {
  Word* packed;
  Word* array;
  const int64_t* line;  ///< the array's line of each packed line
  int64_t line_words;
  bool gather;

  LATTICA_HD void operator()(int64_t i) const {
    const int64_t q = i / line_words;
    const int64_t at = line[q] * line_words + (i - q * line_words);
    if (gather) {
      packed[i] = array[at];
    } else {
      array[at] = packed[i];
    }
  }
};

/// Moves `lines` lines of `line_bytes` bytes between `packed` and `array` (MoveLines) on
/// `exec`, in the backend's memory, on its main stream.
template <class Exec>
void move_lines(const Exec& exec, void* packed, void* array, const int64_t* line, int64_t lines,
                size_t line_bytes, bool gather) {
  const auto run = [&](auto word) {
    using Word = decltype(word);
    const int64_t words = static_cast<int64_t>(line_bytes / sizeof(Word));
    exec.for_each(lines * words, MoveLines<Word>{static_cast<Word*>(packed),
                                                 static_cast<Word*>(array), line, words, gather});
  };
  if (line_bytes % 8 == 0) {
    run(uint64_t{});
  } else if (line_bytes % 4 == 0) {
    run(uint32_t{});
  } else {
    run(uint8_t{});
  }
}

}  // namespace lattica
