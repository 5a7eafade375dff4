#pragma once
// An IDX images file held whole: what load_dataset, RowStream and the file trainer read IDX
// through. IDX is binary with fixed-size records, so its rows are addressed where they lie:
// uint8 images (MNIST, Fashion-MNIST) stay the file's own bytes, which the FlyHash kernels
// read as a caller's pixel array would be read (a uint8 DataView: no conversion to floats,
// a quarter of the memory); other element types are converted to floats once.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "flynn/data_view.hpp"
#include "flynn/dataset.hpp"

namespace flynn::io::detail {

class IdxImages {
 public:
  /// Parses `images` (the whole decompressed file, kept) and `labels` (raw IDX bytes, may be
  /// empty) with parse_idx's checks and messages (loaders.hpp); `labels_source` names the
  /// labels file in them (default: source + " (labels)").
  IdxImages(std::string images, std::string_view labels, const std::string& source,
            const std::string& labels_source = {});

  std::size_t n_rows() const { return records_.n_rows; }
  std::size_t n_features() const { return n_features_; }

  /// Every row: the file's bytes for uint8 images, the converted floats otherwise. Valid
  /// while this object lives (it may be moved: the view is made on each call).
  DataView rows() const;

  /// The rows' labels and origins without their features: a Dataset of n_rows() rows and
  /// no feature columns (n_features = 0) holding source, has_labels, labels, classes (the
  /// file's, sorted) and row_origin (1-based record numbers), for Dataset::class_ids_in and
  /// require_trainable, whose messages name the file and record.
  const Dataset& records() const { return records_; }

  /// Rows [first, first + count) as parse_idx gives them (float features, the file's class
  /// list, their records as row_origin).
  Dataset dataset(std::size_t first, std::size_t count) const;

 private:
  std::string bytes_;           // the images file; uint8 rows are read in place
  std::size_t payload_offset_ = 0;
  bool uint8_ = false;
  std::vector<float> values_;   // the values of any other element type, as floats
  std::size_t n_features_ = 0;
  Dataset records_;
};

}  // namespace flynn::io::detail
