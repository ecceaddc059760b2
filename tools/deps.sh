#!/bin/sh
# deps.sh [build|test|bench|all]... - install the Debian packages inferbench needs.
#
# Idempotent: packages already installed are skipped, and nothing runs when all
# are present. Runs apt-get as root, or through sudo when not root.
#   build  compilers and -dev libraries            (make)
#   test   + conformance data, Chromium, pycocotools (make check; the default is build+test)
#   bench  + PyTorch and ONNX Runtime peers, hyperfine (make bench); ONNX Runtime comes
#          from the npm registry (onnxruntime-node, pinned) into the user's cache, outside
#          the repository: $XDG_CACHE_HOME/inferbench/peers (or ~/.cache/...)
set -eu

BUILD_PKGS="gcc make pkg-config libprotobuf-c-dev protobuf-c-compiler libonnx-dev libdnnl-dev
 libjansson-dev libcairo2-dev libfontconfig-dev libjpeg62-turbo-dev zlib1g-dev libsndfile1-dev libfftw3-dev
 fonts-dejavu-core libcurl4-openssl-dev libmicrohttpd-dev"
TEST_PKGS="libonnx-testdata chromium python3-numpy"
# python3-pycocotools is not packaged in Debian 12; the COCO conformance test skips without it.
# libopenblas0-pthread: Debian's torch is built with BLAS_INFO=generic and takes libblas.so.3
# from the alternatives; without OpenBLAS that is the reference BLAS (2.4 GFLOP/s for a
# 2048x1024x1024 Linear on 2 threads), which would make the peer unfairly slow.
BENCH_PKGS="python3-torch python3-torchvision libopenblas0-pthread hyperfine nodejs"
ORT_VERSION=1.31.1

groups=${*:-build test}
want=""
ort=0
for g in $groups; do
  case $g in bench|all) ort=1 ;; esac
  case $g in
    build) want="$want $BUILD_PKGS" ;;
    test) want="$want $BUILD_PKGS $TEST_PKGS" ;;
    bench) want="$want $BUILD_PKGS $BENCH_PKGS" ;;
    all) want="$want $BUILD_PKGS $TEST_PKGS $BENCH_PKGS" ;;
    *) echo "deps.sh: unknown group '$g' (use build, test, bench or all)" >&2; exit 2 ;;
  esac
done

# npm: Debian's package, unless the installed nodejs brings its own (NodeSource's does, and
# conflicts with Debian's npm)
if [ "$ort" -eq 1 ] && ! command -v npm >/dev/null 2>&1; then
  want="$want npm"
fi
missing=""
for p in $want; do
  case " $missing " in *" $p "*) continue ;; esac
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $p"
  fi
done
# The ONNX Runtime peer of bench/models (ort_peer.js): the CPU build inside the npm package;
# the package's install script would fetch CUDA binaries, which the peer does not use.
install_ort() {
  dir="${XDG_CACHE_HOME:-$HOME/.cache}/inferbench/peers"
  if [ -f "$dir/node_modules/onnxruntime-node/package.json" ] &&
     grep -q "\"version\": \"$ORT_VERSION\"" "$dir/node_modules/onnxruntime-node/package.json"; then
    return 0
  fi
  echo "deps: installing onnxruntime-node $ORT_VERSION into $dir"
  mkdir -p "$dir"
  ONNXRUNTIME_NODE_INSTALL_CUDA=skip ONNXRUNTIME_NODE_INSTALL=skip \
    npm install --no-audit --no-fund --prefix "$dir" "onnxruntime-node@$ORT_VERSION" >/dev/null ||
    echo "deps: npm could not install onnxruntime-node; the benches print no ONNX Runtime column" >&2
}

if [ -z "$missing" ]; then
  echo "deps: all packages present ($groups)"
  [ "$ort" -eq 0 ] || install_ort
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  SUDO=""
elif command -v sudo >/dev/null 2>&1; then
  SUDO="sudo"
else
  echo "deps: need root or sudo to install:$missing" >&2
  exit 1
fi
echo "deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq || echo "deps: apt-get update failed; trying the cached package lists" >&2
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing
[ "$ort" -eq 0 ] || install_ort
