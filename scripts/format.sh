#!/usr/bin/env bash
# Formats kvplan's C++ sources with Debian's clang-format and the
# repository's .clang-format, or checks that they are formatted.
#   scripts/format.sh          # rewrite the files in place
#   scripts/format.sh --check  # list unformatted files, exit 1 if any
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || bash scripts/install-packages.sh clang-format
mapfile -t files < <(git ls-files -- 'src/*.cpp' 'src/*.h' 'src/*.inc' 'src/*.cu' 'src/*.cuh' \
  'tests/*.cpp' 'tests/*.h' 'fuzz/*.cpp' 'fuzz/*.h' 'bench/*.cpp')
if [ "${1:-}" = "--check" ]; then
  bad=()
  for f in "${files[@]}"; do
    clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
  done
  if [ ${#bad[@]} -gt 0 ]; then
    printf 'not formatted (run scripts/format.sh): %s\n' "${bad[@]}" >&2
    exit 1
  fi
  echo "format: ${#files[@]} files formatted as .clang-format says"
else
  clang-format -i "${files[@]}"
fi
