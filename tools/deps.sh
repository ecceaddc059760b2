#!/bin/sh
# deps.sh [build|test|bench|all]... - install the Debian packages inferbench needs.
#
# Idempotent: packages already installed are skipped, and nothing runs when all
# are present. Runs apt-get as root, or through sudo when not root.
#   build  compilers and -dev libraries            (make)
#   test   + conformance data, Chromium, pycocotools (make check; the default is build+test)
#   bench  + PyTorch peers and hyperfine            (make bench)
set -eu

BUILD_PKGS="gcc make pkg-config libprotobuf-c-dev protobuf-c-compiler libonnx-dev libdnnl-dev
 libjansson-dev libcairo2-dev libfontconfig-dev libjpeg62-turbo-dev zlib1g-dev libsndfile1-dev libfftw3-dev
 fonts-dejavu-core libcurl4-openssl-dev libmicrohttpd-dev"
TEST_PKGS="libonnx-testdata chromium python3-numpy"
# python3-pycocotools is not packaged in Debian 12; the COCO conformance test skips without it.
# libopenblas0-pthread: Debian's torch is built with BLAS_INFO=generic and takes libblas.so.3
# from the alternatives; without OpenBLAS that is the reference BLAS (2.4 GFLOP/s for a
# 2048x1024x1024 Linear on 2 threads), which would make the peer unfairly slow.
BENCH_PKGS="python3-torch python3-torchvision libopenblas0-pthread hyperfine"

groups=${*:-build test}
want=""
for g in $groups; do
  case $g in
    build) want="$want $BUILD_PKGS" ;;
    test) want="$want $BUILD_PKGS $TEST_PKGS" ;;
    bench) want="$want $BUILD_PKGS $BENCH_PKGS" ;;
    all) want="$want $BUILD_PKGS $TEST_PKGS $BENCH_PKGS" ;;
    *) echo "deps.sh: unknown group '$g' (use build, test, bench or all)" >&2; exit 2 ;;
  esac
done

missing=""
for p in $want; do
  case " $missing " in *" $p "*) continue ;; esac
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $p"
  fi
done
if [ -z "$missing" ]; then
  echo "deps: all packages present ($groups)"
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
