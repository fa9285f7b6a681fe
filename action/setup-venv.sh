#!/usr/bin/env bash
# action.yml's set-up step: the virtual environment at $RUNNER_TEMP/benchgate-venv with benchgate installed.
set -euo pipefail
venv="${RUNNER_TEMP:?}/benchgate-venv"
if [ "${BENCHGATE_SYSTEM_PACKAGES:-}" = "1" ]; then
  # Machines (and tests) with the dependencies preinstalled: reuse them, download nothing. No pip unless
  # benchgate itself must be installed below: bootstrapping pip is most of this step's time.
  "$BENCHGATE_PYTHON" -m venv --system-site-packages --without-pip "$venv"
  # --system-site-packages reaches the base interpreter's packages. When the given python is itself
  # a virtual environment, the dependencies are installed in that one: add its site directories
  # (site.addsitedir also runs their .pth files, e.g. an editable install's).
  "$BENCHGATE_PYTHON" - "$venv" <<'PY'
import pathlib, site, subprocess, sys
if sys.prefix != sys.base_prefix:
    venv_site = subprocess.run([f"{sys.argv[1]}/bin/python", "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                               capture_output=True, text=True, check=True).stdout.strip()
    lines = "".join(f"import site; site.addsitedir({path!r})\n" for path in site.getsitepackages())
    pathlib.Path(venv_site, "benchgate-parent-venv.pth").write_text(lines)
PY
  if ! "$venv/bin/python" -c 'import benchgate' 2>/dev/null; then
    "$venv/bin/python" -Im ensurepip --upgrade --default-pip >/dev/null  # what venv runs without --without-pip
    "$venv/bin/python" -m pip install --quiet --no-deps --no-index --no-build-isolation "$BENCHGATE_ACTION_PATH"
  fi
else
  "$BENCHGATE_PYTHON" -m venv "$venv"
  # Every download is checked against requirements-action.txt's hashes (wheels only, build backend
  # included); benchgate itself is then built from this checkout with nothing more fetched.
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --require-hashes --only-binary=:all: \
    -r "$BENCHGATE_ACTION_PATH/requirements-action.txt"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps --no-index --no-build-isolation \
    "$BENCHGATE_ACTION_PATH"
fi
"$venv/bin/python" -m benchgate --version
