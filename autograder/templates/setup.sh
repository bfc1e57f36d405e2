#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image.
# It installs the pinned Python packages into a venv (never into the system
# python3, which Gradescope's harness uses) and creates the unprivileged user
# that student code runs as.
set -euo pipefail

# The CPU-only wheel index for PyTorch: the default PyPI wheel is a CUDA build
# of several GB. Override for a mirror: TORCH_INDEX_URL=... bash setup.sh
TORCH_INDEX_URL="${TORCH_INDEX_URL:-https://download.pytorch.org/whl/cpu}"
TORCH_VERSION="@TORCH_VERSION@"
AUTOGRADER_ROOT="${AUTOGRADER_ROOT:-/autograder}"
SOURCE="$AUTOGRADER_ROOT/source"
VENV="$AUTOGRADER_ROOT/venv"
STUDENT_USER="@STUDENT_USER@"

if [ "${AUTOGRADER_SKIP_INSTALL:-0}" = "1" ]; then
    PY="$(command -v python3)"
    echo "AUTOGRADER_SKIP_INSTALL=1: not installing Python packages; grading will use $PY"
else
    # Ubuntu's python3 has the venv module but not ensurepip until python3-venv is installed.
    if ! python3 -c "import ensurepip, venv" >/dev/null 2>&1; then
        apt-get install -y --no-install-recommends python3-venv
    fi
    python3 -m venv "$VENV"
    PY="$VENV/bin/python"
    "$PY" -m pip install --quiet --upgrade pip
    # torch first, from the CPU index, so requirements.txt finds it satisfied.
    "$PY" -m pip install --quiet --index-url "$TORCH_INDEX_URL" "torch==$TORCH_VERSION"
    "$PY" -m pip install --quiet -r "$SOURCE/requirements.txt"
fi

if [ "$(id -u)" = "0" ] && ! id "$STUDENT_USER" >/dev/null 2>&1; then
    useradd --system --no-create-home --shell /usr/sbin/nologin "$STUDENT_USER" || true
fi

# Fail the image build now, not at the first submission, if anything is missing.
"$PY" -c "import torch, numpy, pytest, psutil; print('grading stack: torch', torch.__version__, 'numpy', numpy.__version__)"
cd "$SOURCE" && "$PY" -c "import autograder.platforms.gradescope"
