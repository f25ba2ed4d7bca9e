# The two processes of a run keep to their sides (cmake -DROOT=DIR -P dispatch_sides.cmake):
#   dispatch/caller/      what runs in the caller: plan, start, wait, status, apply;
#   dispatch/supervisor/  what runs in the detached supervisor: the harness, its log, its end;
#   dispatch/*            what both read and write: the run's files, its processes, its worktree.
# The caller never includes the supervisor's files nor the supervisor the caller's; the shared
# files include neither side; outside dispatch/, product code reaches the supervisor through its
# entry (supervisor/supervise.hpp) only. Tests may include anything. Fails naming each breach.
if(NOT ROOT)
  message(FATAL_ERROR "dispatch_sides.cmake: pass -DROOT=<source tree>")
endif()

set(breaches "")
# Each include in the files `glob` matches that matches `forbidden_regex` is a breach, but for the
# one header ARGV2 names (a side's entry).
function(check_files glob forbidden_regex)
  file(GLOB_RECURSE files RELATIVE "${ROOT}" "${ROOT}/${glob}")
  foreach(file IN LISTS files)
    if(NOT file MATCHES "\\.(cpp|hpp|inc)$" OR file MATCHES "^tests/")
      continue()
    endif()
    file(STRINGS "${ROOT}/${file}" includes REGEX "^#include \"dispatch/")
    foreach(line IN LISTS includes)
      if(line MATCHES "${forbidden_regex}" AND NOT line STREQUAL "#include \"${ARGV2}\"")
        list(APPEND breaches "${file}: ${line}")
      endif()
    endforeach()
  endforeach()
  set(breaches "${breaches}" PARENT_SCOPE)
endfunction()

check_files("dispatch/caller/*" "\"dispatch/supervisor/")
check_files("dispatch/supervisor/*" "\"dispatch/caller/")
file(GLOB shared RELATIVE "${ROOT}" "${ROOT}/dispatch/*.?pp")
foreach(file IN LISTS shared)
  check_files("${file}" "\"dispatch/(caller|supervisor)/")
endforeach()
foreach(layer core adapters probes reports cli)
  check_files("${layer}/*" "\"dispatch/supervisor/" "dispatch/supervisor/supervise.hpp")
endforeach()

if(breaches)
  list(JOIN breaches "\n  " listed)
  message(FATAL_ERROR "a side of dispatch/ includes what it may not:\n  ${listed}")
endif()
message(STATUS "dispatch/ keeps its sides")
