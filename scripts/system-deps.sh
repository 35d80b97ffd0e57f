#!/usr/bin/env bash
# Installs the Debian packages the test suite drives for real (used by `make test`):
#   docker-compose  validates docker-compose.yml (`docker-compose config`)
#   prometheus      a real Prometheus server scrapes the dashboard's /metrics; promtool checks it
#   chromium        the headless browser the dashboard page tests drive (via Playwright)
#   iproute2        ss: the gateway tests read a connection's kernel socket buffers
#   openssl         the local CA and certificates of the broker's and the gateway's TLS listeners
# Does nothing when every tool is already there; needs root (or sudo) otherwise.
set -euo pipefail
want=()
command -v docker-compose >/dev/null 2>&1 || want+=(docker-compose)
{ command -v prometheus && command -v promtool; } >/dev/null 2>&1 || want+=(prometheus)
[ -x /usr/bin/chromium ] || want+=(chromium)
command -v ss >/dev/null 2>&1 || want+=(iproute2)
command -v openssl >/dev/null 2>&1 || want+=(openssl)
[ ${#want[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "configwatch: please install: ${want[*]} (no apt-get on this machine)" >&2
  exit 1
fi
echo "installing system packages: ${want[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null
