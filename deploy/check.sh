#!/usr/bin/env bash
# Checks the deploy files offline, as CI does: the Kubernetes manifests against the Kubernetes OpenAPI schema
# with every reference resolved (deploy/kubernetes/validate.py, over Secrets made by make-secrets.sh), and the
# systemd units with systemd-analyze verify (any complaint fails) and the sysusers file with systemd-sysusers.
#   bash deploy/check.sh PATH/TO/tessera
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tessera=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "-- kubernetes"
TESSERA=$tessera bash "$root/deploy/kubernetes/make-secrets.sh" --out "$work/secrets.yaml" 2>/dev/null
python3 "$root/deploy/kubernetes/validate.py" "$work/secrets.yaml"

echo "-- systemd"
# verify needs the executables the units name: the built binary stands in for /usr/local/bin/tessera.
for unit in tessera-coordinator.service tessera-worker@.service; do
    sed "s|/usr/local/bin/tessera|$tessera|g" "$root/deploy/systemd/$unit" > "$work/$unit"
done
cp "$work/tessera-worker@.service" "$work/tessera-worker@1.service"
complaints=$(cd "$work" && systemd-analyze verify ./tessera-coordinator.service ./tessera-worker@1.service 2>&1) || {
    echo "$complaints" >&2; exit 1; }
[[ -z $complaints ]] || { echo "systemd-analyze verify: $complaints" >&2; exit 1; }
mkdir -p "$work/root/etc"
systemd-sysusers --root="$work/root" "$root/deploy/systemd/tessera.sysusers" 2>/dev/null
grep -q '^tessera:' "$work/root/etc/passwd" || { echo "tessera.sysusers made no tessera user" >&2; exit 1; }
echo "deploy/systemd: 2 units verified, sysusers makes the tessera user"
