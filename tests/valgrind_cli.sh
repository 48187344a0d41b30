#!/usr/bin/env bash
# Runs representative kvplan commands (the CLI golden paths and error paths)
# under valgrind memcheck and fails on any report: invalid reads or writes,
# uninitialised values, or leaked memory. Registered with ctest (label
# `valgrind`) for non-sanitizer builds; docs/reliability.md.
#   tests/valgrind_cli.sh VALGRIND KVPLAN SOURCE_DIR
set -uo pipefail
valgrind="$1"; kvplan="$2"; src="$3"
scratch="$(mktemp -d)"; trap 'rm -rf "$scratch"' EXIT
cd "$scratch"
bad="$src/tests/bad-inputs/files"

# expected-exit-code  arguments (word-split; no spaces inside one argument)
commands=(
  "0 size llama-3.1-70b -c 4K --explain"
  "0 size deepseek-v3 -c 128K -b 4 --kv-cache-dtype fp8_ds_mla --format json"
  "0 size gemma-3-27b -c 32k --format csv"
  "0 size jamba-v0.1 -c 256K -tp 2"
  "0 size $src/models/gpt-oss-20b.yaml -c 128K --kv-cache-dtype q8_0"
  "0 models"
  "0 models qwen3-30b-a3b"
  "0 --help"
  "2 size llama-3.1-70x"
  "2 size llama-3.1-8b -c 99999999999999K -b 99999999"
  "2 size $bad/model-unclosed-bracket.yaml"
  "2 size $bad/model-billion-laughs.yaml"
  "2 size $bad/model-duplicate-key.yaml"
  "2 size $bad/model-not-utf8.yaml"
  "2 size llama-3.1-8b --kv-cache-dtype fp9"
  "0 fleet llama-3.1-70b --gpu h100-sxm,l40s --rate 5 --prompt 2000 --output 200 --tpot 80ms --format json"
  "1 fleet llama-3.1-70b --gpu l40s --rate 1 --prompt 2000 --output 200 --tpot 1ms"
  "2 fleet llama-3.1-8b --gpu h100-sxm --rate 1 --prompt 100 --output 10 --tpot 50"
)

failed=0
for entry in "${commands[@]}"; do
  want="${entry%% *}"; args="${entry#* }"
  # shellcheck disable=SC2086  # the arguments are meant to be word-split
  "$valgrind" --quiet --error-exitcode=99 --leak-check=full \
    --show-leak-kinds=definite,indirect,possible --errors-for-leak-kinds=definite,indirect,possible \
    --log-file="$scratch/valgrind.log" "$kvplan" $args >/dev/null 2>"$scratch/stderr"
  rc=$?
  if [ "$rc" -ne "$want" ] || [ -s "$scratch/valgrind.log" ]; then
    echo "FAIL (exit $rc, expected $want): kvplan $args"
    cat "$scratch/valgrind.log" "$scratch/stderr"
    failed=1
  else
    echo "ok   (exit $rc): kvplan $args"
  fi
done
exit "$failed"
