#pragma once
// The integer state of a FlyNN model: for each class l and unit i, the number of class-l
// training rows whose FlyHash has bit i set. Filters are derived from it (w = γ^count),
// and because counts are plain integer sums they merge, federate and un-learn exactly.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace flynn {

class ClassCounts {
 public:
  ClassCounts() = default;
  /// All-zero counts for n_classes × m units.
  ClassCounts(std::size_t n_classes, std::uint32_t m);
  /// Counts for n_classes × m units taken from `values` (class-major, n_classes × m of
  /// them; throws flynn::Error otherwise), with zero rows per class. Lets a loader fill a
  /// reserved vector as it decodes instead of zero-filling a table first.
  ClassCounts(std::size_t n_classes, std::uint32_t m, std::vector<std::uint32_t> values);

  std::size_t n_classes() const { return n_classes_; }
  std::uint32_t m() const { return m_; }

  /// The m counts of class `cls` (class-major layout: class 0's m counts, then class 1's…).
  const std::uint32_t* of_class(std::size_t cls) const { return counts_.data() + cls * m_; }
  std::uint32_t* of_class(std::size_t cls) { return counts_.data() + cls * m_; }
  /// All n_classes × m counts.
  const std::vector<std::uint32_t>& values() const { return counts_; }
  std::vector<std::uint32_t>& values() { return counts_; }

  /// Training rows seen per class (what `info` reports, and what forget checks).
  const std::vector<std::uint64_t>& rows_per_class() const { return rows_; }
  std::vector<std::uint64_t>& rows_per_class() { return rows_; }
  std::uint64_t total_rows() const;

  /// Records one training row of class `cls` with the given ρ winners.
  void add_row(std::size_t cls, const std::uint32_t* winners, std::uint32_t rho) {
    std::uint32_t* c = of_class(cls);
    for (std::uint32_t k = 0; k < rho; ++k) ++c[winners[k]];
    ++rows_[cls];
  }

  /// Adds `other` entry-wise (same shape). Throws flynn::Error on a shape mismatch or if a
  /// count would overflow 2^32 − 1.
  ClassCounts& operator+=(const ClassCounts& other);
  /// Subtracts `other` entry-wise (same shape). Throws flynn::Error, leaving *this
  /// unchanged, if any count or row total would become negative: the rows being removed
  /// were not all part of this model's training data.
  ClassCounts& operator-=(const ClassCounts& other);

  bool operator==(const ClassCounts& o) const {
    return n_classes_ == o.n_classes_ && m_ == o.m_ && counts_ == o.counts_ && rows_ == o.rows_;
  }
  bool operator!=(const ClassCounts& o) const { return !(*this == o); }

  /// Largest count (0 for an empty model).
  std::uint32_t max_count() const;
  /// Number of non-zero counts.
  std::uint64_t nonzero() const;

 private:
  std::size_t n_classes_ = 0;
  std::uint32_t m_ = 0;
  std::vector<std::uint32_t> counts_;
  std::vector<std::uint64_t> rows_;
};

}  // namespace flynn
