#!/bin/sh
# A development CA and the review page's TLS certificate, for the compose stack's dashboard
# (it binds 0.0.0.0 inside its container, so it serves HTTPS only: dashboard/security.py).
#
#   deploy/compose/dev-tls.sh [DIR] [NAME ...]
#
# DIR (default deploy/compose/tls) gets ca.crt (import it into the browser, or pass it to
# curl --cacert), dashboard.crt and dashboard.key. The certificate names localhost and
# 127.0.0.1, plus every NAME given (a DNS name the page is reached by; also give it to the
# dashboard with --allowed-host). In production use a certificate from the hospital's CA
# instead: put it in DIR under the same two file names (JUDGEFLOW_DASHBOARD_TLS_DIR).
set -eu
dir=${1:-$(dirname "$0")/tls}
[ $# -gt 0 ] && shift
mkdir -p "$dir"
chmod 700 "$dir"  # the key is readable by the container's user (10001): guard the folder
san="DNS:localhost,IP:127.0.0.1"
for name in "$@"; do san="$san,DNS:$name"; done
openssl req -x509 -newkey rsa:2048 -nodes -days 825 -subj "/CN=judgeflow dev CA" \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign" \
  -keyout "$dir/ca.key" -out "$dir/ca.crt" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" \
  -keyout "$dir/dashboard.key" -out "$dir/dashboard.csr" 2>/dev/null
printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n' "$san" \
  > "$dir/dashboard.ext"
openssl x509 -req -in "$dir/dashboard.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" \
  -CAcreateserial -days 397 -extfile "$dir/dashboard.ext" -out "$dir/dashboard.crt" 2>/dev/null
rm -f "$dir/dashboard.csr" "$dir/dashboard.ext" "$dir/ca.srl"
chmod 600 "$dir/ca.key"
chmod 644 "$dir/dashboard.key" "$dir/dashboard.crt" "$dir/ca.crt"
echo "$dir: ca.crt (trust it in the browser), dashboard.crt, dashboard.key ($san)"
