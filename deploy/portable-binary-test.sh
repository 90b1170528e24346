#!/usr/bin/env bash
# Builds the release binary as deploy/quickstart.sh does (--static-swift-stdlib) and checks that it runs
# copied alone, as on another Debian 12 host: no .resources beside it, the Swift toolchain off PATH and
# LD_LIBRARY_PATH, nothing linked from the toolchain; `--help`, `migrate` and a whole `transcode` there.
#   bash deploy/portable-binary-test.sh          (SWIFT_SCRATCH_PATH=DIR: build there instead of .build)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=(swift build -c release --static-swift-stdlib --package-path "$root" --product tessera ${SWIFT_SCRATCH_PATH:+--scratch-path "$SWIFT_SCRATCH_PATH"})
"${build[@]}"
binary=$("${build[@]}" --show-bin-path)/tessera
work=$(mktemp -d)
trap 'env -i PATH=/usr/bin:/bin "$work/bin/tessera" db stop --data-dir "$work/db" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
# As root, the embedded PostgreSQL runs as the postgres user, who must reach the data directory.
chmod 755 "$work"
mkdir -p "$work/bin"
cp "$binary" "$work/bin/tessera"
echo "release binary: $(du -m "$binary" | cut -f1) MB"
toolchain=$(dirname "$(dirname "$(command -v swift)")")
if ldd "$work/bin/tessera" | grep -e "$toolchain" -e "not found" -e swift; then
    echo "the release binary links the Swift toolchain's libraries or misses one" >&2
    exit 1
fi
run() { (cd "$work" && env -i PATH=/usr/bin:/bin HOME="$work" "$work/bin/tessera" "$@"); }
run --help >/dev/null
run migrate --data-dir "$work/db"
run transcode -o "$work/out.mp4" --data-dir "$work/db" --preset ultrafast
ffprobe -v error -show_entries format=duration -of csv=p=0 "$work/out.mp4"
echo "the release binary ran alone: --help, migrate and transcode"
