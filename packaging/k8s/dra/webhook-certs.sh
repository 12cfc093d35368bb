#!/bin/sh
# webhook-certs.sh — the certificates convgpu-webhook serves with, and the manifests that use
# them: a private CA, a serving certificate for the webhook's Service (and any extra names), a
# Secret holding it, and webhook.yaml with the CA as caBundle and the failure policy filled in.
#
# Usage: webhook-certs.sh OUTDIR [EXTRA_SAN...]     (EXTRA_SAN: DNS:name or IP:address)
#   FAILURE_POLICY=Ignore|Fail (default Ignore: fail open), NAMESPACE (default convgpu-system)
# Writes OUTDIR/ca.crt, ca.key, tls.crt, tls.key, secret.yaml, webhook.yaml; then
#   kubectl apply -f OUTDIR/secret.yaml -f OUTDIR/webhook.yaml
set -eu
[ $# -ge 1 ] || { echo "usage: $0 OUTDIR [EXTRA_SAN...]" >&2; exit 2; }
out=$1; shift
ns=${NAMESPACE:-convgpu-system}
policy=${FAILURE_POLICY:-Ignore}
case $policy in Ignore|Fail) ;; *) echo "$0: FAILURE_POLICY is Ignore or Fail" >&2; exit 2;; esac
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
umask 077
svc=convgpu-webhook.$ns.svc
san="DNS:$svc,DNS:$svc.cluster.local"
for s in "$@"; do san="$san,$s"; done
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3650 \
    -subj "/CN=convgpu-webhook-ca" -keyout "$out/ca.key" -out "$out/ca.crt" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$svc" \
    -keyout "$out/tls.key" -out "$out/tls.csr" 2>/dev/null
printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth\n' "$san" >"$out/ext.cnf"
openssl x509 -req -in "$out/tls.csr" -CA "$out/ca.crt" -CAkey "$out/ca.key" -CAcreateserial \
    -days 825 -extfile "$out/ext.cnf" -out "$out/tls.crt" 2>/dev/null
rm -f "$out/tls.csr" "$out/ext.cnf" "$out/ca.srl"
b64() { base64 <"$1" | tr -d '\n'; }
cat >"$out/secret.yaml" <<YAML
apiVersion: v1
kind: Secret
metadata:
  name: convgpu-webhook-tls
  namespace: $ns
type: kubernetes.io/tls
data:
  tls.crt: $(b64 "$out/tls.crt")
  tls.key: $(b64 "$out/tls.key")
YAML
ca=$(b64 "$out/ca.crt")
sed -e "s|\${CA_BUNDLE}|$ca|" -e "s|\${FAILURE_POLICY}|$policy|" \
    -e "s|namespace: convgpu-system|namespace: $ns|" "$here/webhook.yaml" >"$out/webhook.yaml"
chmod 644 "$out/ca.crt" "$out/tls.crt" "$out/webhook.yaml"
echo "wrote $out: ca.crt tls.crt tls.key secret.yaml webhook.yaml (failurePolicy $policy)"
