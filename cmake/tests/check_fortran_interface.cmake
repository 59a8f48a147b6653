# cmake -DHEADER=include/farfield.h -DMODULE=fortran/farfield.f90 -P check_fortran_interface.cmake
#
# Fails when the Fortran module is behind the C header: every function declared in the header
# needs a bind(c, name="...") interface, and every integer FARFIELD_* macro a named constant
# with the same value.
foreach(_v HEADER MODULE)
  if(NOT EXISTS "${${_v}}")
    message(FATAL_ERROR "${_v}=${${_v}} does not exist")
  endif()
endforeach()
file(READ "${HEADER}" _h)
file(READ "${MODULE}" _f)
string(TOLOWER "${_f}" _f_lower)
set(_problems "")

# functions: a declaration starts a line with a return type and names farfield_xxx(
string(REGEX MATCHALL "\n[A-Za-z_][A-Za-z0-9_ ]*[ \\*](farfield_[a-z0-9_]+)\\(" _decls "${_h}")
set(_nfun 0)
foreach(_d IN LISTS _decls)
  string(REGEX REPLACE ".*[ \\*](farfield_[a-z0-9_]+)\\($" "\\1" _name "${_d}")
  math(EXPR _nfun "${_nfun} + 1")
  string(FIND "${_f_lower}" "bind(c, name=\"${_name}\")" _pos)
  if(_pos EQUAL -1)
    string(APPEND _problems "  C function ${_name} has no bind(c, name=\"${_name}\") interface\n")
  endif()
endforeach()

# integer constants
string(REGEX MATCHALL "\n#define FARFIELD_[A-Z0-9_]+ -?[0-9]+" _defs "${_h}")
set(_nconst 0)
foreach(_d IN LISTS _defs)
  string(REGEX REPLACE "\n#define (FARFIELD_[A-Z0-9_]+) (-?[0-9]+)" "\\1" _name "${_d}")
  string(REGEX REPLACE "\n#define (FARFIELD_[A-Z0-9_]+) (-?[0-9]+)" "\\2" _value "${_d}")
  math(EXPR _nconst "${_nconst} + 1")
  string(REGEX MATCH "parameter, public :: ${_name} = (-?[0-9]+)" _m "${_f}")
  if(NOT _m)
    string(APPEND _problems "  constant ${_name} is missing from the Fortran module\n")
  elseif(NOT CMAKE_MATCH_1 STREQUAL _value)
    string(APPEND _problems "  constant ${_name} is ${CMAKE_MATCH_1} in Fortran but ${_value} in C\n")
  endif()
endforeach()

if(_nfun EQUAL 0 OR _nconst EQUAL 0)
  message(FATAL_ERROR "parsed ${_nfun} functions and ${_nconst} constants from ${HEADER}: the parser is broken")
endif()
if(_problems)
  message(FATAL_ERROR "fortran/farfield.f90 is behind include/farfield.h:\n${_problems}")
endif()
message(STATUS "Fortran module covers all ${_nfun} C functions and ${_nconst} constants of the header")
