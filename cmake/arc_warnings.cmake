# arc_set_warnings(target): project warnings and the optional sanitizers.
function(arc_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wno-unused-parameter)
  if(ARC_SANITIZE)
    # -fno-sanitize=vptr: CAF 0.17's task_queue downcasts its list head (a known false report).
    target_compile_options(${target} PRIVATE -fsanitize=${ARC_SANITIZE} -fno-omit-frame-pointer
      -fno-sanitize-recover=all -fno-sanitize=vptr)
    # Debian's gcc drops its default --as-needed under -fsanitize, which would make every
    # binary need the driver stub (libcuda.so.1) that CUDA::nvrtc drags in; the binaries load
    # the driver with dlopen and must start without one.
    target_link_options(${target} PRIVATE -fsanitize=${ARC_SANITIZE} -Wl,--as-needed)
  endif()
endfunction()

# arc_library(name SOURCES... DEPS ...): one library per module.
function(arc_library name)
  cmake_parse_arguments(A "" "" "SOURCES;DEPS" ${ARGN})
  set(real_sources ${A_SOURCES})
  list(FILTER real_sources INCLUDE REGEX "\\.cc$")
  if(NOT real_sources)
    # A module with headers only so far.
    add_library(${name} INTERFACE)
    target_link_libraries(${name} INTERFACE ${A_DEPS})
    return()
  endif()
  add_library(${name} STATIC ${A_SOURCES})
  target_link_libraries(${name} PUBLIC ${A_DEPS})
  arc_set_warnings(${name})
endfunction()
