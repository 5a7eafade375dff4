#pragma once
// Classification metrics: the one home for accuracy figures used by the CLI, the
// federated layer and the evaluation layer.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace flynn {

/// Number of rows with predicted[i] == truth[i]. The two vectors must have the same length.
std::size_t count_correct(const std::vector<std::uint32_t>& truth,
                          const std::vector<std::uint32_t>& predicted);

/// Fraction of rows with predicted[i] == truth[i] (0 for no rows). The two vectors must
/// have the same length.
double accuracy(const std::vector<std::uint32_t>& truth, const std::vector<std::uint32_t>& predicted);

/// Per-class tallies of predictions against the truth: the one home of the figures built
/// from them (balanced accuracy, macro-F1, each class's precision, recall and F1). O(L)
/// memory, whatever the number of rows.
class ClassTally {
 public:
  explicit ClassTally(std::size_t n_classes);
  /// The tally of `truth` against `predicted` (same length, class ids < n_classes).
  static ClassTally of(const std::vector<std::uint32_t>& truth, const std::vector<std::uint32_t>& predicted,
                       std::size_t n_classes);
  /// Counts one row; both ids must be < n_classes().
  void add(std::uint32_t truth, std::uint32_t predicted);

  std::size_t n_classes() const { return support_.size(); }
  std::uint64_t rows() const { return rows_; }
  std::uint64_t correct() const { return correct_; }
  std::uint64_t support(std::size_t l) const { return support_[l]; }      ///< rows of class l
  std::uint64_t predicted(std::size_t l) const { return predicted_[l]; }  ///< rows predicted l
  std::uint64_t true_positives(std::size_t l) const { return hits_[l]; }
  /// Whether class l occurs in the truth or the predictions (what the macro averages cover).
  bool present(std::size_t l) const { return support_[l] > 0 || predicted_[l] > 0; }

  /// TP / rows predicted l (0 when none is).
  double precision(std::size_t l) const;
  /// TP / rows of class l (0 when there are none).
  double recall(std::size_t l) const;
  /// 2·TP / (rows of class l + rows predicted l) (0 when both are 0).
  double f1(std::size_t l) const;
  /// correct / rows (0 for no rows).
  double accuracy() const;
  /// Mean recall over the classes with rows (0 for no rows).
  double balanced_accuracy() const;
  /// Mean F1 over the present classes, as scikit-learn's f1_score(average="macro") over
  /// those labels (0 for no rows).
  double macro_f1() const;

 private:
  std::vector<std::uint64_t> support_, predicted_, hits_;
  std::uint64_t rows_ = 0, correct_ = 0;
};

/// Balanced accuracy: the mean over classes present in `truth` of the fraction of their
/// rows predicted correctly. `truth` and `predicted` are class ids < n_classes.
double balanced_accuracy(const std::vector<std::uint32_t>& truth,
                         const std::vector<std::uint32_t>& predicted, std::size_t n_classes);

/// Macro-averaged F1: the mean over classes that occur in `truth` or `predicted` of
/// 2·TP_l / (rows of class l + rows predicted l), as scikit-learn's
/// f1_score(average="macro") over those labels. Class ids < n_classes.
double macro_f1(const std::vector<std::uint32_t>& truth, const std::vector<std::uint32_t>& predicted,
                std::size_t n_classes);

}  // namespace flynn
