#!/usr/bin/env bash
# Creates .venv with a Python >= 3.12 and installs the project into it (editable, with the dev, dask and models extras).
# Finds the interpreter by itself: $PYTHON if set, then python3.13/python3.12/python3 on PATH,
# then pyenv-installed versions. Re-running is cheap: it reinstalls only when pyproject.toml changed.
set -euo pipefail
cd "$(dirname "$0")/.."

suitable() { "$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' >/dev/null 2>&1; }

find_python() {
    local c
    for c in "${PYTHON:-}" python3.13 python3.12 python3; do
        [ -n "$c" ] && command -v "$c" >/dev/null 2>&1 && suitable "$c" && { command -v "$c"; return 0; }
    done
    for c in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.1[2-9]*/bin/python3; do
        [ -x "$c" ] && suitable "$c" && { echo "$c"; return 0; }
    done
    return 1
}

if [ ! -x .venv/bin/python ] || ! suitable .venv/bin/python; then
    if ! py=$(find_python); then
        echo "ragspine_eval needs Python >= 3.12 (the rag-spine engine requires it) and found none." >&2
        echo "Install one (e.g. 'pyenv install 3.12' or your OS package python3.12), or point PYTHON at it:" >&2
        echo "    PYTHON=/path/to/python3.12 make run" >&2
        exit 1
    fi
    echo "Creating .venv with $py ($("$py" --version 2>&1))"
    rm -rf .venv
    "$py" -m venv .venv
fi

stamp=.venv/.installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    echo "Installing ragspine_eval and its dependencies into .venv"
    .venv/bin/python -m pip install --quiet --upgrade pip
    .venv/bin/python -m pip install --quiet -e '.[dev,dask,models]'
    touch "$stamp"
fi
# The notebooks' kernel; cheap, so checked on every run (a deleted or edited spec is rewritten).
.venv/bin/python -m ragspine_eval.workbench.rendering.kernel >/dev/null
