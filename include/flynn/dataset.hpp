#pragma once
// In-memory labelled (or unlabelled) data: what every loader produces and every learner
// consumes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "flynn/table_schema.hpp"

namespace flynn {

/// The one spelling under which a class name is stored and compared, the same for every
/// data format, for --labels lists and for model files: a name that is a decimal integer
/// with an optional sign, leading zeros and a fractional part of zeros only ("+01", "1.0",
/// "007.000") becomes the integer's plain spelling ("1", "1", "7"; "-0" becomes "0").
/// Every other name is kept byte for byte (case and spaces matter: "cat" != "Cat").
std::string canonical_label(std::string_view name);

/// An ordered list of class names. The position of a name is its class id everywhere in
/// flynn (counts, model files, predictions), so every party of a federation and every
/// model that is merged must use the same list in the same order.
class LabelSet {
 public:
  /// The longest class name, in bytes (what a model file can hold).
  static constexpr std::size_t kMaxNameBytes = 1u << 16;

  LabelSet() = default;
  /// Takes the names in the given order; throws flynn::Error on duplicates, empty names,
  /// names longer than kMaxNameBytes and names holding control characters (bytes below
  /// 0x20, such as NUL, tab or newline, and 0x7F), which no output format could show.
  explicit LabelSet(std::vector<std::string> names);

  /// The natural order of a set of names: numeric order when every name parses as an
  /// integer (so "2" < "10"), plain byte-wise order otherwise. Duplicates are removed.
  static LabelSet sorted(std::vector<std::string> names);
  /// Parses "a,b,c" (the CLI's --labels), each item in its canonical_label spelling;
  /// throws on empty items or duplicates.
  static LabelSet parse_list(const std::string& comma_separated);

  std::size_t size() const { return names_.size(); }
  bool empty() const { return names_.empty(); }
  const std::string& name(std::size_t id) const { return names_.at(id); }
  const std::vector<std::string>& names() const { return names_; }
  /// The id of a name, or -1 when it is not in the set.
  long find(const std::string& name) const;
  /// "a,b,c": the inverse of parse_list.
  std::string joined() const;

  bool operator==(const LabelSet& other) const { return names_ == other.names_; }
  bool operator!=(const LabelSet& other) const { return !(*this == other); }

 private:
  std::vector<std::string> names_;
};

/// Rows of float features, optionally with a class per row.
///
/// Loaders fill `labels` with ids into `classes` (the sorted set of names seen in the file,
/// see LabelSet::sorted) and `row_origin` with where each row came from (1-based line for
/// text formats, 1-based record for IDX) so that later errors can point into the file.
struct Dataset {
  std::string source;                  ///< file name (or "<memory>") for error messages
  std::size_t n_rows = 0;              ///< number of rows
  std::size_t n_features = 0;          ///< features per row (d)
  std::vector<float> features;         ///< row-major n_rows × n_features, all finite
  bool has_labels = false;             ///< whether `labels` is filled
  std::vector<std::uint32_t> labels;   ///< class id per row, into `classes`
  LabelSet classes;                    ///< names of the class ids used in `labels`
  std::vector<std::uint64_t> row_origin;  ///< 1-based line/record of each row in `source`
  /// Table loaders (CSV, ARFF): the feature columns behind `features` (names, one-hot
  /// categories, imputation means; see TableSchema). Empty for positional data.
  TableSchema schema;
  /// The id column's text per row when the loader was given one (LoadOptions::id_column,
  /// or the model's id column at prediction); empty otherwise. schema.id_name names it.
  std::vector<std::string> row_ids;

  const float* row(std::size_t i) const { return features.data() + i * n_features; }
  float* row(std::size_t i) { return features.data() + i * n_features; }

  /// For each class id of this dataset, its id in `target` (0xFFFFFFFF for a class no row
  /// uses and `target` lacks). Throws flynn::Error naming the file and line of the first
  /// row whose label is not in `target`, e.g. "data.csv:9: label 'zebra' is not one of
  /// the known classes (a,b)".
  std::vector<std::uint32_t> class_ids_in(const LabelSet& target) const;
  /// Each row's class id in `target` (labels[r] re-expressed), with class_ids_in's check.
  std::vector<std::uint32_t> row_class_ids_in(const LabelSet& target) const;

  /// Re-expresses the labels in the ids of `target` (e.g. a model's or --labels' list).
  /// Throws flynn::Error naming the file and line of the first row whose label is not in
  /// `target`, leaving the dataset unchanged. On unlabelled data it only sets `classes`.
  void relabel(const LabelSet& target);

  /// A new dataset holding the given rows (in that order), same classes, schema and ids.
  Dataset subset(const std::vector<std::size_t>& rows) const;

  /// Appends the rows of `other` (same n_features). Labels are merged by name: the class
  /// list stays as it is when `other` brings no new name, and becomes the sorted union
  /// otherwise. `source` becomes "a.csv+b.csv". The schema stays this one's (or becomes
  /// `other`'s when this dataset is blank); row ids are kept only when both sides have them.
  void append(const Dataset& other);

  /// Rows per class id (size classes.size()); throws flynn::Error on unlabelled data.
  std::vector<std::size_t> class_sizes() const;

  /// Throws flynn::Error unless the dataset has at least two classes with rows:
  /// a classifier cannot be trained on one class. Sends a warning (io::send_warning) when
  /// the classes look like another column than the class (label_column_warning).
  void require_trainable() const;
};

/// The warning for labelled rows whose classes look like another column than the class:
/// most rows with a class of their own (an identifier, a measurement), or many classes of a
/// single row (at least 10, and a quarter of the classes). Names `column` (the label
/// column's name, or "" when it has none) and the --label-col option; "" when the classes
/// look like classes.
std::string label_column_warning(const std::string& source, const std::string& column,
                                 const std::vector<std::uint64_t>& rows_per_class);

/// The rows of each of `n_classes` classes among `labels` (class ids): the one count of
/// class sizes from labels (Dataset::class_sizes, class priors and class weights of
/// labelled rows, cross-validation's folds). Throws flynn::Error naming a label that is
/// not below n_classes.
std::vector<std::uint64_t> rows_per_class(const std::vector<std::uint32_t>& labels,
                                          std::size_t n_classes);

}  // namespace flynn
