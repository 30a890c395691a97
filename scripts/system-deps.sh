#!/usr/bin/env bash
# Debian packages the test suite drives as real tools (never downloaded at run time):
#   chromium  - the browser tests of the review page (tests/integration/test_dashboard_browser.py)
#   prometheus - its promtool checks deploy/prometheus/rules.yml
#   podman    - podman-compose (PyPI) asks it for its version before `config` validates
#               deploy/compose/compose.yaml; no engine or daemon is started
# Installed only when missing and when we are root with apt-get; otherwise the tests that need
# a tool skip and say why. Set JUDGEFLOW_SKIP_SYSTEM_DEPS=1 to leave the system alone.
set -uo pipefail
[ "${JUDGEFLOW_SKIP_SYSTEM_DEPS:-0}" = "1" ] && exit 0
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
command -v podman >/dev/null 2>&1 || missing+=(podman)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "==> not installing ${missing[*]} (needs root and apt-get); the tests that use them will skip" >&2
  exit 0
fi
echo "==> installing Debian packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
if apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
  exit 0
fi
echo "==> could not install ${missing[*]}; the tests that use them will skip" >&2
exit 0
