# ctest: kvplan_install (see cmake/install.cmake). Run as:
#   cmake -DBUILD=<build dir> -DSCRATCH=<scratch dir> -P install_test.cmake
file(REMOVE_RECURSE "${SCRATCH}")
file(MAKE_DIRECTORY "${SCRATCH}/prefix" "${SCRATCH}/elsewhere")

function(run)
  execute_process(COMMAND ${ARGN} WORKING_DIRECTORY "${SCRATCH}/elsewhere"
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

function(expect_file path)
  if(NOT EXISTS "${path}")
    message(FATAL_ERROR "missing after install: ${path}")
  endif()
endfunction()

# 1. cmake --install into a prefix.
run("${CMAKE_COMMAND}" --install "${BUILD}" --prefix "${SCRATCH}/prefix")
set(P "${SCRATCH}/prefix")
expect_file("${P}/bin/kvplan")
expect_file("${P}/share/kvplan/models/llama-3.1-8b.yaml")
expect_file("${P}/share/kvplan/hardware/h100-sxm.yaml")
expect_file("${P}/share/man/man1/kvplan.1")
expect_file("${P}/share/bash-completion/completions/kvplan")
run("${P}/bin/kvplan" size llama-3.1-70b -c 4K --format json)
if(NOT out MATCHES "\"bytes_total\": 1342177280")
  message(FATAL_ERROR "installed kvplan size gave:\n${out}")
endif()
# The man page covers every subcommand the help lists.
file(READ "${P}/share/man/man1/kvplan.1" man)
foreach(cmd size models check import-hf)
  if(NOT man MATCHES "\n\\.SS ${cmd}\n")
    message(FATAL_ERROR "kvplan.1 has no section for ${cmd}")
  endif()
endforeach()
find_program(MAN_PROG man)
find_program(GROFF_PROG groff)
if(GROFF_PROG)
  run("${GROFF_PROG}" -man -Tutf8 -ww -z "${P}/share/man/man1/kvplan.1")
endif()
# Bash completion: subcommands, model and GPU names, from the installed binary.
find_program(BASH_PROG bash)
if(BASH_PROG)
  # Bash text kept out of CMake's string parsing: written verbatim, then run.
  file(WRITE "${SCRATCH}/complete.sh" [=[
source "$1/share/bash-completion/completions/kvplan"
PATH="$1/bin:$PATH"
comp() { COMP_WORDS=("$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); COMPREPLY=(); _kvplan; echo "${COMPREPLY[*]}"; }
comp kvplan ch
comp kvplan size llama-3.1-
comp kvplan capacity llama-3.1-8b --gpu h100
comp kvplan check --for
]=])
  run("${BASH_PROG}" "${SCRATCH}/complete.sh" "${P}")
  string(REPLACE "\n" ";" lines "${out}")
  list(GET lines 0 l0)
  list(GET lines 1 l1)
  list(GET lines 2 l2)
  list(GET lines 3 l3)
  if(NOT l0 STREQUAL "check" OR NOT l1 MATCHES "llama-3.1-8b" OR NOT l2 MATCHES "h100-sxm"
     OR NOT l3 STREQUAL "--format")
    message(FATAL_ERROR "bash completion gave:\n${out}")
  endif()
endif()

# 2. The .deb, unpacked into a scratch root (as on a fresh Debian 12).
find_program(DPKG_DEB dpkg-deb)
find_program(CPACK_PROG cpack HINTS "${CMAKE_COMMAND}/..")
get_filename_component(cmake_dir "${CMAKE_COMMAND}" DIRECTORY)
if(DPKG_DEB)
  execute_process(COMMAND "${cmake_dir}/cpack" -G DEB -B "${SCRATCH}/deb"
                  WORKING_DIRECTORY "${BUILD}" OUTPUT_VARIABLE out ERROR_VARIABLE err
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "cpack failed:\n${out}\n${err}")
  endif()
  file(GLOB debs "${SCRATCH}/deb/kvplan_*.deb")
  list(LENGTH debs n)
  if(NOT n EQUAL 1)
    message(FATAL_ERROR "expected one kvplan_*.deb, found: ${debs}")
  endif()
  run("${DPKG_DEB}" --field ${debs} Package Version Depends)
  if(NOT out MATCHES "Depends: libc6")
    message(FATAL_ERROR "deb control:\n${out}")
  endif()
  run("${DPKG_DEB}" -x ${debs} "${SCRATCH}/root")
  expect_file("${SCRATCH}/root/usr/share/man/man1/kvplan.1")
  run("${SCRATCH}/root/usr/bin/kvplan" size gpt2 -c 1K)
  if(NOT out MATCHES "gpt2")
    message(FATAL_ERROR "kvplan from the .deb gave:\n${out}")
  endif()
endif()
message(STATUS "install test passed")
