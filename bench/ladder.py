"""A rendition ladder by Tessera against one ffmpeg process making the same ladder as HLS, on the same cores.

    python3 bench/ladder.py TESSERA_BINARY SOURCE OUT_JSON [--cache bench/.cache] [--seconds 60] [--ladder 1080,720,480,360]
                            [--preset veryfast] [--crf 23] [--runs 3] [--hls-time 6]

SOURCE is a file, or `photos`: SECONDS of 1920x1080 at 30 fps made once into CACHE/real, camera moves over the real
photographs bench/real_footage.py uses (Debian's KDE wallpapers), a cut every 6 s, grain, pink noise audio.

Tessera: `tessera transcode SOURCE -o DIR/master.m3u8 --ladder L --preset P --crf C` (HLS with CMAF segments, its default
caps per rung). ffmpeg: one process, one decode, a split filter and a scale per rung, one libx264 encoder per rung at the
same preset and CRF with the rung's maxrate/bufsize set to Tessera's default cap (read from
Sources/TesseraCore/Ladder+DefaultCaps.swift, and checked against the x264 settings in Tessera's segments), keyframes forced
every HLS_TIME seconds (`-force_key_frames expr:gte(t,n_forced*6)`), the hls muxer with fMP4 segments and
`-var_stream_map`, AAC once in its own group. The runs take turns; wall times are from outside, medians over RUNS.

Per rung, measured the same way for both: video bytes (ffprobe's packet sizes through the rung's media playlist) and
PSNR against the source scaled to the rung (ffmpeg's scale filter, bicubic as both scale; the mean of per-frame MSE over
all planes, in dB).
"""
import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import real_footage  # noqa: E402  (photo_scenes, photo_concat)

HERE = os.path.dirname(os.path.abspath(__file__))
CAPS = os.path.join(HERE, "..", "Sources", "TesseraCore", "Ladder+DefaultCaps.swift")
MINIMUM_RATE_KBPS = 16


