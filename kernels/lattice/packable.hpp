#pragma once
// Which lattices the multi-spin-coded Ising storage (kernels/models/ising_packed.hpp) can hold:
// a light predicate, so code that only chooses a layout need not include the packed kernels.

#include <cstdint>

namespace lattica {

/// Whether a lattice can be stored packed: a word of 32 spins of one colour never straddles a
/// row (L_{D-1} % 64 == 0), and the words of one colour are indexed in 32 bits.
inline bool packable_lattice(const int64_t* dims, int d) {
  int64_t volume = 1;
  for (int a = 0; a < d; ++a) volume *= dims[a];
  return dims[d - 1] % 64 == 0 && volume / 64 < (int64_t(1) << 32);
}

}  // namespace lattica
