#pragma once
// Connected components of a bond graph by concurrent union-find, one code for both backends
// (functors that exec.for_each launches on the GPU or over CPU threads).
//
// Nodes are 32-bit: node 0 is the ghost (the extra vertex that field bonds join sites to), node
// 1 + i is element i of the site array (replicas one after another). Every node's parent is
// at most the node itself and a root is its own parent. A union links the larger of two roots
// below the smaller with an atomic minimum and retries when another thread moved it first
// (Playne and Hawick, IEEE TPDS 2018), so whatever the order of the unions, every component
// ends with its smallest node as root: labels are canonical, the same on every backend, block
// size and thread count. The ghost, node 0, is the root of every component that reaches it.
//
// The finds of the unions halve the paths they walk (each node visited is pointed at its
// grandparent), so that trees stay shallow while the unions run and the flattening walks short
// paths. Concurrent halving is safe, and changes no label:
//   - every write to a parent is an atomic minimum with a smaller node (a halving write only
//     where parent != node, so never at a root), so parents only decrease and stay below their
//     nodes: the parent graph stays a forest whose paths descend to the smallest node;
//   - every write replaces a parent v by a node w that ends in v's component: a halving write's
//     w was the parent of an earlier parent of the node, and a union whose atomic minimum
//     displaced a non-root goes on to join the displaced node (see unite);
//   - so no write loses a connection, each union ends with its two nodes under one root, and
//     the components, hence the canonical roots, are exactly those of plain walks.
// The flattening runs after the unions, when a thread writes only its own node (its root):
// its walks only read.
// (The first version's finds wrote nothing; tests/bench/cluster_bench.cu keeps them to compare.)

#include <cstdint>

#include "kernels/common/host_device.hpp"

