# bash completion for kvplan: subcommands, options, model and GPU names.
# Installed as share/bash-completion/completions/kvplan. Names come from the
# binary itself (kvplan --help, kvplan models/gpus --format json), so they
# follow the catalog the installed kvplan carries.

_kvplan_names() {  # $1: models | gpus
  command kvplan "$1" --format json 2>/dev/null |
    sed -n 's/^    "name": "\([^"]*\)",*$/\1/p'
}

_kvplan() {
  local cur prev sub i
  cur=${COMP_WORDS[COMP_CWORD]}
  prev=${COMP_WORDS[COMP_CWORD-1]}
  sub=""
  for ((i = 1; i < COMP_CWORD; i++)); do
    case ${COMP_WORDS[i]} in
      -*) ;;
      *) sub=${COMP_WORDS[i]}; break ;;
    esac
  done
  if [[ -z $sub ]]; then
    local cmds
    cmds=$(command kvplan --help 2>/dev/null | sed -n '/^Subcommands:/,/^$/s/^  \([a-z][-a-z0-9.]*\) .*/\1/p')
    COMPREPLY=($(compgen -W "$cmds --help --version" -- "$cur"))
    return
  fi
  case $prev in
    --gpu)
      COMPREPLY=($(compgen -W "$(_kvplan_names gpus)" -- "$cur"))
      compopt -o default 2>/dev/null  # a profile YAML path works too
      return ;;
    --format)
      COMPREPLY=($(compgen -W "text json csv junit github" -- "$cur")); return ;;
    --engine)
      COMPREPLY=($(compgen -W "vllm sglang trtllm llama.cpp" -- "$cur")); return ;;
    --kv-cache-dtype)
      COMPREPLY=($(compgen -W "auto fp32 fp16 bf16 fp8 fp8_e4m3 fp8_e5m2 int8 int8_pth fp8_pth q8_0 q4_0 q4_1 iq4_nl q5_0 q5_1 nvfp4 fp8_ds_mla" -- "$cur"))
      return ;;
    -o|--output|--svg|--save|--profile|--verify|--against)
      compopt -o default 2>/dev/null; COMPREPLY=(); return ;;
  esac
  if [[ $cur == -* ]]; then
    local opts
    opts=$(command kvplan "$sub" --help 2>/dev/null | grep -oE -- '(^|[ ,])--?[a-zA-Z][-a-zA-Z0-9]*' | tr -d ' ,' | sort -u)
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    return
  fi
  case $sub in
    check|import-hf)
      compopt -o default 2>/dev/null; COMPREPLY=() ;;
    gpus)
      COMPREPLY=($(compgen -W "$(_kvplan_names gpus)" -- "$cur")) ;;
    *)  # the MODEL argument: catalog names, the repo ids in the local Hugging
        # Face cache, or a spec/config/GGUF path
      COMPREPLY=($(compgen -W "$(_kvplan_names models) $(command kvplan models --cached 2>/dev/null)" -- "$cur"))
      compopt -o default 2>/dev/null ;;
  esac
}

complete -F _kvplan kvplan
