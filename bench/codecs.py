"""`tessera transcode --codec hevc|av1` against one whole-file ffmpeg process with the same encoder, preset and CRF on
the same cores (ffmpeg's own threading for that encoder: x265's pool, SVT-AV1's logical processors): wall time
(minimum and median of --runs) on a 1080p input, and size and PSNR against that encode on the real-footage clips.

    python3 bench/codecs.py TESSERA_BINARY CACHE_DIR OUT_JSON [--codecs hevc,av1] [--runs 3] [--clips bikes,photos-cuts]
                            [--preset-hevc medium] [--preset-av1 10] [--crf-hevc 28] [--crf-av1 35] [--no-throughput]

Per clip it also gives the PSNR of the frames around Tessera's segment joins (--join-frames either side) against
ffmpeg's over the same frames, where a segment-parallel encode would lose quality if anywhere.

Defaults are each encoder's own through ffmpeg. Targets (issue 36): throughput >= 1.0x ffmpeg's on the 1080p input;
size within 2 % and PSNR within 0.1 dB of ffmpeg's per clip. On a shared machine the figures are indicative only.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import real_footage  # noqa: E402  (clips, run, ffmpeg, video_bytes, per_frame, db, timed, note)

ENCODERS = {"hevc": "libx265", "av1": "libsvtav1"}


def ffmpeg_args(codec, source, out, preset, crf):
    args = ["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", source, "-map", "0:v", "-c:v", ENCODERS[codec], "-preset", preset,
            "-crf", str(crf)]
    if codec == "hevc":
        args += ["-tag:v", "hvc1", "-x265-params", "log-level=error"]
    return args + [out]


def tessera_args(tessera, codec, source, out, preset, crf, data_dir):
    return [tessera, "transcode", source, "-o", out, "-y", "--audio", "none", "--codec", codec, "--preset", preset,
            "--crf", str(crf), "--data-dir", data_dir]


def psnr(path, source, work):
    mse, _ = real_footage.per_frame(path, source, work)
    return real_footage.db(statistics.fmean(mse)), mse


def join_frames(segment_frames, reach, total):
    """Display positions within `reach` frames of a join between segments."""
    joins, at = [], 0
    for count in segment_frames[:-1]:
        at += count
        joins.append(at)
    return sorted({i for j in joins for i in range(j - reach, j + reach) if 0 <= i < total})


def main():
    p = argparse.ArgumentParser()
    p.add_argument("tessera")
    p.add_argument("cache")
    p.add_argument("out")
    p.add_argument("--codecs", default="hevc,av1")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--clips", default="bikes,carphone,photos-cuts")
    p.add_argument("--preset-hevc", default="medium")
    p.add_argument("--preset-av1", default="10")
    p.add_argument("--crf-hevc", type=int, default=28)
    p.add_argument("--crf-av1", type=int, default=35)
    p.add_argument("--no-throughput", action="store_true")
    p.add_argument("--join-frames", type=int, default=4)
    a = p.parse_args()
    clips = real_footage.clips(a.tessera, a.cache)
    results = {}
    # The job store's server runs as its own user: not in a private temporary folder (as bench/real_footage.py).
    data_dir = os.path.join(os.path.abspath(a.cache), "db")
    with tempfile.TemporaryDirectory() as work:
        ours, theirs = os.path.join(work, "tessera.mp4"), os.path.join(work, "ffmpeg.mp4")
        for codec in a.codecs.split(","):
            preset, crf = getattr(a, f"preset_{codec}"), getattr(a, f"crf_{codec}")
            entry = {"preset": preset, "crf": crf, "clips": {}}
            # Throughput on the 1080p sample: medians of --runs, one encode at a time.
            if not a.no_throughput:
                source = clips["sample"]
                real_footage.note(f"{codec}: throughput on {os.path.basename(source)}")
                t = [real_footage.timed(tessera_args(a.tessera, codec, source, ours, preset, crf, data_dir)) for _ in range(a.runs)]
                f = [real_footage.timed(ffmpeg_args(codec, source, theirs, preset, crf)) for _ in range(a.runs)]
                entry["throughput"] = {"tesseraSeconds": t, "ffmpegSeconds": f,
                                       "speedup": statistics.median(f) / statistics.median(t)}
            for name in a.clips.split(","):
                real_footage.note(f"{codec}: quality on {name}")
                source = clips[name]
                made = real_footage.run(tessera_args(a.tessera, codec, source, ours, preset, crf, data_dir) + ["--json"],
                                        capture_output=True, text=True)
                segments = json.loads(made.stdout)["segmentFrames"]
                real_footage.run(ffmpeg_args(codec, source, theirs, preset, crf), capture_output=True)
                size_ours, size_theirs = real_footage.video_bytes(ours), real_footage.video_bytes(theirs)
                (db_ours, mse_ours), (db_theirs, mse_theirs) = psnr(ours, source, work), psnr(theirs, source, work)
                near = join_frames(segments, a.join_frames, len(mse_ours))
                joins = (real_footage.db(statistics.fmean(mse_ours[i] for i in near))
                         - real_footage.db(statistics.fmean(mse_theirs[i] for i in near))) if near else None
                entry["clips"][name] = {"sizeRatio": size_ours / size_theirs, "psnrDelta": db_ours - db_theirs,
                                        "psnr": db_ours, "ffmpegPSNR": db_theirs, "segments": len(segments),
                                        "joinFrames": len(near), "joinPSNRDelta": joins}
            results[codec] = entry
    subprocess.run([a.tessera, "db", "stop", "--data-dir", data_dir], capture_output=True)
    with open(a.out, "w") as out:
        json.dump(results, out, indent=2)
    print(f"{'codec':6} {'clip':14} {'size':>8} {'PSNR Δ':>8} {'at joins':>9}   speed (1080p, medians)")
    for codec, entry in results.items():
        if "throughput" in entry:
            print(f"{codec:6} {'':14} {'':>8} {'':>8} {'':>9}   {entry['throughput']['speedup']:.2f}x ffmpeg")
        for name, c in entry["clips"].items():
            joins = f"{c['joinPSNRDelta']:+7.2f}dB" if c["joinPSNRDelta"] is not None else "       -"
            print(f"{codec:6} {name:14} {100 * (c['sizeRatio'] - 1):+7.1f}% {c['psnrDelta']:+7.2f}dB {joins}  ({c['segments']} segments)")


if __name__ == "__main__":
    main()