namespace lattica {

/// Node of the ghost spin; site i is node 1 + i.
constexpr uint32_t kGhostNode = 0;
/// Nodes are 32-bit: at most this many sites (every replica's) per labelling.
constexpr uint64_t kMaxLabelledSites = (uint64_t(1) << 32) - 2;

/// A parent read while other threads may lower it.
LATTICA_HD_INLINE uint32_t load_parent(const uint32_t* parent) {
#if defined(__CUDA_ARCH__)
  return *static_cast<const volatile uint32_t*>(parent);
#else
  return __atomic_load_n(parent, __ATOMIC_RELAXED);
#endif
}

LATTICA_HD_INLINE void store_parent(uint32_t* parent, uint32_t value) {
#if defined(__CUDA_ARCH__)
  *parent = value;
#else
  __atomic_store_n(parent, value, __ATOMIC_RELAXED);
#endif
}

/// *address = min(*address, value) atomically; returns the old value.
LATTICA_HD_INLINE uint32_t atomic_min_u32(uint32_t* address, uint32_t value) {
#if defined(__CUDA_ARCH__)
  return atomicMin(address, value);
#else
  uint32_t old = __atomic_load_n(address, __ATOMIC_RELAXED);
  while (value < old && !__atomic_compare_exchange_n(address, &old, value, true, __ATOMIC_RELAXED,
                                                     __ATOMIC_RELAXED)) {
  }
  return old;
#endif
}

/// *address = min(*address, value) atomically (64-bit); returns the old value.
LATTICA_HD_INLINE uint64_t atomic_min_u64(uint64_t* address, uint64_t value) {
#if defined(__CUDA_ARCH__)
  return atomicMin(reinterpret_cast<unsigned long long*>(address),
                   static_cast<unsigned long long>(value));
#else
  uint64_t old = __atomic_load_n(address, __ATOMIC_RELAXED);
  while (value < old && !__atomic_compare_exchange_n(address, &old, value, true, __ATOMIC_RELAXED,
                                                     __ATOMIC_RELAXED)) {
  }
  return old;
#endif
}

/// *address += value atomically; returns the old value.
LATTICA_HD_INLINE uint32_t atomic_fetch_add_u32(uint32_t* address, uint32_t value) {
#if defined(__CUDA_ARCH__)
  return atomicAdd(address, value);
#else
  return __atomic_fetch_add(address, value, __ATOMIC_RELAXED);
#endif
}

/// counts[index] += 1 atomically; on the GPU the lanes of a warp that count the same index
/// add together (one atomic per distinct index), since a large cluster's sites all count at
/// its root.
LATTICA_HD_INLINE void count_at(uint32_t* counts, uint32_t index) {
#if defined(__CUDA_ARCH__)
  const unsigned same = __match_any_sync(__activemask(), index);
  if (static_cast<int>(threadIdx.x & 31) == __ffs(same) - 1)
    atomicAdd(counts + index, __popc(same));
#else
  __atomic_fetch_add(counts + index, 1u, __ATOMIC_RELAXED);
#endif
}

/// Lowers *parent to value when value is smaller (the writes of path halving); the old value is
/// not needed, so the GPU issues a reduction rather than a returning atomic.
LATTICA_HD_INLINE void lower_parent(uint32_t* parent, uint32_t value) {
#if defined(__CUDA_ARCH__)
  atomicMin(parent, value);
#else
  atomic_min_u32(parent, value);
#endif
}

/// The root of node n, reading only (for parents that no thread changes any more).
LATTICA_HD_INLINE uint32_t find_root(const uint32_t* parent, uint32_t n) {
  uint32_t p = load_parent(parent + n);
  while (p != n) {
    n = p;
    p = load_parent(parent + n);
  }
  return n;
}

/// The root of node n, halving the path: every node it passes on the way whose parent is not a
/// root is lowered to its grandparent, and the walk goes on from there. Safe while other
/// threads unite and halve (see the top of this file).
LATTICA_HD_INLINE uint32_t find_root_halving(uint32_t* parent, uint32_t n) {
  uint32_t p = load_parent(parent + n);
  while (p != n) {
    const uint32_t g = load_parent(parent + p);
    if (g == p) return p;  // p is the root
    lower_parent(parent + n, g);
    n = g;
    p = load_parent(parent + n);
  }
  return n;
}

/// Joins the components of nodes a and b. Precondition: parent is a forest with parent <= node.
LATTICA_HD_INLINE void unite(uint32_t* parent, uint32_t a, uint32_t b) {
  while (true) {
    a = find_root_halving(parent, a);
    b = find_root_halving(parent, b);
    if (a == b) return;
    if (a < b) {
      const uint32_t t = a;
      a = b;
      b = t;
    }
    // Link the larger root a below b. If a was no longer a root, `old` is its new parent:
    // a now hangs below the smaller of the two, and old still has to be joined to b.
    const uint32_t old = atomic_min_u32(parent + a, b);
    if (old == a) return;
    a = old;
  }
}

/// unite(parent, a, b) with the two finds walked side by side, a step of each at a time, so that
/// their loads are in flight together: where both paths lead through global memory (the unions
/// between tiles, tile_labels.cuh) the chain of dependent loads is about half as long. The same
/// halving writes as find_root_halving, so the same guarantees (see the top of this file).
/// Precondition: as unite.
LATTICA_HD_INLINE void unite_side_by_side(uint32_t* parent, uint32_t a, uint32_t b) {
  uint32_t parent_a = load_parent(parent + a), parent_b = load_parent(parent + b);
  while (parent_a != a || parent_b != b) {  // one of them is no root (yet)
    const uint32_t up_a = parent_a != a ? load_parent(parent + parent_a) : a;
    const uint32_t up_b = parent_b != b ? load_parent(parent + parent_b) : b;
    if (parent_a != a) {
      if (up_a == parent_a) {  // parent_a is the root
        a = parent_a;
      } else {
        lower_parent(parent + a, up_a);
        a = up_a;
        parent_a = load_parent(parent + a);
      }
    }
    if (parent_b != b) {
      if (up_b == parent_b) {
        b = parent_b;
      } else {
        lower_parent(parent + b, up_b);
        b = up_b;
        parent_b = load_parent(parent + b);
      }
    }
  }
  if (a == b) return;
  if (a < b) {
    const uint32_t t = a;
    a = b;
    b = t;
  }
  const uint32_t old = atomic_min_u32(parent + a, b);  // as in unite
  if (old != a) unite(parent, old, b);
}

/// Points every node at its root, so a label is one read; functor over nodes. After the unions
/// the trees are shallow, and the walks read only; each thread writes its own node, with the
/// root, which no other thread's write can change, and only where its parent is not the root
/// already (most nodes after a tile labelling).
struct FlattenLabels {
  uint32_t* parent;
  LATTICA_HD_INLINE void operator()(int64_t n) const {
    const uint32_t node = static_cast<uint32_t>(n);
    const uint32_t p = load_parent(parent + node);
    if (p == node) return;
    const uint32_t root = find_root(parent, p);
    if (root != p) store_parent(parent + node, root);
  }
};

}  // namespace lattica
