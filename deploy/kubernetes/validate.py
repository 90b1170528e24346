#!/usr/bin/env python3
"""Checks that deploy/kubernetes works as shipped, offline: every resource the kustomization lists is valid
against the Kubernetes OpenAPI schema (kubernetes-validate, strict: no unknown fields), and everything a
resource refers to is defined among them: claims, Secrets and their keys, the Deployments a Service selects
or an autoscaler scales, the image the kustomization names. Exit status 1 with one line per problem.

    python3 deploy/kubernetes/validate.py SECRETS.yaml   # SECRETS.yaml from make-secrets.sh --out
"""
import sys
from pathlib import Path

import kubernetes_validate
import yaml

VERSION = "1.30.0"
here = Path(__file__).resolve().parent
problems = []

kustomization = yaml.safe_load((here / "kustomization.yaml").read_text())
docs = []
for name in kustomization["resources"]:
    path = Path(sys.argv[1]) if name == "secrets.generated.yaml" and len(sys.argv) > 1 else here / name
    if not path.exists():
        problems.append(f"{name}: listed in kustomization.yaml, missing")
        continue
    for doc in yaml.safe_load_all(path.read_text()):
        if doc:
            docs.append((name, doc))

for name, doc in docs:
    try:
        kubernetes_validate.validate(doc, VERSION, strict=True)
    except kubernetes_validate.ValidationError as error:
        problems.append(f"{name}: {doc['kind']}/{doc['metadata']['name']}: {error.message} at {'/'.join(map(str, error.path))}")

def defined(kind):
    return {doc["metadata"]["name"]: doc for _, doc in docs if doc["kind"] == kind}

secrets = {n: set(d.get("data", {})) | set(d.get("stringData", {})) for n, d in defined("Secret").items()}
claims = set(defined("PersistentVolumeClaim"))
workloads = {**defined("Deployment"), **defined("StatefulSet")}
images = {i["name"] for i in kustomization.get("images", [])}

for name, doc in workloads.items():
    pod = doc["spec"]["template"]["spec"]
    labels = doc["spec"]["template"]["metadata"].get("labels", {})
    if any(labels.get(k) != v for k, v in doc["spec"]["selector"]["matchLabels"].items()):
        problems.append(f"{name}: its selector does not match its pod labels")
    templates = {t["metadata"]["name"] for t in doc["spec"].get("volumeClaimTemplates", [])}
    volumes = {v["name"] for v in pod.get("volumes", [])} | templates
    for volume in pod.get("volumes", []):
        if "persistentVolumeClaim" in volume and volume["persistentVolumeClaim"]["claimName"] not in claims:
            problems.append(f"{name}: claim {volume['persistentVolumeClaim']['claimName']} is not defined")
        if "secret" in volume and volume["secret"]["secretName"] not in secrets:
            problems.append(f"{name}: Secret {volume['secret']['secretName']} is not defined")
    for container in pod["containers"] + pod.get("initContainers", []):
        image = container["image"].split(":")[0]
        if "/" not in image and image not in images and ":" not in container["image"]:
            problems.append(f"{name}: image {container['image']} has no tag and no kustomization image")
        for env in container.get("env", []):
            ref = env.get("valueFrom", {}).get("secretKeyRef")
            if ref and ref["key"] not in secrets.get(ref["name"], set()):
                problems.append(f"{name}: Secret {ref['name']} has no key {ref['key']}")
        for mount in container.get("volumeMounts", []):
            if mount["name"] not in volumes:
                problems.append(f"{name}: mounts volume {mount['name']}, not defined")
        ports = {p.get("name") for p in container.get("ports", [])} | {p["containerPort"] for p in container.get("ports", [])}
        for probe in ("readinessProbe", "livenessProbe"):
            port = container.get(probe, {}).get("httpGet", {}).get("port")
            if port is not None and port not in ports:
                problems.append(f"{name}: {probe} on port {port}, which the container does not declare")
        args = " ".join(container.get("args", []))
        # The files the pod reads from its Secrets exist in them.
        for volume in pod.get("volumes", []):
            secret = volume.get("secret", {}).get("secretName")
            mount = next((m["mountPath"] for m in container.get("volumeMounts", []) if m["name"] == volume["name"]), None)
            if secret and mount:
                for word in args.replace(",", " ").split():
                    if word.startswith(mount + "/") and word[len(mount) + 1:] not in secrets.get(secret, set()):
                        problems.append(f"{name}: reads {word}, which Secret {secret} does not hold")
    if doc["kind"] == "StatefulSet" and doc["spec"]["serviceName"] not in defined("Service"):
        problems.append(f"{name}: its service {doc['spec']['serviceName']} is not defined")
    annotations = doc["spec"]["template"]["metadata"].get("annotations", {})
    if annotations.get("prometheus.io/scrape") == "true":
        port = int(annotations["prometheus.io/port"])
        if not any(p["containerPort"] == port for c in pod["containers"] for p in c.get("ports", [])):
            problems.append(f"{name}: Prometheus scrapes port {port}, which no container declares")
    for container in pod["containers"]:
        if "requests" not in container.get("resources", {}):
            problems.append(f"{name}: container {container['name']} requests no resources")

for name, service in defined("Service").items():
    selector = service["spec"]["selector"]
    if not any(all(w["spec"]["template"]["metadata"]["labels"].get(k) == v for k, v in selector.items()) for w in workloads.values()):
        problems.append(f"Service {name}: selects no pods")

for name, hpa in defined("HorizontalPodAutoscaler").items():
    if hpa["spec"]["scaleTargetRef"]["name"] not in workloads:
        problems.append(f"HorizontalPodAutoscaler {name}: scales {hpa['spec']['scaleTargetRef']['name']}, not defined")

for problem in problems:
    print(f"deploy/kubernetes: {problem}", file=sys.stderr)
print(f"deploy/kubernetes: {len(docs)} resources checked against Kubernetes {VERSION}, {len(problems)} problems")
sys.exit(1 if problems else 0)
