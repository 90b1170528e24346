#!/usr/bin/env bash
# Installs the Debian 12 packages Tessera needs; only what is missing; needs root (or sudo) when something is.
#   install-debian-deps.sh            building and testing: FFmpeg 5.1 and libx264 headers, libzmq, libpq, libcurl, the
#                                     PostgreSQL server, the ffmpeg/ffprobe tools the tests check with, pkg-config
#   install-debian-deps.sh --build    building only (the headers and pkg-config)
#   install-debian-deps.sh --runtime  running a copied `tessera` binary: the shared libraries it links, no
#                                     compiler, no Swift toolchain (a worker host; a coordinator host too, its
#                                     job store elsewhere). Add `postgresql` for `tessera transcode` on that host.
set -euo pipefail

build=(libavformat-dev libavcodec-dev libavutil-dev libswscale-dev libswresample-dev libx264-dev libzmq3-dev libpq-dev libcurl4-openssl-dev pkg-config)
runtime=(libavformat59 libavcodec59 libavutil57 libswscale6 libswresample4 libx264-164 libzmq5 libpq5 libcurl4 libstdc++6 ca-certificates)
case "${1:-}" in
    "") packages=("${build[@]}" postgresql ffmpeg) ;;
    --build) packages=("${build[@]}") ;;
    --runtime) packages=("${runtime[@]}") ;;
    *) echo "install-debian-deps: unknown option $1 (--build, --runtime)" >&2; exit 2 ;;
esac

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
