#!/usr/bin/env bash
# Make a private CA and certificates for NATS TLS (testing and small private deployments).
#
#   deploy/tls/make-certs.sh OUT_DIR [SAN ...]
#
# SANs are openssl subjectAltName entries, e.g. IP:10.0.0.5 DNS:nats-1.example.org; the server
# certificate always covers localhost, 127.0.0.1, ::1, nats, nats-1..3 and the in-cluster names of the
# Helm chart's service (nats.rlar.svc, *.nats-headless.rlar.svc). Writes (PEM):
#   ca.pem ca-key.pem                 the CA (keep ca-key.pem offline in production)
#   server.pem server-key.pem         every NATS node: client, route (cluster) and leaf-node listeners
#   client.pem client-key.pem         a client certificate, for servers that verify clients (mTLS)
# Keys are EC P-256; certificates last DAYS days (default 365). Existing files are overwritten.
set -euo pipefail

if [ $# -lt 1 ]; then
  echo "usage: $0 OUT_DIR [SAN ...]   (SAN like IP:10.0.0.5 or DNS:nats.example.org)" >&2
  exit 2
fi
command -v openssl >/dev/null || { echo "error: openssl is not installed (apt-get install openssl)" >&2; exit 1; }

out="$1"; shift
days="${DAYS:-365}"
mkdir -p "$out"
cd "$out"
umask 077

sans="DNS:localhost,IP:127.0.0.1,IP:::1,DNS:nats,DNS:nats-1,DNS:nats-2,DNS:nats-3"
sans="$sans,DNS:nats.rlar.svc,DNS:nats.rlar.svc.cluster.local,DNS:*.nats-headless.rlar.svc"
sans="$sans,DNS:*.nats-headless.rlar.svc.cluster.local"
for s in "$@"; do sans="$sans,$s"; done

key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

key ca-key.pem
openssl req -x509 -new -key ca-key.pem -sha256 -days "$days" -subj "/CN=RLAR test CA" \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
  -out ca.pem

sign() {  # name, subject, extended key usage, [subjectAltName]
  local name="$1" subj="$2" eku="$3" san="${4:-}"
  key "$name-key.pem"
  openssl req -new -key "$name-key.pem" -subj "$subj" -out "$name.csr"
  {
    echo "basicConstraints=CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$eku"
    if [ -n "$san" ]; then echo "subjectAltName=$san"; fi
  } > "$name.ext"
  openssl x509 -req -in "$name.csr" -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days "$days" \
    -sha256 -extfile "$name.ext" -out "$name.pem" 2>/dev/null
  rm -f "$name.csr" "$name.ext"
}

# Route and leaf-node connections are TLS clients of the other node too: serverAuth and clientAuth.
sign server "/CN=rlar-nats" "serverAuth,clientAuth" "$sans"
sign client "/CN=rlar-client" "clientAuth"
rm -f ca.srl
chmod 600 ./*-key.pem
chmod 644 ca.pem server.pem client.pem
openssl verify -CAfile ca.pem server.pem client.pem >/dev/null
echo "certificates in $PWD (server SANs: $sans)"
