#!/usr/bin/env bash
# device-prep.sh — run HERE (not on the GPU machine) before a device run.
# The device machine has no libunwind and no SQLite headers and cannot
# install anything, so we build here (Debian 12 binaries run on its newer
# glibc) into build-device/ and unpack libunwind8 into .device-deps/lib.
# Both are git-ignored; pass them as `carry` to the device tool:
#   carry: ["build-device", ".device-deps"]
#   command: bash scripts/gpu-check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -d build-device ]; then
  meson setup build-device --buildtype=release -Dtests=false >/dev/null
fi
ninja -C build-device >/dev/null || { ninja -C build-device | grep -A5 error; exit 1; }
rm -rf .device-deps && mkdir -p .device-deps/tmp
(cd .device-deps/tmp && apt-get download libunwind8 >/dev/null 2>&1)
dpkg -x .device-deps/tmp/libunwind8_*.deb .device-deps/root
mkdir -p .device-deps/lib
cp -a .device-deps/root/usr/lib/x86_64-linux-gnu/libunwind.so.8* .device-deps/root/usr/lib/x86_64-linux-gnu/libunwind-x86_64.so.8* .device-deps/lib/
rm -rf .device-deps/tmp .device-deps/root
echo "device-prep: build-device/ and .device-deps/lib ready ($(du -sh build-device | cut -f1), $(du -sh .device-deps | cut -f1))"
