#!/usr/bin/env bash
# Installs the Debian 12 packages Tessera builds and runs with: FFmpeg 5.1 libraries and libx264,
# libzmq, libpq and the PostgreSQL server, the ffmpeg/ffprobe tools the tests check with, pkg-config.
# Installs only what is missing; needs root (or sudo) when something is.
set -euo pipefail

packages=(libavformat-dev libavcodec-dev libavutil-dev libswscale-dev libswresample-dev libx264-dev
          libzmq3-dev libpq-dev postgresql ffmpeg pkg-config)

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
    exit 0
fi

sudo=()
if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "install-debian-deps: run as root or install sudo; missing: ${missing[*]}" >&2; exit 1; }
    sudo=(sudo)
fi
echo "install-debian-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
