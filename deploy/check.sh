#!/usr/bin/env bash
# Checks the deploy files offline, as CI does: the Kubernetes manifests against the Kubernetes OpenAPI schema
# with every reference resolved (deploy/kubernetes/validate.py, over Secrets made by make-secrets.sh), and any
# manifest beside them that the kustomization does not apply (a Job to run by hand) against the schema; the
# Compose files with docker-compose config (the Compose schema, no engine needed); the systemd units with
# systemd-analyze verify (any complaint fails) and the sysusers file with systemd-sysusers.
#   bash deploy/check.sh PATH/TO/tessera
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tessera=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "-- kubernetes"
TESSERA=$tessera bash "$root/deploy/kubernetes/make-secrets.sh" --out "$work/secrets.yaml" 2>/dev/null
python3 "$root/deploy/kubernetes/validate.py" "$work/secrets.yaml"
python3 - "$root/deploy/kubernetes" <<'PY'
import sys
from pathlib import Path
import kubernetes_validate, yaml
here = Path(sys.argv[1])
listed = set(yaml.safe_load((here / "kustomization.yaml").read_text())["resources"])
problems, checked = [], 0
for path in sorted(here.glob("*.yaml")):
    if path.name == "kustomization.yaml" or path.name in listed:
        continue
    for doc in yaml.safe_load_all(path.read_text()):
        if not doc:
            continue
        checked += 1
        try:
            kubernetes_validate.validate(doc, "1.30.0", strict=True)
        except kubernetes_validate.ValidationError as error:
            problems.append(f"{path.name}: {doc['kind']}/{doc['metadata']['name']}: {error.message} at {'/'.join(map(str, error.path))}")
print("\n".join(problems) or f"deploy/kubernetes: {checked} manifests outside the kustomization valid",
      file=sys.stderr if problems else sys.stdout)
sys.exit(1 if problems else 0)
PY

echo "-- compose"
# A variable a file requires (${NAME:?...}, from an env file that is not committed) gets a placeholder here.
compose_files=$(ls "$root"/docker-compose*.yml "$root"/deploy/docker-compose*.yml "$root"/deploy/compose/*.yml 2>/dev/null || true)
[[ -n $compose_files ]] || { echo "no Compose file found" >&2; exit 1; }
for file in $compose_files; do
    placeholders=()
    for name in $(grep -oE '\$\{[A-Za-z_][A-Za-z0-9_]*:?\?' "$file" | sed -E 's/^\$\{([A-Za-z0-9_]+).*/\1/' | sort -u); do
        placeholders+=("$name=check-placeholder")
    done
    services=$(cd "$(dirname "$file")" && env "${placeholders[@]}" docker-compose -f "$file" config --services) \
        || { echo "${file#"$root"/}: docker-compose config refuses it" >&2; exit 1; }
    echo "${file#"$root"/}: valid, $(wc -l <<<"$services") services"
done

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
