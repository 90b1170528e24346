#!/usr/bin/env bash
# One command from a fresh Debian 12 checkout to a transcode: installs the libraries, builds tessera in
# release mode, and runs it with the given arguments. Without arguments, it transcodes a generated 10 s
# sample clip to $TMPDIR/tessera-sample.mp4 (/tmp by default), outside the checkout. The Swift runtime
# is linked in and the SQL migrations compiled in, so .build/release/tessera alone can be copied to
# another Debian 12 host (see deploy/install-debian-deps.sh --runtime).
#   bash deploy/quickstart.sh
#   bash deploy/quickstart.sh transcode input.mov -o output.mp4 --crf 20
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/deploy/install-debian-deps.sh"
swift build -c release --static-swift-stdlib --package-path "$root" --product tessera >&2
if [[ $# -eq 0 ]]; then
    set -- transcode -y -o "${TMPDIR:-/tmp}/tessera-sample.mp4"
fi
exec "$root/.build/release/tessera" "$@"
