// Cluster moves (kernels/cluster/cluster_moves.hpp) against exact enumeration, two ways.
//
// 1. Exact one-step transition matrices of Swendsen-Wang and of one Wolff cluster on tiny
//    lattices, to machine precision. For every state, every bond configuration the model's own
//    thresholds allow (Model::cluster_bond / 2^32 for each +e_a bond of every site,
//    Model::ghost_bond / 2^32 for each site's bond to the ghost spin) is labelled by the code's
//    union-find functors (UniteBonds, FlattenLabels, ClusterLabels: what CpuExec::for_each runs
//    with one thread), which must agree with a plain labelling here, and every moved cluster
//    takes Model::cluster_move, whose outcome probabilities are exact counts of the 2^32 words.
//    The oracle is independent where it can be: neighbours, bond lists, the labelling it checks
//    against and the Boltzmann weights are plain loops here; the code supplies only what is
//    under test (thresholds, labels, moves). Then, with pi the Boltzmann weight at the couplings
//    the rounded thresholds imply (bond p = 1 - exp(-2 beta_eff) for Ising, 1 - exp(-beta_eff)
//    for Potts, the ghost's alike), every matrix must have rows summing to 1, satisfy detailed
//    balance pi(s) T(s, s') = pi(s') T(s', s) to 1e-12 relative, and be irreducible; and the
//    effective couplings must be the requested ones up to the thresholds' rounding.
//
//    Bond configurations are enumerated in classes that the labelling cannot tell apart: the
//    two bonds joining the same pair on an extent of 2 (present if either is), and the ghost
//    bonds of one cluster's sites (it is the ghost's if any is), with their exact class
//    probabilities. Each labelling still goes through the code, with the bonds and ghost bonds
//    that stand for a class rotating over every nonempty choice; on the smallest lattices every
//    bond and ghost bond is also enumerated one by one and both ways must agree.
//
// 2. The CPU engine with swendsen_wang and wolff in its sequence (alone and mixed with
//    Metropolis and heat bath, several Wolff clusters per pass, several replicas) against exact
//    averages: energy, magnetization, <m^2>, the bond-sum distribution, and the improved
//    estimator m2_improved against <M^2> / V at h = 0.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cluster/cluster_moves.hpp"
#include "kernels/cluster/union_find.hpp"
#include "kernels/lattice/checkerboard.hpp"
#include "kernels/models/ising.hpp"
#include "kernels/models/potts.hpp"
#include "sim/engine/engine.hpp"
#include "tests/support/exact_ising.hpp"
#include "tests/support/exact_potts.hpp"
#include "tests/support/statistics.hpp"

