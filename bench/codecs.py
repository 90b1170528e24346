"""`tessera transcode --codec hevc|av1` against one whole-file ffmpeg process with the same encoder, preset and CRF on
the same cores (ffmpeg's own threading for that encoder: x265's pool, SVT-AV1's logical processors): wall time
(minimum and median of --runs) on a 1080p input, and size and PSNR against that encode on the real-footage clips.

    python3 bench/codecs.py TESSERA_BINARY CACHE_DIR OUT_JSON [--codecs hevc,av1] [--runs 3] [--clips bikes,photos-cuts]
                            [--preset-hevc medium] [--preset-av1 10] [--crf-hevc 28] [--crf-av1 35] [--no-throughput]
                            [--sample-seconds 10]

`--clips ""` measures throughput only.

The 1080p input is `tessera sample` of --sample-seconds; the two commands take turns (Tessera, ffmpeg, Tessera, ...), so
a drift in the machine's speed falls on both. In a virtual machine the host's steal over each run (time the host ran
other guests: neither command had it) is printed with the ratios. Per clip it also gives the PSNR of the frames around Tessera's segment
joins (--join-frames either side) against ffmpeg's over the same frames, where a segment-parallel encode would lose
quality if anywhere: over all joins, and the worst join.

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


def join_windows(segment_frames, reach, total):
    """Per join between segments, the display positions within `reach` frames of it."""
    windows, at = [], 0
    for count in segment_frames[:-1]:
        at += count
        windows.append([i for i in range(at - reach, at + reach) if 0 <= i < total])
    return windows


def sample(tessera, cache, seconds):
    """`tessera sample` at 1080p, `seconds` long, made once into CACHE_DIR/real."""
    path = os.path.join(cache, "real", f"sample-1080p-{seconds}s.mp4")
    if not os.path.exists(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)  # --clips "": nothing else has made the directory
        real_footage.run([tessera, "sample", path + ".part.mp4", "--seconds", str(seconds), "--size", "1920x1080"],
                         stderr=subprocess.DEVNULL)
        os.rename(path + ".part.mp4", path)
    return path


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
    p.add_argument("--sample-seconds", type=int, default=10)
    a = p.parse_args()
    names = [n for n in a.clips.split(",") if n]
    clips = real_footage.clips(a.tessera, a.cache) if names else {}
    results = {}
    # The job store's server runs as its own user: not in a private temporary folder (as bench/real_footage.py).
    data_dir = os.path.join(os.path.abspath(a.cache), "db")
    with tempfile.TemporaryDirectory() as work:
        ours, theirs = os.path.join(work, "tessera.mp4"), os.path.join(work, "ffmpeg.mp4")
        for codec in a.codecs.split(","):
            preset, crf = getattr(a, f"preset_{codec}"), getattr(a, f"crf_{codec}")
            entry = {"preset": preset, "crf": crf, "clips": {}}
            # Throughput on the 1080p sample: medians of --runs, one encode at a time, the two taking turns.
            if not a.no_throughput:
                source = sample(a.tessera, a.cache, a.sample_seconds)
                real_footage.note(f"{codec}: throughput on {os.path.basename(source)}")
                t, f = [], []
                for _ in range(a.runs):
                    t.append(real_footage.timed_steal(tessera_args(a.tessera, codec, source, ours, preset, crf, data_dir)))
                    f.append(real_footage.timed_steal(ffmpeg_args(codec, source, theirs, preset, crf)))
                entry["throughput"] = {"input": os.path.basename(source), "tesseraSeconds": [s for s, _ in t],
                                       "ffmpegSeconds": [s for s, _ in f], "tesseraSteal": [round(x, 3) for _, x in t],
                                       "ffmpegSteal": [round(x, 3) for _, x in f],
                                       "speedup": statistics.median(s for s, _ in f) / statistics.median(s for s, _ in t),
                                       "pairs": [fs / ts for (ts, _), (fs, _) in zip(t, f)]}
            for name in names:
                real_footage.note(f"{codec}: quality on {name}")
                # Any other clip by name from CACHE/real (e.g. a trimmed photos clip made by hand).
                source = clips.get(name) or os.path.join(a.cache, "real", name + ".mp4")
                made = real_footage.run(tessera_args(a.tessera, codec, source, ours, preset, crf, data_dir) + ["--json"],
                                        capture_output=True, text=True)
                segments = json.loads(made.stdout)["segmentFrames"]
                real_footage.run(ffmpeg_args(codec, source, theirs, preset, crf), capture_output=True)
                size_ours, size_theirs = real_footage.video_bytes(ours), real_footage.video_bytes(theirs)
                (db_ours, mse_ours), (db_theirs, mse_theirs) = psnr(ours, source, work), psnr(theirs, source, work)
                windows = join_windows(segments, a.join_frames, len(mse_ours))

                def delta(frames):
                    return (real_footage.db(statistics.fmean(mse_ours[i] for i in frames))
                            - real_footage.db(statistics.fmean(mse_theirs[i] for i in frames)))
                near = sorted({i for w in windows for i in w})
                entry["clips"][name] = {"sizeRatio": size_ours / size_theirs, "psnrDelta": db_ours - db_theirs,
                                        "psnr": db_ours, "ffmpegPSNR": db_theirs, "segments": len(segments),
                                        "segmentFrames": segments, "joinFrames": len(near),
                                        "joinPSNRDelta": delta(near) if near else None,
                                        "worstJoinPSNRDelta": min(delta(w) for w in windows) if windows else None,
                                        "perFramePSNR": [real_footage.db(m) for m in mse_ours],
                                        "ffmpegPerFramePSNR": [real_footage.db(m) for m in mse_theirs]}
            results[codec] = entry
    subprocess.run([a.tessera, "db", "stop", "--data-dir", data_dir], capture_output=True)
    with open(a.out, "w") as out:
        json.dump(results, out, indent=2)
    print(f"{'codec':6} {'clip':14} {'size':>8} {'PSNR Δ':>8} {'at joins':>9} {'worst join':>10}   speed (1080p, medians)")
    for codec, entry in results.items():
        if "throughput" in entry:
            th = entry["throughput"]
            print(f"{codec:6} {th['input']:14} {'':>8} {'':>8} {'':>9} {'':>10}   {th['speedup']:.2f}x ffmpeg "
                  f"({statistics.median(th['tesseraSeconds']):.1f} s against {statistics.median(th['ffmpegSeconds']):.1f} s; "
                  f"pairs {', '.join(f'{x:.2f}x' for x in th['pairs'])}; host's steal "
                  f"{100 * statistics.median(th['tesseraSteal']):.0f} % / {100 * statistics.median(th['ffmpegSteal']):.0f} %)")
        for name, c in entry["clips"].items():
            joins = f"{c['joinPSNRDelta']:+7.2f}dB" if c["joinPSNRDelta"] is not None else "       -"
            worst = f"{c['worstJoinPSNRDelta']:+8.2f}dB" if c["worstJoinPSNRDelta"] is not None else "        -"
            print(f"{codec:6} {name:14} {100 * (c['sizeRatio'] - 1):+7.1f}% {c['psnrDelta']:+7.2f}dB {joins} {worst}  "
                  f"({c['segments']} segments)")


if __name__ == "__main__":
    main()
