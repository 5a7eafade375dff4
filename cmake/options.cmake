# What the options imply, checked once: a layer needs the layers below it (one that cannot
# be built is left out, and says so), CI mode needs everything, and the compile flags that
# every target shares.

# The option that gated eval, baselines and the harness together is gone; a build asking
# for it to be off (and not for FLYNN_BUILD_EVAL=OFF) would otherwise build them silently.
if(DEFINED FLYNN_BUILD_EXPERIMENTS AND NOT FLYNN_BUILD_EXPERIMENTS AND FLYNN_BUILD_EVAL)
  message(FATAL_ERROR "FLYNN_BUILD_EXPERIMENTS=OFF is gone: use FLYNN_BUILD_EVAL=OFF (which leaves out "
                      "flynn::eval and every layer and front-end above it) or FLYNN_BUILD_HARNESS=OFF")
endif()

# flynn_leave_out(OPTION WHY): OPTION is off for this configuration, with a note saying why.
macro(flynn_leave_out option why)
  if(${option})
    message(STATUS "${option}: off (${why})")
    set(${option} OFF)
  endif()
endmacro()
if(FLYNN_CORE_ONLY)
  if(FLYNN_REQUIRE_ALL)
    message(FATAL_ERROR "FLYNN_REQUIRE_ALL (CI mode) builds everything: not with FLYNN_CORE_ONLY")
  endif()
  foreach(opt FLYNN_BUILD_EVAL FLYNN_BUILD_PYTHON FLYNN_BUILD_BENCH FLYNN_BUILD_FUZZ FLYNN_WITH_MPI FLYNN_WITH_GRPC)
    flynn_leave_out(${opt} "FLYNN_CORE_ONLY")
  endforeach()
endif()
if(NOT FLYNN_BUILD_EVAL)
  flynn_leave_out(FLYNN_BUILD_BASELINES "needs FLYNN_BUILD_EVAL")
endif()
if(NOT FLYNN_BUILD_BASELINES)
  flynn_leave_out(FLYNN_BUILD_HARNESS "needs FLYNN_BUILD_BASELINES")
  flynn_leave_out(FLYNN_BUILD_APPS "needs FLYNN_BUILD_BASELINES")
endif()
if(NOT FLYNN_WITH_FAISS)
  flynn_leave_out(FLYNN_BUILD_HARNESS "needs FAISS")
endif()

if(FLYNN_REQUIRE_ALL)
  foreach(opt FLYNN_WITH_MPI FLYNN_WITH_GRPC FLYNN_WITH_FAISS FLYNN_BUILD_EVAL FLYNN_BUILD_BASELINES
              FLYNN_BUILD_HARNESS)
    if(NOT ${opt})
      message(FATAL_ERROR "FLYNN_REQUIRE_ALL (CI mode) needs ${opt}=ON")
    endif()
  endforeach()
endif()

if(FLYNN_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

# -Wundef: a file testing FLYNN_HAVE_* without including flynn/build_config.hpp fails to build.
add_compile_options(-Wall -Wextra -Wundef)
# No fused multiply-add unless the code asks for one: aarch64's baseline has it and GCC
# would contract a·b + c into it there (x86-64's baseline has none), so scores and
# probabilities would differ in their last bits between architectures.
add_compile_options(-ffp-contract=off)
if(FLYNN_REQUIRE_ALL)
  add_compile_options(-Werror)
endif()
