#!/usr/bin/env bash
# Fails, listing the files, when a C++ or CUDA source of the repository differs from what
# clang-format makes of it with the project's .clang-format. Usage: check_format.sh CLANG_FORMAT
# SOURCE_DIR. Fix with: clang-format -i FILE (the same clang-format major version).
set -euo pipefail
clang_format=$1
cd "$2"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh')
else
  mapfile -t files < <(find sim kernels tests \( -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' \
                         -o -name '*.cuh' \) -type f | sort)
fi
[ ${#files[@]} -gt 0 ] || { echo "check_format: no sources found under $2" >&2; exit 1; }
bad=()
for f in "${files[@]}"; do
  "$clang_format" --style=file "$f" | cmp -s - "$f" || bad+=("$f")
done
if [ ${#bad[@]} -gt 0 ]; then
  echo "check_format: ${#bad[@]} of ${#files[@]} files differ from $("$clang_format" --version):" >&2
  printf '  %s\n' "${bad[@]}" >&2
  echo "fix with: $clang_format -i FILE" >&2
  exit 1
fi
echo "check_format: ${#files[@]} files formatted"
