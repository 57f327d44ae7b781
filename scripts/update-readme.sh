#!/usr/bin/env bash
# update-readme.sh — write the outputs of README.md's samples (each fenced
# block whose first line is "$ gpuledger …") as the current build prints
# them: the demo recorded against the fake CUDA runtime, then each command
# run on it (tests/readme/check_readme.py --update; `meson test readme`
# checks that they stay so). Uses build/ (BUILD=dir to choose another).
# Then read `git diff README.md`: every change must be one you meant.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=$(cd "${BUILD:-build}" && pwd)
ninja -C "$BUILD" >/dev/null
python3 tests/readme/check_readme.py "$BUILD" "$PWD" --update
