#!/usr/bin/env bash
# Installs LiteLLM's proxy (PyPI `litellm[proxy]`) into .venv-litellm/ for
# the interop tests (tests/interop/), with every package pinned by
# tests/interop/requirements.txt. Cheap once installed: it reinstalls only
# when the requirements file is newer than the venv.
#
#   bash scripts/litellm.sh           install if needed; prints the path of
#                                     the `litellm` executable on stdout
#   bash scripts/litellm.sh --freeze  regenerate the requirements file from
#                                     a fresh venv of litellm[proxy]==$LITELLM_VERSION
#   source scripts/litellm.sh         defines ensure_litellm (same as a run)
#
# Needs python3 (3.11 or newer: the pins are CPython 3.11's, Debian 12's
# python3) with venv and ensurepip; on Debian it installs python3 and
# python3-venv with apt-get when they are missing. Where it cannot run at all
# (no usable python3 and no apt-get) it prints why on stderr and exits with
# status 77, which the test turns into a skip. Any other failure (PyPI
# unreachable, a pin that no longer installs) is an error.
#
# Environment: LITELLM_VENV (default <repo>/.venv-litellm), PYTHON (default
# python3).

# 1.108.7 is the newest 1.x whose proxy extra installs from the registry
# this project uses: 1.108.8-1.108.12 pin litellm-enterprise==0.1.79.post2,
# 1.108.13-14 litellm-proxy-extras==0.4.110.post1, 1.109.x
# litellm-proxy-extras==0.4.113 and 1.110.x a `litellm-proxy` package, none
# of which it serves.
LITELLM_VERSION=1.108.7
LITELLM_CANNOT_INSTALL=77

_litellm_root() { cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd; }

_litellm_cannot() {
    echo "litellm.sh: cannot install LiteLLM's proxy here: $*" >&2
    return "$LITELLM_CANNOT_INSTALL"
}

# Makes sure `$PYTHON` exists, is 3.11+ and can create a venv with pip.
_litellm_python() {
    local py="${PYTHON:-python3}"
    local sudo=""
    [ "$(id -u)" = 0 ] || sudo=sudo
    local can_apt=1
    command -v apt-get >/dev/null || can_apt=0
    [ -z "$sudo" ] || command -v sudo >/dev/null || can_apt=0

    local need=()
    command -v "$py" >/dev/null || need+=(python3)
    # Debian ships venv without ensurepip: that is python3-venv.
    if [ ${#need[@]} = 0 ] && ! "$py" -c 'import ensurepip, venv' 2>/dev/null; then
        need+=(python3-venv)
    fi
    if [ ${#need[@]} != 0 ]; then
        [ "$can_apt" = 1 ] ||
            { _litellm_cannot "$py needs ${need[*]}, and there is no apt-get to install it"; return; }
        echo "installing Debian ${need[*]} (for LiteLLM's venv)" >&2
        $sudo apt-get update -qq >&2 || return 1
        # python3-venv pulls in the venv package of Debian's default python3.
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3 python3-venv >/dev/null ||
            return 1
        command -v "$py" >/dev/null && "$py" -c 'import ensurepip, venv' 2>/dev/null ||
            { _litellm_cannot "$py still has no venv/ensurepip after apt-get install python3-venv"; return; }
    fi
    "$py" -c 'import sys; sys.exit(sys.version_info < (3, 11))' ||
        { _litellm_cannot "$py is $("$py" -V 2>&1); the pins in tests/interop/requirements.txt need 3.11+"; return; }
    LITELLM_PYTHON="$py"
}

ensure_litellm() {
    local root venv req
    root=$(_litellm_root)
    venv="${LITELLM_VENV:-$root/.venv-litellm}"
    req="$root/tests/interop/requirements.txt"
    local stamp="$venv/.installed"
    if [ -x "$venv/bin/litellm" ] && [ -f "$stamp" ] && ! [ "$req" -nt "$stamp" ]; then
        echo "$venv/bin/litellm"
        return 0
    fi
    _litellm_python || return
    echo "installing litellm[proxy]==$LITELLM_VERSION and its pinned dependencies into $venv (a minute or two)" >&2
    # A fresh venv each time: pins that were dropped must not linger.
    "$LITELLM_PYTHON" -m venv --clear "$venv" >&2 || return 1
    # The pins come from `pip freeze` and name every package, so the
    # resolver only checks them (a Python other than 3.11 may add a few).
    PIP_DISABLE_PIP_VERSION_CHECK=1 "$venv/bin/python" -m pip install \
        --no-input --quiet --requirement "$req" >&2 || return 1
    [ "$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("litellm"))')" = "$LITELLM_VERSION" ] ||
        { echo "litellm.sh: $req does not pin litellm==$LITELLM_VERSION" >&2; return 1; }
    [ -x "$venv/bin/litellm" ] || { echo "litellm.sh: no $venv/bin/litellm after the install" >&2; return 1; }
    touch "$stamp"
    echo "$venv/bin/litellm"
}

# Regenerates the requirements file from a fresh resolution of
# litellm[proxy]==$LITELLM_VERSION (run it with the python3 of Debian 12).
freeze_litellm() {
    local root tmp
    root=$(_litellm_root)
    _litellm_python || return
    tmp=$(mktemp -d)
    "$LITELLM_PYTHON" -m venv "$tmp/venv" >&2 || return 1
    "$tmp/venv/bin/python" -m pip install --no-input --quiet "litellm[proxy]==$LITELLM_VERSION" >&2 ||
        return 1
    {
        echo "# Every package of LiteLLM's proxy, pinned: scripts/litellm.sh installs this"
        echo "# into .venv-litellm/ for tests/interop/. Generated by"
        echo "# \`bash scripts/litellm.sh --freeze\` (pip freeze of a fresh venv of"
        echo "# litellm[proxy]==$LITELLM_VERSION) on $("$LITELLM_PYTHON" -V)."
        "$tmp/venv/bin/python" -m pip freeze
    } >"$root/tests/interop/requirements.txt"
    rm -rf "$tmp"
    echo "wrote tests/interop/requirements.txt" >&2
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -euo pipefail
    if [ "${1:-}" = "--freeze" ]; then
        freeze_litellm
    else
        ensure_litellm
    fi
fi
