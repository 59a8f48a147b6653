#!/bin/sh
# Class 10 of the reliability probe (the soname trap): a C program linked straight against
# cargo's output directory must load and run, i.e. the library's soname (libfarfield.so.1)
# exists beside libfarfield.so there (build.rs leaves the link).
# Usage: cargo_tree_link.sh <C compiler> <cargo profile dir> <include dir> <work dir>
# SPDX-License-Identifier: MIT OR Apache-2.0
set -eu
cc=$1 libdir=$2 incdir=$3 work=$4
mkdir -p "$work"
cat > "$work/cargo_tree_link.c" <<'C'
#include <farfield.h>
#include <stdio.h>
#include <string.h>
int main(void) {
    const char *v = farfield_version();
    printf("loaded libfarfield %s through its soname\n", v);
    return strlen(v) > 0 ? 0 : 1;
}
C
"$cc" -I"$incdir" "$work/cargo_tree_link.c" -L"$libdir" -lfarfield -o "$work/cargo_tree_link"
test -e "$libdir/libfarfield.so.1" || { echo "no libfarfield.so.1 in $libdir" >&2; exit 1; }
LD_LIBRARY_PATH="$libdir" "$work/cargo_tree_link"