def note(text):
    print(f"[{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def run(args, **kw):
    result = subprocess.run(args, **kw)
    if result.returncode != 0:
        sys.exit(f"{' '.join(args)}: exit status {result.returncode}\n{result.stderr or ''}")
    return result


def probe_json(args):
    return json.loads(run(["ffprobe", "-v", "error", "-of", "json", *args], capture_output=True, text=True).stdout)


def cap_table():
    """Apple's example sizes and Tessera's cap for each (kb/s), as `Ladder.defaultCapTable` lists them."""
    with open(CAPS) as f:
        text = f.read()
    table = text[text.index("defaultCapTable"):]
    rows = [(int(w) * int(h), int(k)) for w, h, k in re.findall(r"\((\d+) \* (\d+), (\d+)\)", table)]
    if not rows:
        sys.exit(f"no cap table in {CAPS}")
    return rows


def default_cap_kbps(pixels, table):
    """`Ladder.defaultPeakRate(pixels:)` in kb/s: linear in pixels between entries, the nearest entry's bits per pixel outside."""
    if pixels <= table[0][0]:
        kbps = table[0][1] * pixels / table[0][0]
    elif pixels <= table[-1][0]:
        upper = next(i for i, (p, _) in enumerate(table) if p >= pixels)
        (lp, lk), (hp, hk) = table[upper - 1], table[upper]
        kbps = lk + (pixels - lp) / (hp - lp) * (hk - lk)
    else:
        kbps = table[-1][1] * pixels / table[-1][0]
    return max(MINIMUM_RATE_KBPS, math.floor(kbps + 0.5))


def photos_source(cache, seconds):
    """The 1080p photographs clip of `seconds`, made once."""
    real = os.path.join(cache, "real")
    os.makedirs(real, exist_ok=True)
    path = os.path.join(real, f"photos-1080p-{seconds}s.mp4")
    if not os.path.exists(path):
        with tempfile.TemporaryDirectory() as tmp:
            scenes = real_footage.photo_scenes(real, tmp, 1920, 1080, math.ceil(seconds / 6))
            note(f"photos: {os.path.basename(path)}")
            real_footage.photo_concat(scenes, tmp, seconds, [], path)
    return path


def rung_size(height, source_width, source_height):
    """A landscape rung's width: the source's aspect, nearest even, at most the source's (as `Ladder.resolve` makes it)."""
    width = max(2, min(int(height * source_width / source_height / 2 + 0.5) * 2, source_width & ~1))
    return width, height


def master_variants(master):
    """The video media playlists an HLS master lists (`#EXT-X-STREAM-INF` URIs with a RESOLUTION: ffmpeg lists its audio
    group's playlist as a variant too), in order, relative to the master's folder."""
    lines = [line.strip() for line in open(master) if line.strip()]
    return [lines[i + 1] for i, line in enumerate(lines) if line.startswith("#EXT-X-STREAM-INF:") and "RESOLUTION=" in line]


def video_facts(playlist):
    """Video bytes, frame count and picture size through a media playlist."""
    info = probe_json(["-select_streams", "v:0", "-show_entries", "packet=size:stream=width,height", playlist])
    stream = info["streams"][0]
    packets = info["packets"]
    return {"bytes": sum(int(p["size"]) for p in packets), "frames": len(packets), "size": (stream["width"], stream["height"])}


def psnr_db(playlist, source, size, work):
    """PSNR of a rung against the source scaled to its size: the mean of per-frame MSE (all planes), and the frames compared."""
    log = os.path.join(work, "psnr.log")
    width, height = size
    run(["ffmpeg", "-nostdin", "-v", "error", "-i", playlist, "-i", source, "-lavfi",
         f"[1:v]scale={width}:{height}:flags=bicubic[ref];[0:v][ref]psnr=stats_file={log}", "-f", "null", "-"])
    with open(log) as f:
        mse = [float(dict(kv.split(":", 1) for kv in line.split() if ":" in kv)["mse_avg"]) for line in f]
    mean = statistics.fmean(mse)
    return (10 * math.log10(255 ** 2 / mean) if mean > 0 else math.inf), len(mse)


def x264_caps(folder):
    """The vbv_maxrate/vbv_bufsize (kb/s) x264 wrote into the first media segment of a rung folder."""
    segments = sorted(f for f in os.listdir(folder) if f.endswith(".m4s"))
    with open(os.path.join(folder, segments[0]), "rb") as f:
        data = f.read()
    found = re.search(rb"vbv_maxrate=(\d+) vbv_bufsize=(\d+)", data)
    return (int(found.group(1)), int(found.group(2))) if found else None


def ffmpeg_ladder(source, out, rungs, preset, crf, hls_time, has_audio, threads=None):
    """One ffmpeg process: decode once, split, scale, a libx264 encoder per rung, the hls muxer over fMP4; with `threads`,
    each encoder's libx264 threads (else libx264's own choice, 1.5 per core)."""
    n = len(rungs)
    chains = [f"[0:v]split={n}" + "".join(f"[s{i}]" for i in range(n))]
    for i, r in enumerate(rungs):
        chains.append(f"[s{i}]scale={r['width']}:{r['height']}:flags=bicubic[v{i}]")
    args = ["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", source, "-filter_complex", ";".join(chains)]
    for i in range(n):
        args += ["-map", f"[v{i}]"]
    if has_audio:
        args += ["-map", "0:a:0", "-c:a", "aac"]
    args += ["-c:v", "libx264", "-preset", preset, "-crf", str(crf), "-force_key_frames", f"expr:gte(t,n_forced*{hls_time})"]
    if threads:
        args += ["-threads:v", str(threads)]
    for i, r in enumerate(rungs):
        args += [f"-maxrate:v:{i}", f"{r['maxrateKbps']}k", f"-bufsize:v:{i}", f"{2 * r['maxrateKbps']}k"]
    streams = [f"v:{i},agroup:aud,name:{r['height']}p" for i, r in enumerate(rungs)] + (["a:0,agroup:aud,name:audio"] if has_audio else [])
    args += ["-f", "hls", "-hls_time", str(hls_time), "-hls_playlist_type", "vod", "-hls_segment_type", "fmp4",
             "-hls_flags", "independent_segments", "-hls_fmp4_init_filename", "init.mp4", "-master_pl_name", "master.m3u8",
             "-var_stream_map", " ".join(streams), "-hls_segment_filename", os.path.join(out, "%v", "segment_%05d.m4s"),
             os.path.join(out, "%v", "index.m3u8")]
    return args


def timed(args, cwd=None):
    t0 = time.monotonic()
    run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=cwd)
    return time.monotonic() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tessera")
    ap.add_argument("source")
    ap.add_argument("out")
    ap.add_argument("--cache", default=os.path.join(HERE, ".cache"))
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--ladder", default="1080,720,480,360")
    ap.add_argument("--preset", default="veryfast")
    ap.add_argument("--crf", type=float, default=23)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--hls-time", type=int, default=6)
    a = ap.parse_args()
    if a.source == "photos":
        a.source = photos_source(a.cache, a.seconds)

    info = probe_json(["-show_entries", "stream=codec_type,width,height,nb_frames", a.source])
    video = next(s for s in info["streams"] if s["codec_type"] == "video")
    has_audio = any(s["codec_type"] == "audio" for s in info["streams"])
    table = cap_table()
    rungs = []
    for height in (int(h) for h in a.ladder.split(",")):
        width, height = rung_size(height, video["width"], video["height"])
        rungs.append({"height": height, "width": width, "maxrateKbps": default_cap_kbps(width * height, table)})
    crf = f"{a.crf:g}"
    cores = os.cpu_count()

    with tempfile.TemporaryDirectory() as work:
        ours, theirs = os.path.join(work, "tessera"), os.path.join(work, "ffmpeg")
        tessera_args = [a.tessera, "transcode", a.source, "-o", os.path.join(ours, "master.m3u8"), "--ladder", a.ladder,
                        "--preset", a.preset, "--crf", crf, "--hls-time", str(a.hls_time), "-y"] + os.environ.get("TESSERA_ARGS", "").split()
        # FFMPEG_THREADS: each ffmpeg encoder's libx264 threads, for a comparison at Tessera's (`--threads`, default 1):
        # under a VBV cap libx264's rate control spends bits differently with frame threads (see bench/RESULTS.md).
        ffmpeg_args = ffmpeg_ladder(a.source, theirs, rungs, a.preset, crf, a.hls_time, has_audio,
                                    threads=os.environ.get("FFMPEG_THREADS") or None)
        times = {"ffmpeg": [], "tessera": []}
        for r in range(1, a.runs + 1):
            note(f"run {r}/{a.runs}: ffmpeg (one process, {len(rungs)} encoders)")
            run(["rm", "-rf", theirs])
            os.makedirs(theirs)
            times["ffmpeg"].append(timed(ffmpeg_args))
            note(f"run {r}/{a.runs}: tessera")
            times["tessera"].append(timed(tessera_args))

        note("per-rung size and PSNR")
        our_playlists = master_variants(os.path.join(ours, "master.m3u8"))
        their_playlists = master_variants(os.path.join(theirs, "master.m3u8"))
        if len(our_playlists) != len(rungs) or len(their_playlists) != len(rungs):
            sys.exit(f"expected {len(rungs)} rungs: tessera lists {our_playlists}, ffmpeg {their_playlists}")
        per_rung = []
        for rung, mine, other in zip(rungs, our_playlists, their_playlists):
            mine, other = os.path.join(ours, mine), os.path.join(theirs, other)
            m, o = video_facts(mine), video_facts(other)
            if m["size"] != o["size"]:
                sys.exit(f"{rung['height']}p: tessera made {m['size']}, ffmpeg {o['size']}")
            m_psnr, m_frames = psnr_db(mine, a.source, m["size"], work)
            o_psnr, o_frames = psnr_db(other, a.source, o["size"], work)
            caps = x264_caps(os.path.dirname(mine))
            per_rung.append({
                "rung": f"{rung['height']}p", "size": f"{m['size'][0]}x{m['size'][1]}",
                "maxrateKbps": rung["maxrateKbps"], "tesseraX264Caps": caps,
                "capsMatch": caps == (rung["maxrateKbps"], 2 * rung["maxrateKbps"]),
                "frames": {"tessera": m["frames"], "ffmpeg": o["frames"], "source": int(video.get("nb_frames") or 0)},
                "videoBytes": {"tessera": m["bytes"], "ffmpeg": o["bytes"]},
                "sizeRatio": round(m["bytes"] / o["bytes"], 4),
                "psnr": {"tessera": round(m_psnr, 3), "ffmpeg": round(o_psnr, 3)},
                "psnrDifferenceDB": round(m_psnr - o_psnr, 3),
                "psnrFrames": {"tessera": m_frames, "ffmpeg": o_frames},
            })

    ratio = statistics.median(times["ffmpeg"]) / statistics.median(times["tessera"])
    results = {
        "source": a.source, "ladder": a.ladder, "preset": a.preset, "crf": a.crf, "hlsTime": a.hls_time, "runs": a.runs, "cores": cores,
        "seconds": {k: [round(t, 2) for t in v] for k, v in times.items()},
        "throughputVsFFmpeg": {"value": round(ratio, 3), "target": ">= 1.0", "met": ratio >= 1.0, "unit": "x (median/median)"},
        "rungs": per_rung,
        "ffmpegCommand": " ".join(ffmpeg_args),
    }
    with open(a.out, "w") as f:
        json.dump(results, f, indent=2)
    print_table(results)


