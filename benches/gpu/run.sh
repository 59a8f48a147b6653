#!/usr/bin/env bash
# The GPU kit, on the GPU machine: every GPU path of farfield against its peer, one command,
# results written as a folder to commit (benches/gpu/kit.py says what is measured and what the
# folder holds).
#
#   here:   bash scripts/gpu-bundle.sh         # build-gpu/: binaries, FFTW, env.sh, and (through
#                                              # benches/gpu/bundle-extras.sh) the cuFINUFFT source,
#                                              # the OpenMM wheels, the Ewald reference
#   there:  bash benches/gpu/run.sh [--quick] [--only nufft,spread,ewald,fmm] [--out DIR] [kit.py options]
#
# From the repository root with build-gpu/ carried along (or build-gpu-carry/, the packed form
# bundle-extras.sh writes when build-gpu/ is too large to carry: unpacked into build-gpu/ here).
# Steps, each timed and noted in the results:
#   1. links with the CUDA 12 names farfield's loader looks for (libnvrtc.so, libcufft.so ->
#      the toolkit's libnvrtc.so.13, libcufft.so.12) in build-gpu/cuda-links, put on
#      LD_LIBRARY_PATH with the toolkit's folder and build-gpu/ (env.sh);
#   2. cuFINUFFT 2.5.1 built from build-gpu/peers/cufinufft-2.5.1 for this GPU's architecture
#      (nvidia-smi compute_cap) into build-gpu/cufinufft-build, once per machine (skipped when
#      the library is there; about two minutes on 16 cores);
#   3. the wheels of build-gpu/whl installed into a temporary site folder (pip --no-index);
#      OpenMM rows are skipped, with the reason, when OpenMM does not import;
#   4. python3 benches/gpu/kit.py with the options given; its output also goes to run.log in
#      the results folder;
#   5. when the bundle has the Python wheel (build-gpu/py): the package's device-array tests
#      (farfield.cufinufft, farfield.fmm and farfield.ewald on driver-API and CuPy arrays, against
#      the CPU paths) with pytest, into python_device_tests.log and .xml in the results folder.
# --quick: one size per path (about 3 minutes; the full run about 8, plus the one-time build).
# --out DIR: also copy results.json, README.md and run.log into DIR/<results folder name>/.
# Exit status: the kit's (0 when the results were written, whatever the cases' outcomes).
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
B=build-gpu
SITE=${FF_KIT_SITE:-/tmp/ff-kit-site}
T_START=$SECONDS
say() { echo "[run.sh $((SECONDS - T_START)) s] $*" >&2; }
OUT_DIR=""
ARGS=()
while (($#)); do
  case $1 in
    --out) OUT_DIR=$2; ARGS+=(--out "$2"); shift 2 ;;
    *) ARGS+=("$1"); shift ;;
  esac
done
SETUP=()
note() { SETUP+=(--setup "$1=$2"); say "$1: $2"; }

# 0. the bundle (packed form: unpack)
if [[ ! -x $B/farfield && -f build-gpu-carry/bins.tar.xz ]]; then
  mkdir -p $B && tar -C $B -xJf build-gpu-carry/bins.tar.xz && cp -r build-gpu-carry/whl $B/ 2>/dev/null
  note bundle "unpacked from build-gpu-carry/"
fi
if [[ ! -x $B/farfield || ! -f $B/libfarfield.so ]]; then
  say "ERROR: $B/farfield or $B/libfarfield.so missing: run 'bash scripts/gpu-bundle.sh' where the binaries are built and carry $B/"
  exit 2
fi

# 1. CUDA 12 names for the CUDA 13 libraries, then the bundle's env.sh
CU=""
for d in ${CUDA_HOME:+$CUDA_HOME/targets/x86_64-linux/lib} $(ls -d /usr/local/cuda*/targets/x86_64-linux/lib 2>/dev/null | sort -r) \
         ${CUDA_HOME:+$CUDA_HOME/lib64} /usr/local/cuda/lib64; do
  if ls "$d"/libnvrtc.so.* >/dev/null 2>&1; then CU=$d; break; fi
done
mkdir -p $B/cuda-links
if [[ -n $CU ]]; then
  for s in libnvrtc libcufft; do
    l=$(ls "$CU/$s".so.[0-9]* 2>/dev/null | awk '{ print length, $0 }' | sort -n | head -1 | cut -d' ' -f2)
    [[ -n $l ]] || continue
    for n in $s.so $s.so.12 $s.so.11; do
      [[ "$(basename "$l")" == "$n" ]] || ln -sf "$l" "$B/cuda-links/$n"
    done
  done
  export LD_LIBRARY_PATH="$ROOT/$B/cuda-links:$CU${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  note cuda_links "libnvrtc/libcufft CUDA 12 names -> $(basename "$(ls "$CU"/libnvrtc.so.[0-9]* | head -1)"), $(basename "$(ls "$CU"/libcufft.so.[0-9]* | head -1)")"
