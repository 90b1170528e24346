#!/usr/bin/env bash
# One command from a fresh Debian 12 checkout to a transcode: installs the libraries, builds tessera in
# release mode, and runs it with the given arguments. Without an input file, `transcode` generates a
# 10 s sample clip first. The Swift runtime is linked in and the SQL migrations compiled in, so
# .build/release/tessera alone can be copied to another Debian 12 host (see deploy/install-debian-deps.sh --runtime).
#   bash deploy/quickstart.sh transcode -o sample.mp4
#   bash deploy/quickstart.sh transcode input.mov -o output.mp4 --crf 20
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/deploy/install-debian-deps.sh"
swift build -c release --static-swift-stdlib --package-path "$root" --product tessera >&2
exec "$root/.build/release/tessera" "$@"
