#!/usr/bin/env bash
# PrairieLearn runs this for every submission, as root, in the grader image
# (info.json: externalGradingOptions.entrypoint). It grades $PL_GRADE_ROOT/student/
# (default /grade) with the kit's engine and writes $PL_GRADE_ROOT/results/results.json.
PL_GRADE_ROOT="${PL_GRADE_ROOT:-/grade}"
export PL_GRADE_ROOT
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# The image's venv (the Dockerfile installs the pinned packages there), else python3 on PATH.
KIT_VENV="${KIT_VENV:-@KIT_VENV@}"
if [ -x "$KIT_VENV/bin/python" ]; then
    PY="$KIT_VENV/bin/python"
else
    PY="$(command -v python3)"
fi
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONDONTWRITEBYTECODE=1
results="$PL_GRADE_ROOT/results/results.json"
mkdir -p "$PL_GRADE_ROOT/results"   # PrairieLearn does not create it
cd "$HERE" && "$PY" -m autograder prairielearn
status=$?
if [ ! -s "$results" ]; then
    # The grader could not even start (broken image?): still give PrairieLearn a valid file,
    # marked not gradable so the student loses no attempt.
    echo '{"gradable": false, "score": 0, "message": "The autograder could not start; course staff have been notified.", "format_errors": ["The autograder could not start; course staff have been notified. This submission does not use up an attempt."], "output": "", "tests": []}' > "$results"
fi
echo "[grader] exit status $status; results in $results" >&2
# PrairieLearn reads results.json only after an exit status of 0: the file above is always valid.
exit 0
