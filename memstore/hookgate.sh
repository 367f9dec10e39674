#!/usr/bin/env bash
# memstore's PreToolUse gate: starts the hook (Python) only for a tool call that could need it.
#
#   bash hookgate.sh [--lenses-only] PYTHON -S .../memstore/hookrun.py (--plugin | --root ROOT) ...
#
# Claude Code runs a PreToolUse handler for every tool call; a Python start costs 40-60 ms, this
# script about a millisecond. It reads the payload with shell builtins and execs the hook command
# (the payload handed on, $MEMSTORE_GATE saying why) unless runtime/state/hookgate.txt, written by
# memstore/hook/gate.py from the hook's own word lists, shows the call needs nothing: a tool no lens
# can match that is no edit tool and no memstore MCP tool, and for Bash a command with none of the
# hook's words (quotes and backslashes out first, as the hook does) outside the root, for Read a
# path whose real folder is outside the root. Anything it cannot tell (no file, a stale one, a lens
# changed since, odd JSON) starts the hook. --lenses-only (the settings install, whose other
# handlers carry `if` filters): only whether some lens could match the tool.
# Bash 3.2 (macOS) is enough. It never blocks a call: it exits 0 or becomes the hook, which exits 0.

FORMAT="memstore-gate 1"  # memstore/hook/gate.py GATE_FORMAT
LIMIT=16384               # a longer payload goes to the hook unread (bash reads a pipe bytewise)
shopt -s execfail         # a failed exec returns here instead of failing the call

mode=full
if [ "${1-}" = "--lenses-only" ]; then mode=lenses; shift; fi
[ "$#" -gt 0 ] || exit 0
start=$PWD
cmd=("$@")
run() {  # become the hook command, the payload handed on, $MEMSTORE_GATE saying why
    cd -- "$start" 2>/dev/null
    export MEMSTORE_GATE="$1"
    if [ -n "$more" ]; then
        exec "${cmd[@]}" < <(printf '%s' "$payload"; cat)
    else
        exec "${cmd[@]}" <<<"$payload"
    fi
    exit 0
}
# builtins only (no `cat`): read stops at LIMIT characters or a NUL (garbage), leaving the rest
more=
IFS= read -r -d '' -n "$LIMIT" payload && more=1
[ -z "$more" ] || run large

root=
if [ -n "${CLAUDE_PLUGIN_OPTION_ROOT+x}" ]; then
    for arg in "$@"; do [ "$arg" = "--plugin" ] && root=$CLAUDE_PLUGIN_OPTION_ROOT; done
fi
prev=
for arg in "$@"; do
    [ "$prev" = "--root" ] && root=$arg
    case $arg in --root=*) root=${arg#--root=} ;; esac
    prev=$arg
done
case $root in "~") root=$HOME ;; "~/"*) root=$HOME/${root#"~/"} ;; esac
case $root in /*) ;; *) run noroot ;; esac

case $payload in *'\u'*) run escaped ;; esac  # a \u escape could spell any word

gate=$root/runtime/state/hookgate.txt
[ -f "$gate" ] || run missing
fmt= groot= ghome= real= watched= tools=$'\n' skip=$'\n' free=$'\n'
words=()
while IFS=$'\t' read -r key value; do
    case $key in
        format) fmt=$value ;;
        root) groot=$value ;;
        home) ghome=$value ;;
        real) real=$value ;;
        word) words[${#words[@]}]=$value ;;
        tool) tools=$tools$value$'\n' ;;
        skip) skip=$skip$value$'\n' ;;
        free) free=$free$value$'\n' ;;
        watch) { [ -e "$value" ] && ! [ "$value" -nt "$gate" ]; } || run stale; watched=1 ;;
    esac
done < "$gate"
# memstore always writes a watch line (the lenses folder, or the root): a list with none is not its
[ "$fmt" = "$FORMAT" ] && [ "$groot" = "$root" ] && [ "$ghome" = "${HOME-}" ] \
    && [ -n "$real" ] && [ -n "$watched" ] || run stale

# one key's string value, when the key is there once and its value has no escape we would misread
value_of() {
    local re="\"$1\"[[:space:]]*:[[:space:]]*\"([^\"\\\\]*(\\\\.[^\"\\\\]*)*)\""
    local rest=${payload#*\"$1\"}
    case $rest in *\"$1\"*) return 1 ;; esac  # twice (a nested key too): not ours to pick
    [[ $payload =~ $re ]] || return 1
    got=${BASH_REMATCH[1]}
}
value_of hook_event_name && [ "$got" = "PreToolUse" ] || run event
value_of tool_name || run tool
tool=$got
case $tools in *$'\n'"$tool"$'\n'*) ;; *) run new ;; esac
# Not left to the list: any tool other than Bash that carries a shell command (Claude Code's
# Monitor runs one) is judged by the hook, and so are the edit tools and memstore's MCP tools when
# this gate is the only handler.
if [ "$tool" != Bash ]; then
    case $payload in *'"command"'*) run command ;; esac
fi
if [ "$mode" = full ]; then
    case $tool in
        Write | Edit | MultiEdit | NotebookEdit | mcp__memstore__* \
            | mcp__plugin_memstore_memstore__*) run edit ;;
    esac
fi
if [ "$mode" = lenses ]; then
    # Bash with no lens on it goes on to the word check below: the settings install's `if` filters
    # match a command's raw text, and this is the net for the spellings they miss (quotes, tabs,
    # doubled slashes)
    case $free in *$'\n'"$tool"$'\n'*) [ "$tool" = Bash ] || exit 0 ;; *) run lens ;; esac
else
    case $skip in *$'\n'"$tool"$'\n'*) ;; *) run lens ;; esac
fi

under_root() {  # is the physical folder $1 the real root or inside it (or not to be told)?
    cd -P -- "$1" 2>/dev/null || return 0
    case $PWD in "$real" | "$real"/*) return 0 ;; esac
    return 1
}
# does $1 (as the hook's cheap look reads it: handler._plain_command) hold one of the hook's words?
has_word() {
    local plain=$1 w
    plain=${plain//\\[tnrfb]/ }            # JSON \t, \n ...: whitespace (\\t too: more, never less)
    plain=${plain//[\"\'\\]/}                # quotes and backslashes out
    plain=${plain//[$'\t\n\r\v\f']/ }       # any whitespace is one space
    while :; do
        case $plain in
            *"  "*) plain=${plain//  / } ;;
            *//*) plain=${plain//\/\//\/} ;;
            */./*) plain=${plain//\/.\//\/} ;;
            *) break ;;
        esac
    done
    for w in "${words[@]}"; do
        case $plain in *"$w"*) return 0 ;; esac
    done
    return 1
}

value_of cwd || run cwd  # absent, or given twice (a nested key): the hook judges it
case $got in *\\*) run cwd ;; esac
cwd=$got
case $tool in
    Bash)
        value_of command || run command
        has_word "$got" && run word
        [ -n "$cwd" ] && under_root "$cwd" && run cwd
        ;;
    Read)
        value_of file_path || run path
        path=$got
        case $path in *\\*) run path ;; /*) ;; *) [ -n "$cwd" ] || run path; path=$cwd/$path ;; esac
        has_word "$path" && run word
        [ -L "$path" ] && run link
        case ${path##*/} in "" | . | ..) run path ;; esac
        under_root "${path%/*}/" && run read
        ;;
esac
exit 0