def print_table(results):
    s = results["seconds"]
    r = results["throughputVsFFmpeg"]
    print(f"ladder {results['ladder']} of {os.path.basename(results['source'])}, {results['preset']} CRF {results['crf']:g}, "
          f"{results['cores']} cores, {results['runs']} runs")
    print(f"throughput against one ffmpeg process: {r['value']:.3f}x (target >= 1.0; medians: tessera "
          f"{statistics.median(s['tessera']):.2f} s, ffmpeg {statistics.median(s['ffmpeg']):.2f} s; runs {s['tessera']} / {s['ffmpeg']})")
    print(f"{'rung':<6} {'size':>9} {'cap':>7} {'frames t/f':>11} {'size ratio':>10} {'PSNR t':>8} {'PSNR f':>8} {'dPSNR':>7}")
    for x in results["rungs"]:
        cap = f"{x['maxrateKbps']}k" + ("" if x["capsMatch"] else "!")
        print(f"{x['rung']:<6} {x['size']:>9} {cap:>7} {x['frames']['tessera']:>5}/{x['frames']['ffmpeg']:<5} "
              f"{100 * (x['sizeRatio'] - 1):>+9.2f}% {x['psnr']['tessera']:>8.3f} {x['psnr']['ffmpeg']:>8.3f} {x['psnrDifferenceDB']:>+7.3f}")
    print("(size: Tessera's video bytes against ffmpeg's, target within ±3 %; dPSNR: Tessera's PSNR minus ffmpeg's against the "
          "source scaled to the rung, target within ±0.1 dB; '!' after a cap: Tessera's segments carry other VBV settings)")


if __name__ == "__main__":
    main()
