#!/usr/bin/env bash
# install-deps.sh — the Debian/Ubuntu packages gpuledger needs to build and
# test. Run as root (CI does); otherwise it prints the command to run.
set -euo pipefail
PKGS="meson ninja-build gcc g++ pkg-config libunwind-dev libsqlite3-dev libcmocka-dev sqlite3 clang-tidy cppcheck python3 python3-dev libxml2-utils chromium python3-jsonschema python3-pytest man-db"
PKGS="$PKGS clang libclang-rt-dev" # the reader fuzzer: scripts/fuzz-reader.sh (libFuzzer)
missing=""
for p in $PKGS; do
  dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "gpuledger needs:$missing"
  echo "install them with: sudo apt-get update && sudo apt-get install -y$missing"
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq $missing >/dev/null
