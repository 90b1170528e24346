"""Test clips for the keyframe forecast: camera moves over real photographs (scikit-image's data images), hard cuts
on and off the source's keyframes, grain of several strengths, crossfades, dissolves, fades through black, wipes
and flashes, encoded as a phone would (H.264, a keyframe every second, no B-frames). 640x360 at 30 fps, 12-20 s.

    python3 bench/forecast_clips.py OUT_DIR [--clips name,...] [--size WxH]

Writes OUT_DIR/<name>.mp4 for each clip not there yet, and prints the paths. The photographs come from
scikit-image's wheel (pip download, no install), kept in OUT_DIR/photos.
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

WIDTH, HEIGHT, FPS = 640, 360, 30
PHOTOS = ["astronaut.png", "coffee.png", "chelsea.png", "rocket.jpg", "motorcycle_left.png", "hubble_deep_field.jpg",
          "ihc.png", "retina.jpg"]
# Slow camera moves (zoompan expressions over a picture twice the output's size): zoom in, zoom out, pan right,
# pan left and down, still.
MOVES = {
    "zoom-in": ("1.0+0.0012*on", "iw/2-(iw/zoom/2)", "ih/2-(ih/zoom/2)"),
    "zoom-out": ("1.35-0.0012*on", "iw/2-(iw/zoom/2)", "ih/2-(ih/zoom/2)"),
    "pan-right": ("1.3", "on*1.2", "ih/2-(ih/zoom/2)"),
    "pan-left": ("1.3", "iw-iw/zoom-on*1.2", "on*0.6"),
    "still": ("1.2", "iw/2-(iw/zoom/2)", "ih/2-(ih/zoom/2)"),
}


def scene(photo, move, seconds):
    return {"photo": photo, "move": move, "seconds": seconds}


# Each clip: its scenes, how each joins the next ("cut", or an xfade transition of 1 s), grain strength (ffmpeg's
# `noise` alls, temporal), and flashes (first frame, frames) of a white flash.
CLIPS = {
    # Cuts where the phone put its keyframes (every 30 frames), one scene longer than keyint (250 frames).
    "cuts-on-keyframes": {
        "scenes": [scene(0, "zoom-in", 4), scene(1, "pan-right", 9), scene(2, "zoom-out", 3), scene(3, "pan-left", 4)],
        "joins": ["cut", "cut", "cut"], "grain": 6, "flashes": []},
    # Cuts inside the phone's GOPs.
    "cuts-off-keyframes": {
        "scenes": [scene(4, "pan-right", 3.4), scene(5, "zoom-in", 4.7), scene(6, "still", 2.9), scene(7, "zoom-out", 5.3)],
        "joins": ["cut", "cut", "cut"], "grain": 6, "flashes": []},
    # Heavy grain: frame-to-frame differences high everywhere.
    "grain-heavy": {
        "scenes": [scene(2, "zoom-in", 4), scene(0, "pan-left", 3.5), scene(1, "still", 4), scene(5, "pan-right", 4)],
        "joins": ["cut", "cut", "cut"], "grain": 24, "flashes": []},
    # Sensor noise of middling strength, no grain on the first photo set.
    "grain-medium": {
        "scenes": [scene(6, "zoom-out", 5), scene(3, "zoom-in", 4), scene(7, "pan-right", 5)],
        "joins": ["cut", "cut"], "grain": 12, "flashes": []},
    # Transitions: a crossfade, a dissolve, a fade through black, a wipe, then a hard cut.
    "transitions": {
        "scenes": [scene(0, "zoom-in", 4), scene(1, "pan-right", 4), scene(2, "zoom-out", 4), scene(3, "pan-left", 4),
                   scene(4, "still", 4), scene(5, "zoom-in", 3)],
        "joins": ["fade", "dissolve", "fadeblack", "wipeleft", "cut"], "grain": 4, "flashes": []},
    # White flashes of 1 to 3 frames inside scenes, and one hard cut.
    "flashes": {
        "scenes": [scene(1, "pan-right", 6), scene(4, "zoom-in", 6)],
        "joins": ["cut"], "grain": 4, "flashes": [(50, 1), (120, 2), (230, 3), (290, 2)]},
    # Slow moves over one photograph: nothing that is a cut.
    "slow-pans": {
        "scenes": [scene(0, "zoom-in", 6), scene(0, "zoom-out", 6)],
        "joins": ["fade"], "grain": 8, "flashes": []},
}


def run(args, **kw):
    result = subprocess.run(args, capture_output=True, text=True, **kw)
    if result.returncode != 0:
        sys.exit(f"{' '.join(args)}: exit status {result.returncode}\n{result.stderr[-2000:]}")
    return result


def photographs(out):
    """scikit-image's colour data images, unpacked from its wheel into OUT/photos."""
    folder = os.path.join(out, "photos")
    if all(os.path.exists(os.path.join(folder, p)) for p in PHOTOS):
        return folder
    os.makedirs(folder, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
             "--python-version", "3.11", "--platform", "manylinux2014_x86_64", "scikit-image==0.22.0", "-d", tmp])
        wheel = glob.glob(os.path.join(tmp, "scikit_image-*.whl"))[0]
        with zipfile.ZipFile(wheel) as z:
            for p in PHOTOS:
                with z.open("skimage/data/" + p) as src, open(os.path.join(folder, p + ".part"), "wb") as dst:
                    shutil.copyfileobj(src, dst)
                os.rename(os.path.join(folder, p + ".part"), os.path.join(folder, p))
    return folder


