# Install test, run by CTest (test `consumer`):
#  1. cmake --install <BUILD_DIR> --prefix <PREFIX> (a fresh directory under the build tree);
#  2. check the installed layout (soname links, permissions, header, .mod, package files);
#  3. configure, build and test cmake/tests/consumer against PREFIX (find_package CONFIG);
#  4. check that find_package(farfield 1.0) is rejected (SameMajorVersion);
#  5. build consumer.c with pkg-config alone and run it.
foreach(_v BUILD_DIR PREFIX WORK_DIR SOURCE_DIR LIBDIR INCLUDEDIR VERSION GENERATOR C_COMPILER Fortran_COMPILER)
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
endfunction()

file(REMOVE_RECURSE "${PREFIX}" "${WORK_DIR}")

# 1. install
run("${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${PREFIX}")

# 2. layout (the farfield tool when the build made it: FARFIELD_CLI)
string(REGEX MATCH "^[0-9]+" _major "${VERSION}")
if(EXISTS "${BUILD_DIR}/CMakeCache.txt")
  file(STRINGS "${BUILD_DIR}/CMakeCache.txt" _cli REGEX "^FARFIELD_CLI:BOOL=ON")
  if(_cli)
    run("${PREFIX}/bin/farfield" --version)
  endif()
endif()
set(_lib "${PREFIX}/${LIBDIR}")
foreach(_f "${_lib}/libfarfield.so.${VERSION}" "${_lib}/libfarfield.a" "${PREFIX}/${INCLUDEDIR}/farfield.h"
           "${PREFIX}/${INCLUDEDIR}/farfield/fortran/farfield.mod" "${_lib}/libfarfield_fortran.a"
           "${_lib}/cmake/farfield/farfieldConfig.cmake" "${_lib}/cmake/farfield/farfieldConfigVersion.cmake"
           "${_lib}/cmake/farfield/farfieldFortranTargets.cmake" "${_lib}/pkgconfig/farfield.pc"
           "${PREFIX}/share/doc/farfield/LICENSE-MIT" "${PREFIX}/share/doc/farfield/LICENSE-APACHE")
  if(NOT EXISTS "${_f}")
    message(FATAL_ERROR "not installed: ${_f}")
  endif()
endforeach()
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
find_program(READELF readelf)
if(READELF)
  execute_process(COMMAND "${READELF}" -d "${_lib}/libfarfield.so.${VERSION}" OUTPUT_VARIABLE _dyn)
  if(NOT _dyn MATCHES "SONAME\\)[^\n]*\\[libfarfield\\.so\\.${_major}\\]")
    message(FATAL_ERROR "soname of the installed library is not libfarfield.so.${_major}:\n${_dyn}")
  endif()
  message(STATUS "ok: soname libfarfield.so.${_major}")
endif()

# 3. consumer project through find_package(farfield CONFIG REQUIRED)
set(_cfg -G "${GENERATOR}" -DCMAKE_PREFIX_PATH=${PREFIX} -DCMAKE_C_COMPILER=${C_COMPILER}
         -DCMAKE_Fortran_COMPILER=${Fortran_COMPILER} -DCMAKE_BUILD_TYPE=Release)
run("${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${WORK_DIR}/cmake" ${_cfg})
run("${CMAKE_COMMAND}" --build "${WORK_DIR}/cmake")
execute_process(COMMAND "${CMAKE_CTEST_COMMAND}" --output-on-failure
                WORKING_DIRECTORY "${WORK_DIR}/cmake" RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
message("${_out}")
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "consumer tests failed")
endif()

# 4. an incompatible major version must be rejected
execute_process(COMMAND "${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${WORK_DIR}/cmake-v2" ${_cfg}
                        -DFARFIELD_REQUIRED_VERSION=2.0
                RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
if(_rc EQUAL 0 OR NOT _out MATCHES "version: ${VERSION}")
  message(FATAL_ERROR "find_package(farfield 2.0) was not rejected as expected:\n${_out}")
endif()
message(STATUS "ok: find_package(farfield 2.0) rejected")

# 5. pkg-config
find_program(PKG_CONFIG pkg-config)
if(PKG_CONFIG)
  set(ENV{PKG_CONFIG_PATH} "${_lib}/pkgconfig")
  execute_process(COMMAND "${PKG_CONFIG}" --modversion farfield OUTPUT_VARIABLE _pv OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0 OR NOT _pv STREQUAL VERSION)
    message(FATAL_ERROR "pkg-config --modversion farfield gave '${_pv}' (rc ${_rc}), expected ${VERSION}")
  endif()
  execute_process(COMMAND "${PKG_CONFIG}" --cflags --libs farfield OUTPUT_VARIABLE _flags
                  OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _rc)
  separate_arguments(_flags UNIX_COMMAND "${_flags}")
  file(MAKE_DIRECTORY "${WORK_DIR}/pkgconfig")
  run("${C_COMPILER}" -std=c11 "${SOURCE_DIR}/consumer.c" -o "${WORK_DIR}/pkgconfig/consumer_c" ${_flags} -lm
      "-Wl,-rpath,${_lib}")
  run("${WORK_DIR}/pkgconfig/consumer_c")
  # static link through pkg-config --static
  execute_process(COMMAND "${PKG_CONFIG}" --static --cflags --libs farfield OUTPUT_VARIABLE _sflags
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  string(REPLACE "-lfarfield" "${_lib}/libfarfield.a" _sflags "${_sflags}")
  separate_arguments(_sflags UNIX_COMMAND "${_sflags}")
  run("${C_COMPILER}" -std=c11 "${SOURCE_DIR}/consumer.c" -o "${WORK_DIR}/pkgconfig/consumer_c_static" ${_sflags})
  run("${WORK_DIR}/pkgconfig/consumer_c_static")
else()
  message(STATUS "pkg-config not found: skipping the pkg-config build")
endif()
message(STATUS "consumer test passed")
