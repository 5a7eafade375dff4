#pragma once
// A header that reaches fmt: check_header_deps.cmake must reject it (the test of the test).
#include <fmt/format.h>