def make_scene(image, move, seconds, path):
    """A camera move over `image` for `seconds`, lossless, at the clip's size and rate."""
    z, x, y = MOVES[move]
    # The moves' steps are in pixels of a 640x360 clip's picture: other sizes move as far in the picture.
    x = x.replace("on*", f"{WIDTH / 640:g}*on*")
    y = y.replace("on*", f"{WIDTH / 640:g}*on*")
    frames = int(round(seconds * FPS))
    run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-loop", "1", "-framerate", str(FPS), "-i", image, "-vf",
         f"scale={2 * WIDTH}:{2 * HEIGHT}:force_original_aspect_ratio=increase,crop={2 * WIDTH}:{2 * HEIGHT},"
         f"zoompan=z='{z}':x='{x}':y='{y}':d=1:s={WIDTH}x{HEIGHT}:fps={FPS},format=yuv420p",
         "-frames:v", str(frames), "-c:v", "libx264", "-preset", "ultrafast", "-qp", "0", path])


def make_clip(name, spec, photos, out):
    """The clip's scenes joined, flashed and grained, encoded as a phone would: a keyframe every second, no B-frames."""
    with tempfile.TemporaryDirectory() as tmp:
        inputs = []
        for k, s in enumerate(spec["scenes"]):
            path = os.path.join(tmp, f"scene{k}.mkv")
            make_scene(os.path.join(photos, PHOTOS[s["photo"]]), s["move"], s["seconds"], path)
            inputs += ["-i", path]
        # One time base and aspect for every input: xfade refuses inputs that differ.
        graph = [f"[{k}:v]settb=1/{FPS},setsar=1[s{k}]" for k in range(len(spec["scenes"]))]
        last, length = "[s0]", spec["scenes"][0]["seconds"]
        for k, join in enumerate(spec["joins"], start=1):
            label = f"[j{k}]"
            if join == "cut":
                graph.append(f"{last}[s{k}]concat=n=2:v=1:a=0,settb=1/{FPS}{label}")
                length += spec["scenes"][k]["seconds"]
            else:
                graph.append(f"{last}[s{k}]xfade=transition={join}:duration=1:offset={length - 1:.3f},settb=1/{FPS}{label}")
                length += spec["scenes"][k]["seconds"] - 1
            last = label
        filters = [f"eq=brightness=0.7:enable='between(n,{first},{first + count - 1})'" for first, count in spec["flashes"]]
        if spec["grain"]:
            filters.append(f"noise=alls={spec['grain']}:allf=t")
        graph.append(f"{last}{','.join(filters + ['format=yuv420p'])}[v]")
        part = os.path.join(out, name + ".part.mp4")
        run(["ffmpeg", "-nostdin", "-v", "error", "-y", *inputs, "-filter_complex", ";".join(graph), "-map", "[v]",
             "-c:v", "libx264", "-preset", "veryfast", "-crf", "18", "-g", str(FPS), "-keyint_min", str(FPS),
             "-sc_threshold", "0", "-bf", "0", "-r", str(FPS), part])
        os.rename(part, os.path.join(out, name + ".mp4"))


def main():
    global WIDTH, HEIGHT
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--clips", default="")
    ap.add_argument("--size", default=f"{WIDTH}x{HEIGHT}", help="frame size, WxH (default 640x360)")
    a = ap.parse_args()
    WIDTH, HEIGHT = (int(v) for v in a.size.split("x"))
    os.makedirs(a.out, exist_ok=True)
    chosen = [c for c in a.clips.split(",") if c] or list(CLIPS)
    photos = None
    for name in chosen:
        path = os.path.join(a.out, name + ".mp4")
        if not os.path.exists(path):
            photos = photos or photographs(a.out)
            make_clip(name, CLIPS[name], photos, a.out)
        print(path)


if __name__ == "__main__":
    main()
