#!/usr/bin/env bash
# One command from a fresh Debian 12 checkout to a transcode: installs the libraries, builds tessera in
# release mode, and runs it with the given arguments. Without an input file, `transcode` generates a
# 10 s sample clip first.
#   bash deploy/quickstart.sh transcode -o sample.mp4
#   bash deploy/quickstart.sh transcode input.mov -o output.mp4 --crf 20
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/deploy/install-debian-deps.sh"
swift build -c release --package-path "$root" --product tessera >&2
exec "$root/.build/release/tessera" "$@"