else
  note cuda_links "no CUDA toolkit library folder found; relying on the loader path"
fi
# shellcheck disable=SC1091
source $B/env.sh
export FF_BENCH_REEXEC=1 PYTHONUNBUFFERED=1  # the loader path is set: the NUFFT script need not re-execute itself

# 2. cuFINUFFT, once per machine
SRC=$B/peers/cufinufft-2.5.1
BLD=$B/cufinufft-build
ARCH=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
CUF=$(ls $BLD/libcufinufft.so $BLD/*/libcufinufft.so 2>/dev/null | head -1)
if [[ -n $CUF ]]; then
  note cufinufft_build "cached ($CUF)"
elif [[ ! -f $SRC/CMakeLists.txt ]]; then
  note cufinufft_build "no source in $SRC (bundle-extras.sh copies it): NUFFT without its peer"
elif [[ -z $ARCH ]]; then
  note cufinufft_build "nvidia-smi gave no compute capability: not built"
else
  t0=$SECONDS
  gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
  if timeout 600 cmake -S $SRC -B $BLD "${gen[@]}" -DFINUFFT_USE_CUDA=ON -DFINUFFT_USE_CPU=OFF -DFINUFFT_STATIC_LINKING=OFF \
       -DCMAKE_CUDA_ARCHITECTURES="$ARCH" -DCMAKE_BUILD_TYPE=Release > $B/cufinufft-build.log 2>&1 &&
     timeout 600 cmake --build $BLD -j "$(nproc)" >> $B/cufinufft-build.log 2>&1; then
    CUF=$(ls $BLD/libcufinufft.so $BLD/*/libcufinufft.so 2>/dev/null | head -1)
    note cufinufft_build "built for sm_$ARCH in $((SECONDS - t0)) s"
  else
    tail -20 $B/cufinufft-build.log >&2
    note cufinufft_build "FAILED after $((SECONDS - t0)) s (log: $B/cufinufft-build.log): NUFFT without its peer"
  fi
fi

# 3. carried wheels (OpenMM) into a temporary site folder
export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
if python3 -c "import openmm" 2>/dev/null; then
  note wheels "OpenMM $(python3 -c 'import openmm; print(openmm.__version__)') already importable"
elif ls $B/whl/*.whl >/dev/null 2>&1; then
  t0=$SECONDS
  if python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" $B/whl/*.whl; then
    note wheels "installed $(cd $B/whl && ls *.whl | tr '\n' ' ')in $((SECONDS - t0)) s"
  else
    note wheels "pip install failed: OpenMM rows skipped"
  fi
else
  note wheels "none in $B/whl (bundle-extras.sh downloads them): OpenMM rows skipped"
fi

# 4. the kit
LOG=$B/kit-run.log
KIT=(python3 benches/gpu/kit.py --bin $B/farfield --lib $B/libfarfield.so --ewald-ref $B/ewald-ref/jac_dhfr "${SETUP[@]}")
[[ -n $CUF ]] && KIT+=(--cufinufft-lib "$CUF" --cufinufft-py $SRC/python)
say "python3 benches/gpu/kit.py ${ARGS[*]}"
"${KIT[@]}" "${ARGS[@]}" 2>&1 | tee $LOG
rc=${PIPESTATUS[0]}
RES=$(sed -n 's/^.*results folder: //p' $LOG | tail -1)
if [[ -n $RES && -d $RES ]]; then
  sed "s#$ROOT/##g" $LOG > "$RES/run.log"
  [[ -n $OUT_DIR ]] && cp "$RES/run.log" "$OUT_DIR/$(basename "$RES")/" 2>/dev/null
fi

# 5. the Python package's device-array tests
if [[ -n $RES && -d $RES ]] && ls $B/py/farfield-*.whl >/dev/null 2>&1; then
  PYSITE=$SITE-farfield
  if python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$PYSITE" $B/py/farfield-*.whl; then
    say "python device tests"
    (cd python/tests && PYTHONPATH="$PYSITE:$PYTHONPATH" python3 -m pytest -q -ra -p no:cacheprovider \
       test_cufinufft.py test_fmm.py test_ewald.py -k "cufinufft or device" --junitxml="$ROOT/$RES/python_device_tests.xml") \
       > "$RES/python_device_tests.log" 2>&1
    say "python device tests: $(tail -1 "$RES/python_device_tests.log")"
  else
    say "python device tests: the wheel did not install"
  fi
  [[ -n $OUT_DIR ]] && cp "$RES"/python_device_tests.* "$OUT_DIR/$(basename "$RES")/" 2>/dev/null
fi
say "done in $((SECONDS - T_START)) s (kit exit status $rc)"
exit "$rc"
