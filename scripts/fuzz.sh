#!/usr/bin/env bash
# Runs every libFuzzer harness in fuzz/ for SECONDS each (default 30, what CI
# uses), one after the other, nice'd, one job each. Builds the `fuzz` preset
# (clang++, ASan + UBSan) first if needed. Exits non-zero when any harness
# finds a crash, leak, timeout or sanitizer report; the input that triggered
# it is saved under build/fuzz/findings/. See docs/reliability.md.
#
#   scripts/fuzz.sh              # every harness, 30 s each
#   scripts/fuzz.sh 600          # every harness, 10 minutes each
#   scripts/fuzz.sh 60 units     # just fuzz_units, 1 minute
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-30}"
shift || true
build=build/fuzz
work="$build/run"   # corpora grow here across runs; seeds are copied in fresh

# libFuzzer comes with clang 14 and its runtime (Debian: clang, libclang-rt-14-dev).
bash scripts/install-packages.sh clang libclang-rt-14-dev

if [ ! -f "$build/CMakeCache.txt" ]; then cmake --preset fuzz >/dev/null; fi
nice -n 19 cmake --build --preset fuzz -j 2

# Seeds and dictionary for one harness (by the part after fuzz_).
seed_files() {
  case "$1" in
    model_spec)    ls models/*.yaml; find tests/bad-inputs -name '*model*.yaml' 2>/dev/null ;;
    hardware_spec) ls hardware/*.yaml; find tests/bad-inputs tests/data -name '*profile*.yaml' \
                     -o -name '*hardware*.yaml' 2>/dev/null ;;
    deploy_config) ls fuzz/seeds/deploy_config/*.yaml
                   find examples tests/data -name '*.yaml' 2>/dev/null | grep -i deploy || true ;;
    hf_import)     find tests/data/hf -name '*.json' 2>/dev/null || true ;;
    vllm_args)     ls fuzz/seeds/vllm_args/* ;;
    engine_args)   ls fuzz/seeds/engine_args/* fuzz/seeds/vllm_args/* ;;
    gguf)          ls fuzz/seeds/gguf/* ;;
    safetensors)   ls fuzz/seeds/safetensors/* ;;
    *) ;;
  esac
  if [ -d "tests/data/fuzz-regressions/$1" ]; then
    find "tests/data/fuzz-regressions/$1" -type f
  fi
}
dict_for() {
  case "$1" in
    units) echo fuzz/units.dict ;;
    vllm_args|engine_args) echo fuzz/vllm_args.dict ;;
    hf_import) echo fuzz/json.dict ;;
    safetensors) echo fuzz/json.dict ;;
    request_mix) echo fuzz/request_mix.dict ;;
    gguf) echo fuzz/gguf.dict ;;
    *) echo fuzz/yaml.dict ;;
  esac
}
# Harnesses whose input is not a file get seeds written here.
builtin_seeds() {
  local dir="$2"
  case "$1" in
    units)
      local i=0
      for t in 4096 4k 4K 1.5k 128K 1M 2m 131_072 0 80GB 80GiB 3.81GiB 512MiB 1.5TB 1000 \
               "12 GiB" 1Ki 99999999999999999999G; do
        printf '\000%s' "$t" >"$dir/tokens-$i"; printf '\001%s' "$t" >"$dir/bytes-$i"
        i=$((i + 1))
      done ;;
    request_mix)  # first byte: 0 CSV, 1 JSONL, 2 by content, 3 a --mix spec
      printf '\000prompt_tokens,output_tokens\n100,20\n"2000", 500\n' >"$dir/csv"
      printf '\000id,prompt_tokens,output_tokens,ts\r\n1,100,20,x\r\n' >"$dir/csv-extra"
      printf '\001{"prompt_tokens": 10, "output_tokens": 2}\n{"output_tokens": 0, "prompt_tokens": 7, "x": [1, {"a": "b"}]}\n' >"$dir/jsonl"
      printf '\002{"prompt_tokens": 10, "output_tokens": 2}\n' >"$dir/auto"
      printf '\003uniform:prompt=100..2000,output=50..500,n=10,seed=3' >"$dir/uniform"
      printf '\003lognormal:prompt_mean=1000,prompt_sigma=0.8,output_mean=200,output_sigma=1,prompt=1..32768,n=20' >"$dir/lognormal"
      local f
      for f in $(find examples tests/data -name '*.csv' 2>/dev/null); do
        { printf '\000'; cat "$f"; } >"$dir/$(echo "$f" | tr '/' '_')"
      done
      for f in $(find examples tests/data -name '*.jsonl' 2>/dev/null); do
        { printf '\001'; cat "$f"; } >"$dir/$(echo "$f" | tr '/' '_')"
      done ;;
  esac
}

mkdir -p "$work" "$build/findings" "$build/logs"
harnesses=()
if [ $# -gt 0 ]; then
  for h in "$@"; do harnesses+=("$build/fuzz/fuzz_${h#fuzz_}"); done
else
  for f in "$build"/fuzz/fuzz_*; do [ -x "$f" ] && harnesses+=("$f"); done
fi

failed=0
printf '%-16s %8s %12s %8s %s\n' harness seconds execs corpus result
for bin in "${harnesses[@]}"; do
  name="$(basename "$bin")"; short="${name#fuzz_}"
  corpus="$work/$short/corpus"; seeds="$work/$short/seeds"
  rm -rf "$seeds"; mkdir -p "$corpus" "$seeds"
  while IFS= read -r f; do
    [ -n "$f" ] && cp "$f" "$seeds/$(echo "$f" | tr '/' '_')"
  done < <(seed_files "$short")
  builtin_seeds "$short" "$seeds"
  log="$build/logs/$short.log"
  dict="$(dict_for "$short")"
  dict_arg=()
  [ -f "$dict" ] && dict_arg=("-dict=$dict")
  rc=0
  nice -n 19 "$bin" "$corpus" "$seeds" "${dict_arg[@]}" -max_total_time="$seconds" \
    -timeout=30 -rss_limit_mb=2048 -max_len=8192 -print_final_stats=1 \
    -artifact_prefix="$build/findings/$short-" >"$log" 2>&1 || rc=$?
  execs="$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | awk '{print $2}' | tail -1)"
  size="$(find "$corpus" -type f | wc -l)"
  if [ "$rc" -eq 0 ]; then result=ok; else result="FAILED (rc $rc, see $log)"; failed=1; fi
  printf '%-16s %8s %12s %8s %s\n' "$short" "$seconds" "${execs:-?}" "$size" "$result"
done
if [ "$failed" -ne 0 ]; then
  echo "fuzz: a harness failed; reproduce with build/fuzz/fuzz/fuzz_<name> <file from build/fuzz/findings/>" >&2
  exit 1
fi
