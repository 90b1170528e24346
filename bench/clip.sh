# Sourced by bench/run and bench/ladder: `clip SIZE SECONDS [GOP [X264 RATE]]` prints the path of a cached lavfi
# clip (testsrc2 at 30 fps with a 440 Hz tone, AAC) in "$cache", making it the first time. Needs `note`.
clip() {
    local size=$1 secs=$2 gop=${3:-60} rate=${4:--qp 8}
    local f="$cache/src-$size-${secs}s-g$gop.mp4"
    if [[ ! -f $f ]]; then
        note "generating $f"
        # shellcheck disable=SC2086
        ffmpeg -nostdin -v error -y -f lavfi -i "testsrc2=size=$size:rate=30" -f lavfi -i "sine=frequency=440:sample_rate=48000" \
            -t "$secs" -c:v libx264 -preset ultrafast $rate -g "$gop" -c:a aac "$f.part.mp4"
        mv "$f.part.mp4" "$f"
    fi
    echo "$f"
}
