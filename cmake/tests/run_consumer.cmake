# Install and consumer tests, run by CTest (label "install"; CMakeLists.txt registers them).
# One step per invocation, chosen by -DMODE=...:
#
#   install            cmake --install <BUILD_DIR> --prefix <PREFIX> --strip, then check the
#                      installed layout (soname links, permissions, stripped libraries, header,
#                      package files; the Fortran files exactly when HAVE_FORTRAN; MPI in the
#                      package files and the library's NEEDED entries exactly when HAVE_MPI)
#   cmake              configure, build and ctest the consumer project SOURCE_DIR against PREFIX
#                      (find_package(farfield CONFIG REQUIRED); its tests check results)
#   build              configure and build SOURCE_DIR against PREFIX into WORK_DIR/build (the
#                      examples; CTest runs the programs)
#   version            find_package(farfield 2.0) is rejected (SameMajorVersion)
#   pkgconfig-c        SOURCE_DIR/consumer.c built with `pkg-config farfield` (shared and static)
#   pkgconfig-fortran  SOURCE_DIR/consumer.f90 built with `pkg-config farfield-fortran`
#   nofortran          configure SOURCE_DIR (this source tree) with no Fortran compiler to be
#                      found: AUTO succeeds and skips, ON fails; build and install the AUTO tree
#                      and use its package from the C-only consumer CONSUMER_DIR
#
# Every program built here runs and checks a result numerically (a NUFFT against its direct
# sum, the NaCl Madelung constant), failing otherwise.
foreach(_v MODE PREFIX WORK_DIR LIBDIR INCLUDEDIR VERSION GENERATOR C_COMPILER CXX_COMPILER HAVE_FORTRAN HAVE_MPI)
  if(NOT DEFINED ${_v})
    message(FATAL_ERROR "run_consumer.cmake: -D${_v}=... is required")
  endif()
endforeach()

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
  if(NOT _rc EQUAL 0)
    string(REPLACE ";" " " _cmd "${ARGN}")
    message(FATAL_ERROR "command failed (${_rc}): ${_cmd}\n${_out}")
  endif()
  message(STATUS "ok: ${ARGV0} ${ARGV1} ${ARGV2}")
  set(_run_out "${_out}" PARENT_SCOPE)
endfunction()

# run a program, print its output, fail if it fails
function(run_program exe)
  execute_process(COMMAND "${exe}" RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
  message("${_out}")
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "${exe} failed (${_rc})")
  endif()
endfunction()

