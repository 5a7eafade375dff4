#pragma once
// The whole core public API of flynn in one include: configuration, the FlyNN classifier
// and its building blocks (FlyHash, filters, scoring), data (Dataset, DataView, loaders),
// model files, tables held in memory, atomic file output, metrics, the seeded random
// generator, errors, progress, the SIMD target and kernels in use, and the version.
//
// It needs only flynn::core: no header of FAISS, MPI, OpenSSL, Boost, CLI11, fmt or
// nlohmann_json is reached from here (a ctest check, flynn_umbrella_header_is_core_only,
// holds it to that). The federated, eval and baselines layers have their own headers under
// flynn/federated/, flynn/eval/ and flynn/baselines/.
#include "flynn/class_counts.hpp"
#include "flynn/classifier.hpp"
#include "flynn/config.hpp"
#include "flynn/data_view.hpp"
#include "flynn/dataset.hpp"
#include "flynn/error.hpp"
#include "flynn/fly_hasher.hpp"
#include "flynn/imputation.hpp"
#include "flynn/io/atomic_file.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/io/memory_table.hpp"
#include "flynn/io/model_file.hpp"
#include "flynn/io/predict_file.hpp"
#include "flynn/io/row_stream.hpp"
#include "flynn/io/table_columns.hpp"
#include "flynn/io/train_file.hpp"
#include "flynn/lifting_matrix.hpp"
#include "flynn/metrics.hpp"
#include "flynn/preprocess.hpp"
#include "flynn/progress.hpp"
#include "flynn/random.hpp"
#include "flynn/scoring.hpp"
#include "flynn/simd.hpp"
#include "flynn/table_schema.hpp"
#include "flynn/version.hpp"