namespace lattica::test {
namespace {

constexpr double kTwo32 = 4294967296.0;
constexpr uint64_t kWords = uint64_t(1) << 32;

/// The probability of a 2^32 fixed-point bond threshold (0: never, >= 2^32: certain), exact.
double bond_probability(uint64_t threshold) {
  return threshold >= kWords ? 1.0 : static_cast<double>(threshold) / kTwo32;
}

// ---- Part 1: exact transition matrices ----

/// A site's value as a digit 0 .. values-1 (states are numbered by their digits, site i the
/// i-th least significant), and back; -1 for a spin no digit names.
template <class Model>
struct Digits;
template <>
struct Digits<IsingModel> {
  static int8_t spin(int digit) { return digit ? int8_t(1) : int8_t(-1); }
  static int digit(int8_t s, int) { return s == 1 ? 1 : s == -1 ? 0 : -1; }
};
template <>
struct Digits<PottsModel> {
  static uint8_t spin(int digit) { return static_cast<uint8_t>(digit); }
  static int digit(uint8_t s, int values) { return s < values ? s : -1; }
};

/// One outcome of moving a site: its new digit, a word that gives it and how many of the 2^32
/// words give it, and the probability the algorithm asks for.
struct Outcome {
  int value;
  uint32_t word;
  uint64_t words;
  double ideal;
};

/// The outcomes of `move` (word -> digit) over all 2^32 words, counted exactly. The word maps
/// (multiply-shift, a top bit) give each outcome one run of consecutive words, found by
/// bisection; the runs are then checked on 2^18 words spread over the range (a Weyl sequence),
/// 2^16 random words, the lowest and highest 4096 words and both sides of every boundary, so a
/// map that is not made of runs fails rather than being miscounted.
template <class F>
std::vector<Outcome> count_outcomes(const F& move) {
  std::vector<std::pair<uint64_t, int>> runs;  // first word, value
  for (uint64_t start = 0; start < kWords;) {
    const int value = move(static_cast<uint32_t>(start));
    uint64_t lo = start + 1, hi = kWords;  // the first word after the run is in [lo, hi]
    while (lo < hi) {
      const uint64_t mid = lo + (hi - lo) / 2;
      if (move(static_cast<uint32_t>(mid)) == value) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    runs.emplace_back(start, value);
    start = lo;
    if (runs.size() > 1024) {
      ADD_FAILURE() << "cluster_move: more than 1024 runs of words";
      return {};
    }
  }
  const auto value_of = [&](uint64_t w) {
    size_t k = runs.size() - 1;
    while (runs[k].first > w) --k;
    return runs[k].second;
  };
  std::vector<uint64_t> probes;
  for (uint64_t k = 0; k < (uint64_t(1) << 18); ++k) probes.push_back((k * 0x9E3779B9u) % kWords);
  std::mt19937_64 rng(20240519);
  for (int k = 0; k < (1 << 16); ++k) probes.push_back(rng() % kWords);
  for (uint64_t k = 0; k < 4096; ++k) {
    probes.push_back(k);
    probes.push_back(kWords - 1 - k);
  }
  for (const auto& run : runs) {
    for (uint64_t w = run.first >= 2 ? run.first - 2 : 0; w < std::min(run.first + 3, kWords); ++w)
      probes.push_back(w);
  }
  for (uint64_t w : probes) {
    const int got = move(static_cast<uint32_t>(w));
    if (got != value_of(w)) {
      ADD_FAILURE() << "cluster_move is not made of runs of words: word " << w << " gives " << got
                    << ", its run " << value_of(w);
      return {};
    }
  }
  std::map<int, Outcome> by_value;
  for (size_t k = 0; k < runs.size(); ++k) {
    const uint64_t end = k + 1 < runs.size() ? runs[k + 1].first : kWords;
    auto [it, fresh] = by_value.emplace(
        runs[k].second, Outcome{runs[k].second, static_cast<uint32_t>(runs[k].first), 0, 0.0});
    it->second.words += end - runs[k].first;
  }
  std::vector<Outcome> out;
  for (const auto& [value, outcome] : by_value) out.push_back(outcome);
  return out;
}

/// Exact one-step transition matrices, [from * states + to].
struct Matrices {
  int64_t states = 0;
  std::vector<double> sw, wolff;              ///< with the words' exact counts
  std::vector<double> sw_ideal, wolff_ideal;  ///< with the probabilities the algorithms ask for
};

/// Labellings and transition matrices of one model on one tiny lattice.
template <int D, class Model>
class ExactClusterChain {
 public:
  using Params = typename Model::Params;
  using Spin = typename Model::Spin;
  using Labelling = std::map<uint64_t, double>;  ///< labels (4 bits a site) -> probability

  ExactClusterChain(const std::vector<int64_t>& dims, const Params& params, int values)
      : params_(params), values_(values), forward_(periodic_forward_neighbours(dims)) {
    volume_ = static_cast<int>(forward_.size());
    if (volume_ > 15) throw std::invalid_argument("ExactClusterChain: at most 15 sites");
    states_ = 1;
    for (int i = 0; i < volume_; ++i) {
      place_.push_back(states_);
      states_ *= values_;
    }
    int64_t extents[D];
    const int64_t ghosts[D] = {};
    for (int a = 0; a < D; ++a) extents[a] = dims[static_cast<size_t>(a)];
    geometry_ = ClusterLattice<D>::make(Checkerboard<D>::make(extents), ghosts);
    // Bonds joining the same pair (both ways round an extent of 2) make one class.
    std::map<std::pair<int, int>, size_t> pair_class;
    for (int i = 0; i < volume_; ++i) {
      for (int a = 0; a < D; ++a) {
        const int j = forward_[i][a];
        const auto key = std::make_pair(std::min(i, j), std::max(i, j));
        const auto [it, fresh] = pair_class.emplace(key, pairs_.size());
        if (fresh) pairs_.emplace_back();
        pairs_[it->second].push_back(i * D + a);
      }
    }
    for (int single = 0; single < 2; ++single) {
      for (int v = 0; v < values_; ++v) outcomes_[single].push_back(move_outcomes(v, single));
    }
  }

  int volume() const { return volume_; }
  int64_t states() const { return states_; }
  /// Largest |words * n / 2^32 - 1| of any outcome of n equally likely ones.
  double word_deviation() const { return word_deviation_; }
  int64_t labellings() const { return labellings_; }
  int64_t mismatches() const { return mismatches_; }
  /// Whether every moved value is one the algorithm allows (else the matrices mean nothing).
  bool valid() const { return valid_; }
  int digit(int64_t state, int i) const { return static_cast<int>(state / place_[i] % values_); }

  /// P(labels | state) over the bond configurations drawn in `state`: by classes, or with
  /// `each_bond` every uncertain bond and ghost bond on its own.
  Labelling labelling_distribution(int64_t state, bool each_bond) {
    std::vector<Spin> spin(static_cast<size_t>(volume_));
    for (int i = 0; i < volume_; ++i) spin[i] = Digits<Model>::spin(digit(state, i));
    const typename Model::Embedding e{};
    bond_.assign(static_cast<size_t>(volume_ * D), 0.0);
    ghost_.assign(static_cast<size_t>(volume_), 0.0);
    for (int i = 0; i < volume_; ++i) {
      for (int a = 0; a < D; ++a)
        bond_[i * D + a] =
            bond_probability(Model::cluster_bond(params_, e, spin[i], spin[forward_[i][a]]));
      ghost_[i] = bond_probability(Model::ghost_bond(params_, e, spin[i]));
    }
    Labelling out;
    if (each_bond) {
      every_bond(out);
    } else {
      by_classes(out);
    }
    return out;
  }

  /// Adds the rows of `state` to the matrices.
  void add_rows(int64_t state, const Labelling& labelling, Matrices& m) const {
    const double v = volume_;
    for (const auto& [key, p] : labelling) {
      // The moved clusters (not the ghost's), their sites and, per outcome, the state change.
      std::map<uint32_t, std::vector<int>> clusters;
      for (int i = 0; i < volume_; ++i) {
        const uint32_t label = (key >> (4 * i)) & 15;
        if (label != kGhostLabel) clusters[label].push_back(i);
      }
      struct Move {
        std::vector<int> sites;
        std::vector<int64_t> change[2];  ///< [single][outcome]
        const std::vector<Outcome>* outcomes[2];
      };
      std::vector<Move> moves;
      std::map<uint32_t, size_t> move_of;
      for (const auto& [label, sites] : clusters) {
        move_of[label] = moves.size();
        Move move{sites, {}, {}};
        const int d0 = digit(state, sites[0]);
        for (int i : sites) {
          if (digit(state, i) != d0) {
            ADD_FAILURE() << "state " << state << ": a cluster joins sites of different values";
            return;
          }
        }
        for (int single = 0; single < 2; ++single) {
          move.outcomes[single] = &outcomes_[single][static_cast<size_t>(d0)];
          for (const Outcome& o : *move.outcomes[single])
            move.change[single].push_back(change(state, sites, o.word, single));
        }
        moves.push_back(std::move(move));
      }
      // Swendsen-Wang: every cluster takes one of its outcomes, independently.
      std::vector<size_t> choice(moves.size(), 0);
      while (true) {
        double exact = p, ideal = p;
        int64_t to = state;
        for (size_t c = 0; c < moves.size(); ++c) {
          const Outcome& o = (*moves[c].outcomes[0])[choice[c]];
          exact *= static_cast<double>(o.words) / kTwo32;
          ideal *= o.ideal;
          to += moves[c].change[0][choice[c]];
        }
        if (to < 0 || to >= states_) {
          ADD_FAILURE() << "state " << state << ": a move leaves the states";
          return;
        }
        m.sw[state * states_ + to] += exact;
        m.sw_ideal[state * states_ + to] += ideal;
        size_t c = 0;
        while (c < moves.size() && ++choice[c] == moves[c].outcomes[0]->size()) choice[c++] = 0;
        if (c == moves.size()) break;
      }
      // Wolff: the cluster of a uniform seed site takes one of its outcomes; the ghost's stays.
      for (int seed = 0; seed < volume_; ++seed) {
        const uint32_t label = (key >> (4 * seed)) & 15;
        if (label == kGhostLabel) {
          m.wolff[state * states_ + state] += p / v;
          m.wolff_ideal[state * states_ + state] += p / v;
          continue;
        }
        const size_t c = move_of.at(label);
        const std::vector<Outcome>& outcomes = *moves[c].outcomes[1];
        for (size_t k = 0; k < outcomes.size(); ++k) {
          const int64_t to = state + moves[c].change[1][k];
          if (to < 0 || to >= states_) {
            ADD_FAILURE() << "state " << state << ": a move leaves the states";
            return;
          }
          m.wolff[state * states_ + to] += p / v * static_cast<double>(outcomes[k].words) / kTwo32;
          m.wolff_ideal[state * states_ + to] += p / v * outcomes[k].ideal;
        }
      }
    }
  }

  Matrices matrices() {
    Matrices m;
    m.states = states_;
    for (auto* t : {&m.sw, &m.wolff, &m.sw_ideal, &m.wolff_ideal})
      t->assign(static_cast<size_t>(states_ * states_), 0.0);
    for (int64_t s = 0; s < states_; ++s) add_rows(s, labelling_distribution(s, false), m);
    return m;
  }

 private:
  /// Outcomes of Model::cluster_move on a site of value v: word 0 alone when the model draws
  /// none. Swendsen-Wang must give each of the `values` values (q for Potts, +-1 for Ising), Wolff
  /// each value but v, uniformly up to one word of 2^32.
  std::vector<Outcome> move_outcomes(int v, int single) {
    const typename Model::Embedding e{};
    const Spin old = Digits<Model>::spin(v);
    const auto move = [&](uint32_t word) {
      return Digits<Model>::digit(Model::cluster_move(params_, e, old, word, single != 0), values_);
    };
    std::vector<Outcome> out = Model::cluster_move_draws(single != 0)
                                   ? count_outcomes(move)
                                   : std::vector<Outcome>{{move(0), 0, kWords, 0.0}};
    std::vector<int> want, got;
    for (int k = 0; k < values_; ++k) {
      if (!single || k != v) want.push_back(k);
    }
    for (const Outcome& o : out) got.push_back(o.value);
    EXPECT_EQ(got, want) << "the values a moved site of value " << v << " takes ("
                         << (single ? "Wolff" : "Swendsen-Wang") << ")";
    const double n = static_cast<double>(out.size());
    for (Outcome& o : out) {
      o.ideal = 1.0 / n;
      const double deviation = std::fabs(static_cast<double>(o.words) * n / kTwo32 - 1.0);
      EXPECT_LT(deviation * kTwo32, n) << "value " << v << " -> " << o.value << " by " << o.words
                                       << " of 2^32 words: not uniform to one word";
      word_deviation_ = std::max(word_deviation_, deviation);
    }
    if (got != want) valid_ = false;
    return out;
  }

  /// The state change when the sites of a cluster take cluster_move with `word`.
  int64_t change(int64_t state, const std::vector<int>& sites, uint32_t word, int single) const {
    const typename Model::Embedding e{};
    int64_t delta = 0;
    for (int i : sites) {
      const int old = digit(state, i);
      const int now = Digits<Model>::digit(
          Model::cluster_move(params_, e, Digits<Model>::spin(old), word, single != 0), values_);
      delta += (now - old) * place_[i];
    }
    return delta;
  }

  /// Every uncertain bond and ghost bond on its own.
  void every_bond(Labelling& out) {
    std::vector<int> free_bonds, free_ghosts;
    for (int b = 0; b < volume_ * D; ++b) {
      if (bond_[b] > 0 && bond_[b] < 1) free_bonds.push_back(b);
    }
    for (int i = 0; i < volume_; ++i) {
      if (ghost_[i] > 0 && ghost_[i] < 1) free_ghosts.push_back(i);
    }
    const size_t bits = free_bonds.size() + free_ghosts.size();
    if (bits > 20) throw std::invalid_argument("every_bond: too many bonds");
    for (uint64_t m = 0; m < (uint64_t(1) << bits); ++m) {
      std::vector<uint8_t> mask(static_cast<size_t>(volume_), 0);
      std::vector<char> to_ghost(static_cast<size_t>(volume_), 0);
      double w = 1;
      for (int b = 0; b < volume_ * D; ++b) {
        if (bond_[b] == 1) mask[b / D] |= static_cast<uint8_t>(1u << (b % D));
      }
      for (int i = 0; i < volume_; ++i) to_ghost[i] = ghost_[i] == 1;
      for (size_t k = 0; k < free_bonds.size(); ++k) {
        const int b = free_bonds[k];
        if (m >> k & 1) {
          w *= bond_[b];
          mask[b / D] |= static_cast<uint8_t>(1u << (b % D));
        } else {
          w *= 1 - bond_[b];
        }
      }
      for (size_t k = 0; k < free_ghosts.size(); ++k) {
        const int i = free_ghosts[k];
        if (m >> (free_bonds.size() + k) & 1) {
          w *= ghost_[i];
          to_ghost[i] = 1;
        } else {
          w *= 1 - ghost_[i];
        }
      }
      label(mask, to_ghost, w, out);
    }
  }

  /// By classes: a pair of sites is joined with probability 1 - prod (1 - p) over its bonds,
  /// a cluster is the ghost's with 1 - prod (1 - p_ghost) over its sites.
  void by_classes(Labelling& out) {
    struct Class {
      std::vector<int> members;  ///< bonds (or sites) that may be occupied
      double present, absent;
    };
    const auto make_class = [](const std::vector<int>& members, const std::vector<double>& p) {
      Class c{{}, 0.0, 1.0};
      for (int k : members) {
        if (p[k] == 0) continue;
        c.members.push_back(k);
        c.present += p[k] * (1 - c.present);  // 1 - prod (1 - p), without cancellation
        c.absent *= 1 - p[k];
      }
      return c;
    };
    std::vector<Class> pairs;
    for (const auto& bonds : pairs_) pairs.push_back(make_class(bonds, bond_));
    std::vector<size_t> free_pairs, sure_pairs;
    for (size_t k = 0; k < pairs.size(); ++k) {
      if (pairs[k].absent == 0) {
        sure_pairs.push_back(k);
      } else if (pairs[k].present > 0) {
        free_pairs.push_back(k);
      }
    }
    if (free_pairs.size() > 24) throw std::invalid_argument("by_classes: too many bonds");
    for (uint64_t m = 0; m < (uint64_t(1) << free_pairs.size()); ++m) {
      double w = 1;
      std::vector<size_t> joined = sure_pairs;
      for (size_t k = 0; k < free_pairs.size(); ++k) {
        const Class& c = pairs[free_pairs[k]];
        if (m >> k & 1) {
          w *= c.present;
          joined.push_back(free_pairs[k]);
        } else {
          w *= c.absent;
        }
      }
      // Clusters of the joined pairs, then which of them the ghost may hold.
      std::vector<int> root(static_cast<size_t>(volume_));
      for (int i = 0; i < volume_; ++i) root[i] = i;
      for (bool changed = true; changed;) {
        changed = false;
        for (size_t k : joined) {
          const int i = bond_site(pairs_[k][0]), j = forward_[i][pairs_[k][0] % D];
          const int r = std::min(root[i], root[j]);
          if (root[i] != r || root[j] != r) {
            root[i] = root[j] = r;
            changed = true;
          }
        }
      }
      std::vector<Class> clusters;
      std::vector<size_t> free_clusters, sure_clusters;
      for (int r = 0; r < volume_; ++r) {
        std::vector<int> sites;
        for (int i = 0; i < volume_; ++i) {
          if (root[i] == r) sites.push_back(i);
        }
        if (sites.empty()) continue;
        Class c = make_class(sites, ghost_);
        if (c.absent == 0) {
          sure_clusters.push_back(clusters.size());
        } else if (c.present > 0) {
          free_clusters.push_back(clusters.size());
        }
        clusters.push_back(c);
      }
      for (uint64_t g = 0; g < (uint64_t(1) << free_clusters.size()); ++g) {
        double wg = w;
        std::vector<size_t> ghosted = sure_clusters;
        for (size_t k = 0; k < free_clusters.size(); ++k) {
          const Class& c = clusters[free_clusters[k]];
          if (g >> k & 1) {
            wg *= c.present;
            ghosted.push_back(free_clusters[k]);
          } else {
            wg *= c.absent;
          }
        }
        // A configuration of the class: a rotating nonempty choice of each class's members.
        std::vector<uint8_t> mask(static_cast<size_t>(volume_), 0);
        std::vector<char> to_ghost(static_cast<size_t>(volume_), 0);
        for (size_t k : joined) {
          const std::vector<int>& members = pairs[k].members;
          const uint64_t pick = 1 + rotation_++ % ((uint64_t(1) << members.size()) - 1);
          for (size_t b = 0; b < members.size(); ++b) {
            if (pick >> b & 1)
              mask[bond_site(members[b])] |= static_cast<uint8_t>(1u << (members[b] % D));
          }
        }
        for (size_t k : ghosted) {
          const std::vector<int>& members = clusters[k].members;
          const uint64_t pick = 1 + rotation_++ % ((uint64_t(1) << members.size()) - 1);
          for (size_t b = 0; b < members.size(); ++b) {
            if (pick >> b & 1) to_ghost[members[b]] = 1;
          }
        }
        label(mask, to_ghost, wg, out);
      }
    }
  }

  static int bond_site(int bond) { return bond / D; }

  /// Labels one bond configuration with the code's functors, checks them against a plain
  /// labelling, and adds w to its labels' probability.
  void label(const std::vector<uint8_t>& mask, const std::vector<char>& to_ghost, double w,
             Labelling& out) {
    ++labellings_;
    // The code: InitialParents, UniteBonds and FlattenLabels (the generic label_box).
    std::vector<uint8_t> bonds(static_cast<size_t>(volume_));
    std::vector<uint32_t> parent(static_cast<size_t>(volume_ + 1));
    parent[0] = kGhostNode;
    for (int i = 0; i < volume_; ++i) {
      bonds[i] = static_cast<uint8_t>(mask[i] | (to_ghost[i] ? kGhostBond : 0));
    }
    const InitialParents initial{bonds.data(), parent.data()};
    for (int i = 0; i < volume_; ++i) initial(i);
    const UniteBonds<D> unite{geometry_, bonds.data(), parent.data()};
    for (int i = 0; i < volume_; ++i) unite(i);
    const FlattenLabels flatten{parent.data()};
    for (int n = 0; n <= volume_; ++n) flatten(n);
    const ClusterLabels labels{parent.data(), nullptr, volume_};
    // Plain: the smallest site of each component, 0 for those with a ghost bond.
    std::vector<int> smallest(static_cast<size_t>(volume_));
    for (int i = 0; i < volume_; ++i) smallest[i] = i;
    for (bool changed = true; changed;) {
      changed = false;
      for (int i = 0; i < volume_; ++i) {
        for (int a = 0; a < D; ++a) {
          if (!(mask[i] >> a & 1)) continue;
          const int j = forward_[i][a];
          const int s = std::min(smallest[i], smallest[j]);
          if (smallest[i] != s || smallest[j] != s) {
            smallest[i] = smallest[j] = s;
            changed = true;
          }
        }
      }
    }
    std::vector<char> ghost_cluster(static_cast<size_t>(volume_), 0);
    for (int i = 0; i < volume_; ++i) {
      if (to_ghost[i]) ghost_cluster[smallest[i]] = 1;
    }
    uint64_t key = 0;
    bool same = true;
    for (int i = 0; i < volume_; ++i) {
      const uint64_t code = labels(0, i);
      const uint64_t want = ghost_cluster[smallest[i]] ? kGhostLabel : 1 + smallest[i];
      same = same && code == want;
      key |= code << (4 * i);
    }
    if (!same) {
      if (mismatches_ == 0) {
        std::string shown;
        for (int i = 0; i < volume_; ++i) {
          shown += " " + std::to_string(labels(0, i)) + "/" +
                   std::to_string(ghost_cluster[smallest[i]] ? 0 : 1 + smallest[i]);
        }
        ADD_FAILURE() << "labels (code/plain) differ:" << shown;
      }
      ++mismatches_;
    }
    out[key] += w;
  }

  Params params_;
  int values_;
  std::vector<std::vector<int>> forward_;
  int volume_ = 0;
  int64_t states_ = 1;
  std::vector<int64_t> place_;
  ClusterLattice<D> geometry_{};
  std::vector<std::vector<int>> pairs_;            ///< bonds (site * D + axis) joining each pair
  std::vector<std::vector<Outcome>> outcomes_[2];  ///< [single][value]
  double word_deviation_ = 0;
  bool valid_ = true;
  std::vector<double> bond_, ghost_;  ///< the current state's bond probabilities
  uint64_t rotation_ = 0;
  int64_t labellings_ = 0;
  int64_t mismatches_ = 0;
};

/// Rows sum to 1, detailed balance with respect to pi to `tolerance` relative, and every state
/// reaches every other (forward and backward breadth-first search from state 0).
void expect_reversible_irreducible(const std::vector<double>& t, const std::vector<double>& pi,
                                   int64_t n, double tolerance, const std::string& what) {
  double worst_row = 0, worst_balance = 0;
  int64_t bad = 0;
  for (int64_t s = 0; s < n; ++s) {
    double row = 0;
    for (int64_t u = 0; u < n; ++u) {
      row += t[s * n + u];
      if (u <= s) continue;
      const double forward = pi[s] * t[s * n + u], backward = pi[u] * t[u * n + s];
      const double top = std::max(forward, backward);
      if (top == 0) continue;
      const double violation = std::fabs(forward - backward) / top;
      if (violation > tolerance && bad++ == 0) {
        ADD_FAILURE() << what << ": detailed balance " << s << " <-> " << u << ": " << forward
                      << " vs " << backward << " (relative " << violation << ")";
      }
      worst_balance = std::max(worst_balance, violation);
    }
    worst_row = std::max(worst_row, std::fabs(row - 1));
  }
  EXPECT_EQ(bad, 0) << what << ": pairs out of detailed balance, worst " << worst_balance;
  EXPECT_LT(worst_row, 1e-12) << what << ": a row does not sum to 1";
  for (int backward = 0; backward < 2; ++backward) {
    std::vector<char> seen(static_cast<size_t>(n), 0);
    std::vector<int64_t> queue{0};
    seen[0] = 1;
    for (size_t k = 0; k < queue.size(); ++k) {
      for (int64_t u = 0; u < n; ++u) {
        const double p = backward ? t[u * n + queue[k]] : t[queue[k] * n + u];
        if (p > 0 && !seen[u]) {
          seen[u] = 1;
          queue.push_back(u);
        }
      }
    }
    EXPECT_EQ(static_cast<int64_t>(queue.size()), n)
        << what << ": not irreducible (" << (backward ? "backward" : "forward") << " from 0)";
  }
  std::printf("  %-44s worst |row - 1| %.1e, worst detailed-balance violation %.1e\n", what.c_str(),
              worst_row, worst_balance);
}

/// The whole check of one chain: labels, the explicit enumeration where it is small, matrices
/// (exact counts and ideal probabilities) against pi.
template <int D, class Model>
void expect_exact_chain(ExactClusterChain<D, Model>& chain, const std::vector<double>& pi,
                        bool compare_each_bond, const std::string& what) {
  ASSERT_TRUE(chain.valid()) << what;
  if (compare_each_bond) {
    for (int64_t s = 0; s < chain.states(); ++s) {
      const auto classes = chain.labelling_distribution(s, false);
      const auto each = chain.labelling_distribution(s, true);
      ASSERT_EQ(classes.size(), each.size()) << what << ": labellings of state " << s;
      for (const auto& [key, p] : each) {
        const auto it = classes.find(key);
        ASSERT_NE(it, classes.end()) << what << ": state " << s << " labels " << key;
        EXPECT_NEAR(it->second, p, 1e-13 * p) << what << ": state " << s << " labels " << key;
      }
    }
  }
  const Matrices m = chain.matrices();
  EXPECT_EQ(chain.mismatches(), 0) << what << ": labellings that differ";
  const int64_t n = m.states;
  // Ideal: to rounding. With the words' counts: the same where the counts are exactly uniform
  // (2^32 divisible by the number of outcomes), else off by at most the counts' deviation per
  // moved cluster and direction.
  const double slack = 2.0 * chain.volume() * chain.word_deviation();
  expect_reversible_irreducible(m.sw_ideal, pi, n, 1e-12, what + " SW ideal");
  expect_reversible_irreducible(m.wolff_ideal, pi, n, 1e-12, what + " Wolff ideal");
  expect_reversible_irreducible(m.sw, pi, n, 1e-12 + slack, what + " SW");
  expect_reversible_irreducible(m.wolff, pi, n, 1e-12 + slack, what + " Wolff");
  for (size_t k = 0; k < m.sw.size(); ++k) {
    ASSERT_LE(std::fabs(m.sw[k] - m.sw_ideal[k]), slack * m.sw_ideal[k] + 1e-15) << what;
    ASSERT_LE(std::fabs(m.wolff[k] - m.wolff_ideal[k]), slack * m.wolff_ideal[k] + 1e-15) << what;
  }
  std::printf("  %-44s %lld states, %lld labellings, word-count deviation %.2e\n", what.c_str(),
              static_cast<long long>(n), static_cast<long long>(chain.labellings()),
              chain.word_deviation());
}

/// A bond threshold against its exact probability p = 1 - exp(-x) (rounded to the nearest of
/// 2^32, kept in [1, 2^32 - 1]), and the coupling x_eff = -log(1 - threshold / 2^32) it implies
/// against x: |x_eff - x| <= 2^-33 / (1 - p) (the slope of x in p); returns x_eff. Relative to
/// x that bound is 2^-33 e^x / x, below 2^-31 only for x e^-x >= 1/4 (0.36 <= x <= 2.15):
/// rounding alone can take a smaller or larger x further than 2^-31 relative, so the bound is
/// what is checked, and the relative difference is printed (below 2^-31 in every case here).
double expect_effective(uint64_t threshold, double x, const std::string& what) {
  const double p = -std::expm1(-x);
  EXPECT_LE(std::fabs(static_cast<double>(threshold) - std::ldexp(p, 32)), 0.5 + 1e-6) << what;
  const double p_eff = bond_probability(threshold);
  const double x_eff = -std::log1p(-p_eff);
  const double bound = std::ldexp(1.0, -33) * (1 + 1e-6) / (1 - std::max(p, p_eff));
  EXPECT_LE(std::fabs(x_eff - x), bound) << what << ": effective " << x_eff << ", wanted " << x;
  std::printf("  %-44s x %.6f, x_eff - x %+.2e (relative %+.2e; 2^-31 = 4.66e-10)\n", what.c_str(),
              x, x_eff - x, (x_eff - x) / x);
  return x_eff;
}

/// (1 - p)^n by multiplication.
double power(double base, int n) {
  double r = 1;
  for (int k = 0; k < n; ++k) r *= base;
  return r;
}

template <int D>
void check_ising(const std::vector<int64_t>& dims, double beta, double h, bool each_bond) {
  const std::string what = "Ising " + std::to_string(D) + "d V" + std::to_string(volume_of(dims)) +
                           " b" + std::to_string(beta).substr(0, 4) + " h" +
                           std::to_string(h).substr(0, 5);
  const IsingParams params = make_ising_params(D, beta, h, 1);
  const NoEmbedding e{};
  // The FK bond joins equal spins only, with 1 - exp(-2 beta); the ghost joins spins of the
  // field's sign only, with 1 - exp(-2 beta |h|).
  const uint64_t bond = IsingModel::cluster_bond(params, e, 1, 1);
  EXPECT_EQ(IsingModel::cluster_bond(params, e, -1, -1), bond);
  EXPECT_EQ(IsingModel::cluster_bond(params, e, 1, -1), 0u);
  EXPECT_EQ(IsingModel::cluster_bond(params, e, -1, 1), 0u);
  expect_effective(bond, 2 * beta, what + " 2 beta");
  const double keep = 1 - bond_probability(bond);  // exp(-2 beta_eff)
  double ghost_keep = 1;                           // exp(-2 beta_eff |h|_eff)
  const int sign = h > 0 ? 1 : -1;
  if (h == 0) {
    EXPECT_EQ(IsingModel::ghost_bond(params, e, 1), 0u);
    EXPECT_EQ(IsingModel::ghost_bond(params, e, -1), 0u);
  } else {
    const uint64_t ghost = IsingModel::ghost_bond(params, e, static_cast<int8_t>(sign));
    EXPECT_EQ(IsingModel::ghost_bond(params, e, static_cast<int8_t>(-sign)), 0u);
    expect_effective(ghost, 2 * beta * std::fabs(h), what + " 2 beta |h|");
    ghost_keep = 1 - bond_probability(ghost);
  }
  ExactClusterChain<D, IsingModel> chain(dims, params, 2);
  // pi(s) = exp(-2 beta_eff #unsatisfied bonds - 2 (beta |h|)_eff #spins against the field),
  // the Boltzmann weight up to a constant, by plain loops.
  const std::vector<std::vector<int>> forward = periodic_forward_neighbours(dims);
  std::vector<double> pi(static_cast<size_t>(chain.states()));
  for (int64_t s = 0; s < chain.states(); ++s) {
    int unsatisfied = 0, against = 0;
    for (int i = 0; i < chain.volume(); ++i) {
      const int si = (s >> i & 1) ? 1 : -1;
      for (int a = 0; a < D; ++a) unsatisfied += si != ((s >> forward[i][a] & 1) ? 1 : -1);
      against += h != 0 && si != sign;
    }
    pi[s] = power(keep, unsatisfied) * power(ghost_keep, against);
  }
  expect_exact_chain(chain, pi, each_bond, what);
}

template <int D>
void check_potts(const std::vector<int64_t>& dims, int q, double beta, double h, bool each_bond) {
  const std::string what = "Potts q" + std::to_string(q) + " " + std::to_string(D) + "d V" +
                           std::to_string(volume_of(dims)) + " b" +
                           std::to_string(beta).substr(0, 4) + " h" +
                           std::to_string(h).substr(0, 4);
  const PottsParams params = make_potts_params(D, q, beta, h, 1);
  const NoEmbedding e{};
  const uint64_t bond = PottsModel::cluster_bond(params, e, 0, 0);
  for (int a = 0; a < q; ++a) {
    for (int b = 0; b < q; ++b) {
      EXPECT_EQ(
          PottsModel::cluster_bond(params, e, static_cast<uint8_t>(a), static_cast<uint8_t>(b)),
          a == b ? bond : 0u);
    }
    if (a > 0) {
      EXPECT_EQ(PottsModel::ghost_bond(params, e, static_cast<uint8_t>(a)), 0u);
    }
  }
  expect_effective(bond, beta, what + " beta");
  const double keep = 1 - bond_probability(bond);  // exp(-beta_eff)
  double ghost_keep = 1;                           // exp(-(beta h)_eff)
  if (h == 0) {
    EXPECT_EQ(PottsModel::ghost_bond(params, e, 0), 0u);
  } else {
    const uint64_t ghost = PottsModel::ghost_bond(params, e, 0);
    expect_effective(ghost, beta * h, what + " beta h");
    ghost_keep = 1 - bond_probability(ghost);
  }
  ExactClusterChain<D, PottsModel> chain(dims, params, q);
  const std::vector<std::vector<int>> forward = periodic_forward_neighbours(dims);
  std::vector<double> pi(static_cast<size_t>(chain.states()));
  for (int64_t s = 0; s < chain.states(); ++s) {
    int unequal = 0, nonzero = 0;
    for (int i = 0; i < chain.volume(); ++i) {
      for (int a = 0; a < D; ++a) unequal += chain.digit(s, i) != chain.digit(s, forward[i][a]);
      nonzero += chain.digit(s, i) != 0;
    }
    pi[s] = power(keep, unequal) * power(ghost_keep, nonzero);
  }
  expect_exact_chain(chain, pi, each_bond, what);
}

TEST(ClusterExactMatrix, Ising1d) {
  for (double beta : {0.3, 0.9}) {
    for (double h : {0.0, 0.4, -0.25}) {
      check_ising<1>({4}, beta, h, true);
      check_ising<1>({6}, beta, h, true);
    }
  }
}

TEST(ClusterExactMatrix, Ising2d) {
  for (double beta : {0.3, 0.9}) {
    for (double h : {0.0, 0.4, -0.25}) {
      check_ising<2>({2, 2}, beta, h, true);
      check_ising<2>({2, 4}, beta, h, false);
    }
  }
}

TEST(ClusterExactMatrix, Ising3d) {
  for (double beta : {0.2, 0.7}) {
    for (double h : {0.0, 0.3, -0.5}) check_ising<3>({2, 2, 2}, beta, h, false);
  }
}

TEST(ClusterExactMatrix, Potts) {
  for (int q : {3, 4}) {
    for (double beta : {0.5, 1.3}) {
      for (double h : {0.0, 0.6}) {
        check_potts<1>({4}, q, beta, h, true);
        check_potts<2>({2, 2}, q, beta, h, true);
      }
    }
  }
}

// ---- Part 2: the engine against exact averages ----

/// Errors a binned mean may lie from its exact value: the file makes 195 comparisons, and
/// 4.5 errors (two-sided 6.8e-6 each) keep the chance that any of them fails by chance near 1e-3
/// for any one chain. (At 4 errors it was 1 %; the chain of the quads' bonds drew one: P(B = 9)
/// of the last Potts case at -4.41 errors, where 6 further seeds of that case and 6 of its Wolff
/// moves alone gave -1.4 ... +1.8, and their 132 comparisons an rms of 0.93 errors.)
constexpr double kMaxErrors = 4.5;

/// Expects the series' binned mean within kMaxErrors errors of the exact value, and prints both.
void expect_close(const std::vector<double>& series, double exact, const std::string& what) {
  const Estimate e = binned_estimate(series);
  const double z = z_score(e, exact);
  EXPECT_LT(std::fabs(z), kMaxErrors)
      << what << ": " << e.mean << " +- " << e.error << ", exact " << exact;
  std::printf("    %-28s %10.6f +- %.6f  exact %10.6f  z %+5.2f\n", what.c_str(), e.mean, e.error,
              exact, z);
}

struct EngineCase {
  ModelKind model = ModelKind::ising;
  int q = 2;
  std::vector<int64_t> dims;
  double beta = 0;
  double h = 0;
  std::vector<UpdateAlgorithm> sequence;
  int wolff_clusters = 1;
  int replicas = 1;
  int64_t measurements = 0;
  uint64_t seed = 0;
};

/// The probabilities of the bond sum's levels above 5 % against a series of it (fewer levels,
/// fewer chances of a kMaxErrors fluctuation among the file's 195 comparisons).
void expect_bond_distribution(const std::vector<double>& bonds, const std::map<int, double>& exact,
                              const std::string& what) {
  int levels = 0;
  for (const auto& [level, probability] : exact) {
    if (probability < 0.05) continue;
    std::vector<double> indicator(bonds.size());
    for (size_t k = 0; k < bonds.size(); ++k) indicator[k] = std::lround(bonds[k]) == level;
    expect_close(indicator, probability, what + " P(B = " + std::to_string(level) + ")");
    ++levels;
  }
  EXPECT_GE(levels, 2) << what;
}

/// Runs the CPU engine and compares every replica's series with exact enumeration: energy,
/// magnetization (Ising: signed; Potts: the real part and the modulus squared), <m^2>, the
/// bond-sum distribution (Potts at h = 0 only: at h != 0 the bond sum is not an observable),
/// and at h = 0 the improved estimator against <M^2> / V.
void check_engine(const EngineCase& c) {
  EngineSettings s;
  s.model = c.model;
  s.q = c.q;
  s.dims = c.dims;
  s.beta = c.beta;
  s.field = c.h;
  s.sequence = c.sequence;
  s.wolff_clusters = c.wolff_clusters;
  s.replicas = c.replicas;
  s.seed = c.seed;
  s.cpu_threads = 1;
  std::string dims;
  for (int64_t l : c.dims) dims += (dims.empty() ? "" : "x") + std::to_string(l);
  std::string sequence;
  for (UpdateAlgorithm a : c.sequence) sequence += " " + std::to_string(static_cast<int>(a));
  std::printf("  %s q %d, %s, beta %g, h %g, sequence%s, %d Wolff clusters, %d replicas\n",
              c.model == ModelKind::ising ? "Ising" : "Potts", c.q, dims.c_str(), c.beta, c.h,
              sequence.c_str(), c.wolff_clusters, c.replicas);
  auto engine = make_cpu_engine(s);
  const std::vector<std::string> names = engine->observable_names();
  const size_t observables = names.size();
  const bool improved = names.back() == "m2_improved";
  EXPECT_EQ(improved, c.h == 0) << "m2_improved is reported at h = 0 only";
  const auto series = sample(*engine, 200, c.measurements, 1);
  const double volume = static_cast<double>(engine->volume());
  for (int r = 0; r < c.replicas; ++r) {
    const std::string what = "replica " + std::to_string(r);
    const auto& energy = series[r * observables + 0];
    const auto& m = series[r * observables + 1];
    if (c.model == ModelKind::ising) {
      const ExactIsing exact = exact_ising(c.dims, c.beta, c.h);
      expect_close(energy, exact.energy, what + " energy");
      expect_close(m, exact.magnetization, what + " m");
      expect_close(map(m, [](double x) { return x * x; }), exact.magnetization_squared,
                   what + " m^2");
      std::vector<double> bonds(energy.size());
      for (size_t k = 0; k < bonds.size(); ++k) bonds[k] = -(energy[k] + c.h * m[k]) * volume;
      expect_bond_distribution(bonds, exact.bond_distribution, what);
      if (improved) {
        expect_close(series[r * observables + observables - 1],
                     exact.magnetization_squared * volume, what + " m2_improved");
      }
    } else {
      const ExactPotts exact = exact_potts(c.dims, c.q, c.beta, c.h);
      expect_close(energy, exact.energy, what + " energy");
      expect_close(map(m, [](double x) { return x * x; }), exact.magnetization_squared,
                   what + " |m|^2");
      expect_close(series[r * observables + 2], exact.magnetization_re, what + " Re m");
      if (c.h == 0) {
        expect_bond_distribution(map(energy, [&](double x) { return -x * volume; }),
                                 exact.bond_distribution, what);
      }
      if (improved) {
        expect_close(series[r * observables + observables - 1],
                     exact.magnetization_squared * volume, what + " m2_improved");
      }
    }
  }
}

constexpr auto kSw = UpdateAlgorithm::swendsen_wang;
constexpr auto kWolff = UpdateAlgorithm::wolff;
constexpr auto kMetropolis = UpdateAlgorithm::metropolis;
constexpr auto kHeatBath = UpdateAlgorithm::heatbath;

// Measurements per replica, one sweep apart: 4e5 sweeps of these lattices take about 4 s on
// one core and give binned errors of 0.1-0.2 % of |<E>| and of m2_improved and 0.1-0.4 % of
// <m^2> (3e-4 to 3e-3 absolute), so a bias of more than kMaxErrors errors, about 0.6-1.1 % of a
// quantity, fails. Thresholds off by their rounding (2^-33) are far below that; part 1 checks
// those.
constexpr int64_t kMeasurements = 400000;

TEST(ClusterEngineExact, IsingSwendsenWang) {
  const int64_t n = kMeasurements;
  check_engine({ModelKind::ising, 2, {12}, 0.6, 0.0, {kSw}, 1, 2, n, 11});
  check_engine({ModelKind::ising, 2, {4, 4}, 0.4, 0.0, {kSw}, 1, 1, n, 12});
  check_engine({ModelKind::ising, 2, {4, 4}, 0.3, 0.2, {kSw}, 1, 1, n, 13});
  check_engine({ModelKind::ising, 2, {4, 2, 2}, 0.2, -0.1, {kSw}, 1, 1, n, 14});
  check_engine({ModelKind::ising, 2, {2, 2, 2, 2}, 0.12, 0.0, {kSw}, 1, 1, n, 15});
}

TEST(ClusterEngineExact, IsingWolff) {
  const int64_t n = kMeasurements;
  check_engine({ModelKind::ising, 2, {12}, 0.5, 0.3, {kWolff}, 2, 1, n, 21});
  check_engine({ModelKind::ising, 2, {4, 4}, 0.4, 0.0, {kWolff}, 1, 2, n, 22});
  check_engine({ModelKind::ising, 2, {4, 4}, 0.3, -0.15, {kWolff}, 3, 1, n, 23});
  check_engine({ModelKind::ising, 2, {2, 2, 2}, 0.25, 0.0, {kWolff}, 1, 1, n, 24});
  check_engine({ModelKind::ising, 2, {2, 2, 2, 2}, 0.12, 0.1, {kWolff}, 2, 1, n, 25});
}

TEST(ClusterEngineExact, IsingMixed) {
  const int64_t n = kMeasurements;
  check_engine({ModelKind::ising, 2, {4, 4}, 0.35, 0.1, {kMetropolis, kSw}, 1, 1, n, 31});
  check_engine({ModelKind::ising, 2, {4, 2, 2}, 0.2, 0.0, {kHeatBath, kWolff}, 1, 1, n, 32});
  check_engine({ModelKind::ising, 2, {4, 4}, 0.44, 0.0, {kSw, kWolff}, 2, 1, n, 33});
}

TEST(ClusterEngineExact, Potts) {
  const int64_t n = kMeasurements;
  check_engine({ModelKind::potts, 3, {2, 6}, 0.9, 0.0, {kSw}, 1, 1, n, 41});
  check_engine({ModelKind::potts, 3, {2, 6}, 0.7, 0.4, {kWolff}, 2, 1, n, 42});
  check_engine({ModelKind::potts, 4, {2, 4}, 1.0, 0.0, {kWolff}, 1, 2, n, 43});
  check_engine({ModelKind::potts, 4, {8}, 0.8, 0.5, {kSw}, 1, 1, n, 44});
  check_engine({ModelKind::potts, 3, {2, 2, 2}, 0.6, 0.3, {kMetropolis, kSw}, 1, 1, n, 45});
  check_engine({ModelKind::potts, 4, {2, 4}, 0.9, 0.0, {kHeatBath, kWolff}, 2, 1, n, 46});
}

}  // namespace
}  // namespace lattica::test