string(REGEX MATCH "^[0-9]+" _major "${VERSION}")
set(_lib "${PREFIX}/${LIBDIR}")
# configure arguments of a consumer project: only the compilers of its languages matter
set(_cfg -G "${GENERATOR}" -DCMAKE_PREFIX_PATH=${PREFIX} -DCMAKE_BUILD_TYPE=Release
         -DCMAKE_C_COMPILER=${C_COMPILER} -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
if(HAVE_FORTRAN)
  list(APPEND _cfg -DCMAKE_Fortran_COMPILER=${Fortran_COMPILER})
endif()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

# ------------------------------------------------------------------------------------------------
# check_layout(<prefix> <with fortran>): the installed files
function(check_layout prefix fortran)
  set(_lib "${prefix}/${LIBDIR}")
  set(_cmakedir "${_lib}/cmake/farfield")
  set(_fortran_files "${prefix}/${INCLUDEDIR}/farfield/fortran/farfield.mod" "${_lib}/libfarfield_fortran.a"
                     "${_cmakedir}/farfieldFortranTargets.cmake" "${_lib}/pkgconfig/farfield-fortran.pc")
  foreach(_f "${_lib}/libfarfield.so.${VERSION}" "${_lib}/libfarfield.a" "${prefix}/${INCLUDEDIR}/farfield.h"
             "${_cmakedir}/farfieldConfig.cmake" "${_cmakedir}/farfieldConfigVersion.cmake"
             "${_lib}/pkgconfig/farfield.pc"
             "${prefix}/share/doc/farfield/LICENSE-MIT" "${prefix}/share/doc/farfield/LICENSE-APACHE")
    if(NOT EXISTS "${_f}")
      message(FATAL_ERROR "not installed: ${_f}")
    endif()
  endforeach()
  file(READ "${_cmakedir}/farfieldConfig.cmake" _config)
  foreach(_f IN LISTS _fortran_files)
    if(fortran AND NOT EXISTS "${_f}")
      message(FATAL_ERROR "not installed: ${_f}")
    elseif(NOT fortran AND EXISTS "${_f}")
      message(FATAL_ERROR "installed although the Fortran part was not built: ${_f}")
    endif()
  endforeach()
  string(REGEX REPLACE "#[^\n]*" "" _code "${_config}")   # the code, without comments
  if(NOT fortran AND _code MATCHES "[Ff]ortran")
    message(FATAL_ERROR "farfieldConfig.cmake mentions Fortran without the Fortran part:\n${_config}")
  endif()
  if(fortran AND NOT _config MATCHES "farfieldFortranTargets.cmake")
    message(FATAL_ERROR "farfieldConfig.cmake lacks the Fortran targets:\n${_config}")
  endif()
  # MPI (FARFIELD_MPI): farfield_HAS_MPI, and FFTW-MPI in farfield.pc, exactly when built with it
  file(READ "${_lib}/pkgconfig/farfield.pc" _pc)
  if(HAVE_MPI)
    if(NOT _code MATCHES "set\\(farfield_HAS_MPI TRUE\\)" OR NOT _code MATCHES "find_dependency\\(MPI")
      message(FATAL_ERROR "farfieldConfig.cmake of an MPI build lacks farfield_HAS_MPI / MPI:\n${_config}")
    endif()
    if(NOT _pc MATCHES "Libs.private: -lfftw3_mpi " OR NOT _pc MATCHES "(Requires.private: [a-z-]+|-lmpi)")
      message(FATAL_ERROR "farfield.pc of an MPI build lacks FFTW-MPI or MPI:\n${_pc}")
    endif()
  elseif(NOT _code MATCHES "set\\(farfield_HAS_MPI FALSE\\)" OR _code MATCHES "MPI::" OR _pc MATCHES "mpi")
    message(FATAL_ERROR "package files of a build without MPI mention MPI:\n${_config}\n${_pc}")
  endif()
  foreach(_link "libfarfield.so.${_major}" "libfarfield.so")
    if(NOT IS_SYMLINK "${_lib}/${_link}")
      message(FATAL_ERROR "${_lib}/${_link} is not a symlink")
    endif()
  endforeach()
  file(READ_SYMLINK "${_lib}/libfarfield.so.${_major}" _t)
  if(NOT _t STREQUAL "libfarfield.so.${VERSION}")
    message(FATAL_ERROR "libfarfield.so.${_major} -> ${_t}, expected libfarfield.so.${VERSION}")
  endif()
  execute_process(COMMAND test -x "${_lib}/libfarfield.so.${VERSION}" RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "libfarfield.so.${VERSION} is not executable (installed with FILES instead of PROGRAMS?)")
  endif()
  message(STATUS "ok: layout (Fortran part: ${fortran})")
endfunction()

# ------------------------------------------------------------------------------------------------
if(MODE STREQUAL "install")
  foreach(_v BUILD_DIR)
    if(NOT DEFINED ${_v})
      message(FATAL_ERROR "run_consumer.cmake: -D${_v}=... is required")
    endif()
  endforeach()
  file(REMOVE_RECURSE "${PREFIX}")
  run("${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${PREFIX}" --strip)
  check_layout("${PREFIX}" "${HAVE_FORTRAN}")
  # the farfield tool when the build made it (FARFIELD_CLI)
  if(EXISTS "${BUILD_DIR}/CMakeCache.txt")
    file(STRINGS "${BUILD_DIR}/CMakeCache.txt" _cli REGEX "^FARFIELD_CLI:BOOL=ON")
    if(_cli)
      run("${PREFIX}/bin/farfield" --version)
    endif()
  endif()
  find_program(READELF readelf)
  if(READELF)
    execute_process(COMMAND "${READELF}" -d "${_lib}/libfarfield.so.${VERSION}" OUTPUT_VARIABLE _dyn)
    if(NOT _dyn MATCHES "SONAME\\)[^\n]*\\[libfarfield\\.so\\.${_major}\\]")
      message(FATAL_ERROR "soname of the installed library is not libfarfield.so.${_major}:\n${_dyn}")
    endif()
    message(STATUS "ok: soname libfarfield.so.${_major}")
    # built with MPI exactly when HAVE_MPI: libmpi and libfftw3_mpi among the NEEDED entries
    if(HAVE_MPI AND NOT (_dyn MATCHES "NEEDED\\)[^\n]*\\[libmpi\\.so" AND _dyn MATCHES "\\[libfftw3_mpi\\.so"))
      message(FATAL_ERROR "the installed library of an MPI build does not need libmpi and libfftw3_mpi:\n${_dyn}")
    elseif(NOT HAVE_MPI AND _dyn MATCHES "mpi")
      message(FATAL_ERROR "the installed library of a build without MPI needs MPI:\n${_dyn}")
    endif()
    message(STATUS "ok: MPI: ${HAVE_MPI}")
    # --strip: no debug sections left in the shared or the static library
    foreach(_f "libfarfield.so.${VERSION}" "libfarfield.a")
      execute_process(COMMAND "${READELF}" -S -W "${_lib}/${_f}" OUTPUT_VARIABLE _sections)
      if(_sections MATCHES "\\.debug_")
        message(FATAL_ERROR "${_f} still has debug sections after cmake --install --strip")
      endif()
      file(SIZE "${_lib}/${_f}" _size)
      math(EXPR _mib "${_size} / 1048576")
      message(STATUS "ok: ${_f} stripped (${_mib} MiB)")
    endforeach()
  endif()

# ------------------------------------------------------------------------------------------------
elseif(MODE STREQUAL "cmake" OR MODE STREQUAL "build")
  run("${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${WORK_DIR}/build" ${_cfg})
  run("${CMAKE_COMMAND}" --build "${WORK_DIR}/build")
  if(MODE STREQUAL "cmake")
    execute_process(COMMAND "${CMAKE_CTEST_COMMAND}" --output-on-failure
                    WORKING_DIRECTORY "${WORK_DIR}/build" RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
    message("${_out}")
    if(NOT _rc EQUAL 0 OR NOT _out MATCHES "100% tests passed")
      message(FATAL_ERROR "consumer tests of ${SOURCE_DIR} failed")
    endif()
  endif()

# ------------------------------------------------------------------------------------------------
elseif(MODE STREQUAL "version")
  execute_process(COMMAND "${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${WORK_DIR}/build" ${_cfg}
                          -DFARFIELD_REQUIRED_VERSION=2.0
                  RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
  if(_rc EQUAL 0 OR NOT _out MATCHES "version: ${VERSION}")
    message(FATAL_ERROR "find_package(farfield 2.0) was not rejected as expected:\n${_out}")
  endif()
  message(STATUS "ok: find_package(farfield 2.0) rejected")

# ------------------------------------------------------------------------------------------------
elseif(MODE STREQUAL "pkgconfig-c" OR MODE STREQUAL "pkgconfig-fortran")
  find_program(PKG_CONFIG pkg-config)
  if(NOT PKG_CONFIG)
    message(FATAL_ERROR "pkg-config not found (scripts/install-deps.sh installs it)")
  endif()
  set(ENV{PKG_CONFIG_PATH} "${_lib}/pkgconfig")
  if(MODE STREQUAL "pkgconfig-c")
    set(_pkg farfield)
  else()
    set(_pkg farfield-fortran)
  endif()
  execute_process(COMMAND "${PKG_CONFIG}" --modversion ${_pkg} OUTPUT_VARIABLE _pv OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0 OR NOT _pv STREQUAL VERSION)
    message(FATAL_ERROR "pkg-config --modversion ${_pkg} gave '${_pv}' (rc ${_rc}), expected ${VERSION}")
  endif()
  execute_process(COMMAND "${PKG_CONFIG}" --cflags --libs ${_pkg} OUTPUT_VARIABLE _flags
                  OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _rc)
  message(STATUS "pkg-config --cflags --libs ${_pkg}: ${_flags}")
  separate_arguments(_flags UNIX_COMMAND "${_flags}")
  if(MODE STREQUAL "pkgconfig-c")
    # shared
    run("${C_COMPILER}" -std=c11 "${SOURCE_DIR}/consumer.c" -o "${WORK_DIR}/consumer_c" ${_flags} -lm
        "-Wl,-rpath,${_lib}")
    run_program("${WORK_DIR}/consumer_c")
    # static, through pkg-config --static
    execute_process(COMMAND "${PKG_CONFIG}" --static --cflags --libs farfield OUTPUT_VARIABLE _sflags
                    OUTPUT_STRIP_TRAILING_WHITESPACE)
    string(REPLACE "-lfarfield" "${_lib}/libfarfield.a" _sflags "${_sflags}")
    separate_arguments(_sflags UNIX_COMMAND "${_sflags}")
    run("${C_COMPILER}" -std=c11 "${SOURCE_DIR}/consumer.c" -o "${WORK_DIR}/consumer_c_static" ${_sflags})
    run_program("${WORK_DIR}/consumer_c_static")
  else()
    if(NOT _flags MATCHES "-lfarfield_fortran;(.*;)?-lfarfield(;|$)")
      message(FATAL_ERROR "pkg-config farfield-fortran: expected -lfarfield_fortran before -lfarfield: ${_flags}")
    endif()
    run("${Fortran_COMPILER}" "${SOURCE_DIR}/consumer.f90" -o "${WORK_DIR}/consumer_fortran" ${_flags}
        "-Wl,-rpath,${_lib}")
    run_program("${WORK_DIR}/consumer_fortran")
  endif()

# ------------------------------------------------------------------------------------------------
elseif(MODE STREQUAL "nofortran")
  foreach(_v SOURCE_DIR CONSUMER_DIR CARGO_TARGET_DIR CARGO_ARGS HAVE_CLI)
    if(NOT DEFINED ${_v})
      message(FATAL_ERROR "run_consumer.cmake: -D${_v}=... is required")
    endif()
  endforeach()
  string(REPLACE "," ";" CARGO_ARGS "${CARGO_ARGS}")
  # the cargo build of this tree reuses the calling build's cargo output: same target directory
  # and the same cargo command (selection, tool, MPI), so nothing is recompiled (any other
  # selection would recompile farfield's library in place: CMakeLists.txt)
  file(WRITE "${WORK_DIR}/init.cmake"
       "set(FARFIELD_CARGO_TARGET_DIR \"${CARGO_TARGET_DIR}\" CACHE PATH \"\")\n"
       "set(FARFIELD_CARGO_ARGS \"${CARGO_ARGS}\" CACHE STRING \"\")\n"
       "set(FARFIELD_MPI \"${HAVE_MPI}\" CACHE BOOL \"\")\n"
       "set(FARFIELD_CLI \"${HAVE_CLI}\" CACHE BOOL \"\")\n")
  set(_src_cfg -G "${GENERATOR}" -C "${WORK_DIR}/init.cmake" -DCMAKE_BUILD_TYPE=Release
               -DCMAKE_C_COMPILER=${C_COMPILER} -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
               -DBUILD_TESTING=OFF)
  set(_missing "farfield-no-such-fortran-compiler")
  set(_skip_msg "no Fortran compiler found.*skipping the Fortran module, its tests and the Fortran consumer checks")

  # a) AUTO, FC names a missing program: check_language(Fortran) fails, configure succeeds
  execute_process(COMMAND "${CMAKE_COMMAND}" -E env "FC=${_missing}"
                          "${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${WORK_DIR}/auto-fc" ${_src_cfg}
                  RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
  if(NOT _rc EQUAL 0 OR NOT _out MATCHES "${_skip_msg}")
    message(FATAL_ERROR "FARFIELD_FORTRAN=AUTO with FC=${_missing}: expected a successful configure "
                        "that skips the Fortran parts (rc ${_rc}):\n${_out}")
  endif()
  file(STRINGS "${WORK_DIR}/auto-fc/CMakeCache.txt" _fc REGEX "^CMAKE_Fortran_COMPILER:")
  message(STATUS "ok: AUTO, FC=${_missing}: configured without Fortran (${_fc})")

  # b) AUTO, -DCMAKE_Fortran_COMPILER=<missing>: configure succeeds, skips
  execute_process(COMMAND "${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${WORK_DIR}/auto-named" ${_src_cfg}
                          -DCMAKE_Fortran_COMPILER=${_missing}
                  RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
  if(NOT _rc EQUAL 0 OR NOT _out MATCHES "${_skip_msg}")
    message(FATAL_ERROR "FARFIELD_FORTRAN=AUTO with CMAKE_Fortran_COMPILER=${_missing}: expected a "
                        "successful configure that skips the Fortran parts (rc ${_rc}):\n${_out}")
  endif()
  message(STATUS "ok: AUTO, CMAKE_Fortran_COMPILER=${_missing}: configured without Fortran")

  # c) ON with the compiler missing: configure fails and says why
  execute_process(COMMAND "${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${WORK_DIR}/on-named" ${_src_cfg}
                          -DCMAKE_Fortran_COMPILER=${_missing} -DFARFIELD_FORTRAN=ON
                  RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
  if(_rc EQUAL 0 OR NOT _out MATCHES "FARFIELD_FORTRAN=ON but no working Fortran compiler")
    message(FATAL_ERROR "FARFIELD_FORTRAN=ON without a compiler: expected a configure error (rc ${_rc}):\n${_out}")
  endif()
  message(STATUS "ok: FARFIELD_FORTRAN=ON without a compiler fails")

  # d) the AUTO tree of a): build (cargo reuses its output: "Fresh farfield"), install, use from
  #    a C project
  run("${CMAKE_COMMAND}" --build "${WORK_DIR}/auto-fc")
  # (a cargo command with another selection run since the calling build, e.g. `cargo test`,
  # makes this one compile again: worth a note, not a failure)
  if(_run_out MATCHES "Compiling farfield v")
    message(WARNING "the build of the tree without Fortran compiled farfield again instead of reusing "
                    "the calling build's cargo output")
  endif()
  run("${CMAKE_COMMAND}" --install "${WORK_DIR}/auto-fc" --prefix "${WORK_DIR}/prefix")
  check_layout("${WORK_DIR}/prefix" OFF)   # (with this build's HAVE_MPI: same cargo output)
  list(FILTER _cfg EXCLUDE REGEX "^-DCMAKE_(PREFIX_PATH|Fortran_COMPILER)=")
  run("${CMAKE_COMMAND}" -S "${CONSUMER_DIR}" -B "${WORK_DIR}/consumer" ${_cfg}
      -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
  run("${CMAKE_COMMAND}" --build "${WORK_DIR}/consumer")
  execute_process(COMMAND "${CMAKE_CTEST_COMMAND}" --output-on-failure
                  WORKING_DIRECTORY "${WORK_DIR}/consumer" RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
  message("${_out}")
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "the C consumer failed against the prefix without Fortran")
  endif()
  # asking for the Fortran component of that package fails
  execute_process(COMMAND "${CMAKE_COMMAND}" -S "${CONSUMER_DIR}" -B "${WORK_DIR}/consumer-fortran-component" ${_cfg}
                          -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DFARFIELD_COMPONENTS=Fortran
                  RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
  if(_rc EQUAL 0)
    message(FATAL_ERROR "find_package(farfield COMPONENTS Fortran) succeeded without the Fortran part:\n${_out}")
  endif()
  message(STATUS "ok: find_package(farfield COMPONENTS Fortran) fails without the Fortran part")
  file(REMOVE_RECURSE "${WORK_DIR}/auto-fc/lib")   # the copies of the libraries (about 100 MB)

else()
  message(FATAL_ERROR "run_consumer.cmake: unknown MODE '${MODE}'")
endif()
message(STATUS "${MODE}: passed")
