cmake_minimum_required(VERSION 3.22)
# Fails unless a header preprocesses without reaching any header of FAISS, MPI, OpenSSL,
# Boost, CLI11, fmt or nlohmann_json: what a flynn::core-only consumer must be able to
# include without those libraries installed.
#
#   cmake -DCXX=<compiler> -DINCLUDES="dir1|dir2" -DHEADER=flynn/flynn.hpp -DWORK=<dir>
#         -P check_header_deps.cmake
#
# It lists the header's dependencies with the compiler's -M (every file the preprocessor
# opens, transitively) and matches them against those libraries' include folders.
foreach(var CXX INCLUDES HEADER WORK)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_header_deps.cmake: -D${var}=... is required")
  endif()
endforeach()

file(MAKE_DIRECTORY "${WORK}")
set(probe "${WORK}/probe.cpp")
file(WRITE "${probe}" "#include <${HEADER}>\n")
string(REPLACE "|" ";" include_dirs "${INCLUDES}")
set(include_args "")
foreach(dir IN LISTS include_dirs)
  if(dir)
    list(APPEND include_args "-I${dir}")
  endif()
endforeach()

execute_process(
  COMMAND "${CXX}" -std=c++20 -M ${include_args} "${probe}"
  RESULT_VARIABLE rc OUTPUT_VARIABLE deps ERROR_VARIABLE errors)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "preprocessing <${HEADER}> failed:\n${errors}")
endif()

# -M writes "probe.o: a.hpp b.hpp \" lines; split on blanks and backslash-newlines.
string(REGEX REPLACE "[ \t\r\n\\\\]+" ";" files "${deps}")
set(banned "")
foreach(f IN LISTS files)
  if(f MATCHES "/(faiss|openssl|boost|CLI|fmt|nlohmann)/" OR f MATCHES "/mpi[^/]*\\.h$"
     OR f MATCHES "/(openmpi|mpich)/")
    list(APPEND banned "${f}")
  endif()
endforeach()
if(banned)
  # One unwrapped line per file (FATAL_ERROR text is re-wrapped), for people and for the
  # test of this check to read.
  foreach(f IN LISTS banned)
    message(STATUS "banned header reached: ${f}")
  endforeach()
  message(FATAL_ERROR "<${HEADER}> pulls in headers of libraries flynn::core does not depend on")
endif()
list(LENGTH files n)
message(STATUS "<${HEADER}> reaches ${n} files, none of FAISS, MPI, OpenSSL, Boost, CLI11, fmt or nlohmann_json")
