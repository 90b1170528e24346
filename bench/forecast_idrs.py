"""The keyframe forecast against the IDRs of one whole-file libx264 encode, per clip and preset.

    python3 bench/forecast_idrs.py TESSERA_BINARY CLIP... [--presets medium,veryfast] [--crf 23]

For each clip: the display positions of the IDR frames of `ffmpeg -c:v libx264 -preset P -crf C` over the whole
clip, those Tessera forecasts (`tessera probe --json`, at that preset), how many of the encode's IDRs the forecast
has within one frame, the forecast keyframes the encode has no IDR near, and the analysis time.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def idrs(clip, preset, crf, work):
    out = os.path.join(work, "whole.mp4")
    subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", clip, "-an", "-c:v", "libx264", "-preset", preset,
                    "-crf", str(crf), out], check=True)
    rows = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts,flags",
                           "-of", "csv=p=0", out], check=True, capture_output=True, text=True).stdout.split()
    packets = sorted((int(pts), "K" in flags) for pts, flags in (r.split(",", 1) for r in rows))
    return [k for k, (_, key) in enumerate(packets) if key]


def forecast(tessera, clip):
    report = json.loads(subprocess.run([tessera, "probe", clip, "--json"], check=True,
                                       capture_output=True, text=True).stdout)
    fps = report["frames"] / report["durationSeconds"]
    return [round(s * fps) for s in report["forecastKeyframeSeconds"]], report["sceneAnalysisSeconds"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tessera")
    ap.add_argument("clips", nargs="+")
    ap.add_argument("--presets", default="medium,veryfast")
    ap.add_argument("--crf", type=float, default=23)
    a = ap.parse_args()
    matched = total = extra = 0
    with tempfile.TemporaryDirectory() as work:
        for clip in a.clips:
            for preset in a.presets.split(","):
                truth = idrs(clip, preset, a.crf, work)
                guess, seconds = forecast(a.tessera, clip)
                hits = [t for t in truth if any(abs(t - g) <= 1 for g in guess)]
                wrong = [g for g in guess if not any(abs(t - g) <= 1 for t in truth)]
                matched, total, extra = matched + len(hits), total + len(truth), extra + len(wrong)
                print(f"{os.path.basename(clip):24} {preset:9} libx264 {truth}  forecast {guess}  "
                      f"matched {len(hits)}/{len(truth)}  not in the encode {wrong}  analysis {seconds:.2f} s", flush=True)
    print(f"matched {matched}/{total} ({100 * matched / max(1, total):.1f} %), {extra} forecast keyframes the encodes do not have")
    sys.exit(0 if matched * 100 >= 95 * total and extra == 0 else 1)


if __name__ == "__main__":
    main()
