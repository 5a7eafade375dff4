# Every dependency, found once for the whole build (Debian packages, scripts/setup.sh). The
# optional components set FLYNN_HAVE_* (0 or 1), which flynn/build_config.hpp records; in CI
# mode (FLYNN_REQUIRE_ALL) a missing one is an error, so no test group can vanish.

# flynn_require(FOUND WHAT): in CI mode, fail unless FOUND is true, naming WHAT is missing.
function(flynn_require found what)
  if(FLYNN_REQUIRE_ALL AND NOT ${found})
    message(FATAL_ERROR "FLYNN_REQUIRE_ALL (CI mode): ${what}")
  endif()
endfunction()

# ---- flynn::core: Highway, zlib, fmt
find_package(Threads REQUIRED)
find_package(ZLIB REQUIRED)
find_package(hwy REQUIRED)
find_package(fmt REQUIRED)

# ---- flynn::federated: OpenSSL; the public schema files (flynn/federated/public_schema.hpp)
# are JSON (nlohmann_json, header-only)
if(NOT FLYNN_CORE_ONLY)
  find_package(OpenSSL REQUIRED COMPONENTS Crypto SSL)
endif()
find_package(nlohmann_json REQUIRED)  # also the tests' support code

# ---- flynn::federated_mpi: MPI (C++)
set(FLYNN_HAVE_MPI 0)
if(FLYNN_WITH_MPI)
  find_package(MPI COMPONENTS CXX)
  flynn_require(MPI_CXX_FOUND "MPI (C++) not found; the MPI tests would not run")
  if(MPI_CXX_FOUND)
    set(FLYNN_HAVE_MPI 1)
  endif()
endif()

# ---- flynn::federated_wire: protobuf, for proto/federation.proto's messages (also in the
# fuzz build, which has no gRPC); flynn::federated_grpc: grpc++ (Debian ships it with
# pkg-config files only) and the grpc_cpp_plugin for the service
if(FLYNN_WITH_GRPC OR FLYNN_BUILD_FUZZ)
  find_package(Protobuf)
endif()
set(FLYNN_HAVE_GRPC 0)
if(FLYNN_WITH_GRPC)
  find_package(PkgConfig)
  if(PkgConfig_FOUND)
    pkg_check_modules(GRPCPP IMPORTED_TARGET grpc++)
  endif()
  find_program(FLYNN_GRPC_CPP_PLUGIN grpc_cpp_plugin)
  if(GRPCPP_FOUND AND Protobuf_FOUND AND FLYNN_GRPC_CPP_PLUGIN)
    set(FLYNN_HAVE_GRPC 1)
  else()
    flynn_require(FLYNN_HAVE_GRPC "gRPC not found (grpc++ via pkg-config: ${GRPCPP_FOUND}, protobuf: "
                                  "${Protobuf_FOUND}, grpc_cpp_plugin: ${FLYNN_GRPC_CPP_PLUGIN}); the gRPC "
                                  "cross-silo tests would not run")
    message(STATUS "gRPC (grpc++ via pkg-config, protobuf, grpc_cpp_plugin) not found: "
                   "building without flynn federated serve/join")
  endif()
endif()

# ---- flynn::eval: cairo (Debian libcairo2-dev, through pkg-config) draws the PNG figures
# of the reports (`--report`, report_files.hpp); optional, REQUIRED in CI mode
set(FLYNN_HAVE_CAIRO 0)
if(FLYNN_BUILD_EVAL)
  find_package(PkgConfig)
  if(PkgConfig_FOUND)
    pkg_check_modules(CAIRO cairo)
  endif()
  if(CAIRO_FOUND)
    set(FLYNN_HAVE_CAIRO 1)
  else()
    flynn_require(FLYNN_HAVE_CAIRO "cairo not found (Debian libcairo2-dev); reports could not draw their figures")
    message(STATUS "cairo (libcairo2-dev) not found: --report is refused with a message saying so")
  endif()
endif()

# ---- flynn::baselines: FAISS (kNN, SBFC) and hnswlib (header-only, Debian libhnswlib-dev:
# the third ANN peer of `flynn bench --peers`)
set(FLYNN_HAVE_FAISS 0)
set(FLYNN_HAVE_HNSWLIB 0)
if(FLYNN_BUILD_BASELINES AND FLYNN_WITH_FAISS)
  find_package(OpenMP REQUIRED COMPONENTS CXX)  # FAISS's exported target refers to it
  find_package(faiss REQUIRED)
  set(FLYNN_HAVE_FAISS 1)
  find_path(FLYNN_HNSWLIB_INCLUDE_DIR hnswlib/hnswlib.h)
  if(FLYNN_HNSWLIB_INCLUDE_DIR)
    set(FLYNN_HAVE_HNSWLIB 1)
  else()
    flynn_require(FLYNN_HAVE_HNSWLIB "hnswlib not found (Debian libhnswlib-dev); flynn bench --peers would leave it out")
    message(STATUS "hnswlib (libhnswlib-dev) not found: flynn bench --peers runs without it")
  endif()
endif()

# ---- the paper harness: Boost.Math
if(FLYNN_BUILD_HARNESS)
  find_package(Boost REQUIRED)
endif()

# ---- the front-ends: CLI11; pybind11 for the interpreter setup.py runs under
# (Python_EXECUTABLE), so the module matches the Python that imports it even when the first
# python3 on PATH is another one
if(FLYNN_BUILD_APPS)
  find_package(CLI11 REQUIRED)
endif()
if(FLYNN_BUILD_PYTHON)
  find_package(Python 3.8 REQUIRED COMPONENTS Interpreter Development.Module)
  find_package(pybind11 2.10 CONFIG REQUIRED)
endif()

# ---- the checks: GoogleTest; Python 3 for the CLI's hostile-input suite (standard library
# only); Google Benchmark
if(FLYNN_BUILD_TESTS)
  find_package(GTest REQUIRED)
  find_package(Python3 COMPONENTS Interpreter)
  flynn_require(Python3_Interpreter_FOUND "Python 3 not found; the hostile suite would not run")
endif()
if(FLYNN_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()
