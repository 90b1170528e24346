"""Turns the raw measurements of bench/run into bench/results.json and a table, each figure beside its target."""
import argparse
import glob
import json
import math
import os
import statistics


def load(path):
    with open(path) as f:
        return json.load(f)


def numbers(path):
    with open(path) as f:
        return [float(x) for x in f.read().split()]


def figure(value, target, met, unit=""):
    return {"value": value, "target": target, "met": met, "unit": unit}


def spread(values):
    return {"min": round(min(values), 3), "median": round(statistics.median(values), 3), "runs": len(values)}


def tessera_runs(raw, name):
    """[(external wall seconds, --json output)] of the runs called name.N."""
    runs = []
    for path in sorted(glob.glob(os.path.join(raw, name + ".[0-9]*.json"))):
        runs.append((numbers(path[:-5] + ".wall")[0], load(path)))
    return runs


def per_frame(path, key):
    """Per-frame values of `key` from an ffmpeg psnr/ssim stats file, in display order."""
    out = []
    with open(path) as f:
        for line in f:
            fields = dict(p.split(":", 1) for p in line.split() if ":" in p)
            out.append(float(fields[key]) if fields[key] != "inf" else math.inf)
    return out


def psnr_from_mse(mse):
    mean = statistics.fmean(mse)
    return 10 * math.log10(255 ** 2 / mean) if mean > 0 else math.inf


def dip(ffmpeg_psnr, tessera_psnr, centres, half):
    """The largest per-frame PSNR loss of Tessera against ffmpeg within `half` frames of any centre."""
    return window_dip(ffmpeg_psnr, tessera_psnr, centres, half, width=1)


def window_dip(ffmpeg_psnr, tessera_psnr, centres, half, width=4):
    """The largest loss of Tessera against ffmpeg averaged over `width` consecutive frames (one mini-GOP
    with 3 B-frames), for every window touching the `half` frames either side of a centre. Per frame,
    the two encodes put I, P and B pictures at different places, which alone swings the difference by
    about ±2 dB frame to frame in the middle of segments too; over a mini-GOP that phase cancels."""
    worst = 0.0
    n = min(len(ffmpeg_psnr), len(tessera_psnr))
    for c in centres:
        for start in range(max(0, c - half - width + 1), min(n - width, c + half) + 1):
            pairs = [(ffmpeg_psnr[i], tessera_psnr[i]) for i in range(start, start + width)]
            if all(math.isfinite(f) and math.isfinite(t) for f, t in pairs):
                worst = max(worst, statistics.fmean(f - t for f, t in pairs))
    return round(worst, 3)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("raw")
    ap.add_argument("out")
    ap.add_argument("--preset")
    ap.add_argument("--crf", type=float)
    ap.add_argument("--runs", type=int)
    ap.add_argument("--cores", type=int)
    ap.add_argument("--boundary-frames", type=int)
    ap.add_argument("--overhead-input")
    ap.add_argument("--memory-lengths")
    ap.add_argument("--ceiling-workers", type=int, default=8)
    ap.add_argument("--ceiling-slots", type=int, default=1)
    a = ap.parse_args()
    raw = a.raw
    results = {"machine": {"cores": a.cores}, "preset": a.preset, "crf": a.crf, "runs": a.runs,
               "throughput": {}, "quality": {}}

    # 1 and 4, per input.
    labels = sorted({os.path.basename(p).split(".")[0] for p in glob.glob(os.path.join(raw, "*.ffmpeg.times"))},
                    key=lambda s: int(s.split("p")[0]))
    for label in labels:
        ff = numbers(os.path.join(raw, label + ".ffmpeg.times"))
        sc = numbers(os.path.join(raw, label + ".script.times"))
        runs = tessera_runs(raw, label + ".tessera")
        te = [w for w, _ in runs]
        ratio = statistics.median(ff) / statistics.median(te)
        results["throughput"][label] = {
            "seconds": {"ffmpeg": spread(ff), "segmentScript": spread(sc), "tessera": spread(te)},
            "vsFFmpeg": figure(round(ratio, 3), ">= 0.97", ratio >= 0.97, "x (median/median)"),
            "vsFFmpegBestRuns": round(min(ff) / min(te), 3),
            "vsSegmentScript": round(statistics.median(sc) / statistics.median(te), 3),
            "segments": runs[0][1]["segments"],
        }

        fs = numbers(os.path.join(raw, label + ".ffmpeg.size"))[0]
        ts = numbers(os.path.join(raw, label + ".tessera.size"))[0]
        fp = os.path.join(raw, label + ".ffmpeg")
        tp = os.path.join(raw, label + ".tessera")
        f_frames, t_frames = per_frame(fp + ".psnr", "psnr_avg"), per_frame(tp + ".psnr", "psnr_avg")
        f_psnr, t_psnr = psnr_from_mse(per_frame(fp + ".psnr", "mse_avg")), psnr_from_mse(per_frame(tp + ".psnr", "mse_avg"))
        f_ssim, t_ssim = statistics.fmean(per_frame(fp + ".ssim", "All")), statistics.fmean(per_frame(tp + ".ssim", "All"))
        plan = load(os.path.join(raw, label + ".plan.json"))
        starts, total = [], 0
        for seg in plan["segments"]:
            starts.append(total)
            total += seg["frames"]
        boundaries = starts[1:]
        midpoints = [(s + e) // 2 for s, e in zip(starts, starts[1:] + [total])]
        half = a.boundary_frames
        size_ratio = ts / fs
        d_psnr = t_psnr - f_psnr
        b_dip = window_dip(f_frames, t_frames, boundaries, half)
        results["quality"][label] = {
            "sizeRatio": figure(round(size_ratio, 4), "0.97-1.03", 0.97 <= size_ratio <= 1.03),
            "psnrDifferenceDB": figure(round(d_psnr, 3), "within ±0.1", abs(d_psnr) <= 0.1, "dB"),
            "ssimDifference": round(t_ssim - f_ssim, 5),
            "psnr": {"ffmpeg": round(f_psnr, 3), "tessera": round(t_psnr, 3)},
            "boundaryDipDB": figure(b_dip, "<= 0.5", b_dip <= 0.5,
                                    f"dB, worst 4-frame mean within {half} frames of {len(boundaries)} boundaries"),
            "midSegmentDipDB": window_dip(f_frames, t_frames, midpoints, half),
            "perFrameDipDB": {"boundaries": dip(f_frames, t_frames, boundaries, half),
                              "midSegment": dip(f_frames, t_frames, midpoints, half)},
            "planSegments": len(plan["segments"]),
        }

    # 2: overhead by phase on the chosen input, shares of the wall time seen from outside.
    runs = tessera_runs(raw, a.overhead_input + ".tessera")
    phases = ["startup", "cliProbeAndPlan", "probeAndPlan", "sceneAnalysis", "payloadPacking", "dispatch", "results", "bookkeeping",
              "audio", "stitch", "verification", "database", "shutdown"]
    shares = {p: [] for p in phases + ["process", "total"]}
    imbalance = []
    for wall, j in runs:
        t = j["timings"]
        for p in phases:
            shares[p].append(t[p] / wall)
        shares["process"].append(max(0.0, wall - j["wallSeconds"]) / wall)
        shares["total"].append(sum(t[p] for p in phases) / wall + shares["process"][-1])
        # Encoding wall beyond a perfect split of the encode work over the workers: an idle tail.
        imbalance.append(max(0.0, t["encodingWall"] - t["workerEncode"] / a.cores) / wall)
    total = statistics.median(shares["total"])
    results["overhead"] = {
        "input": a.overhead_input,
        "sharesOfWall": {p: round(statistics.median(v), 4) for p, v in shares.items() if p != "total"},
        "allButEncoding": figure(round(total, 4), "<= 0.03", total <= 0.03, "share of wall"),
        "idleTailShare": round(statistics.median(imbalance), 4),
        "note": "process: binary start and exit outside the command's own clock; idleTailShare: encoding wall beyond "
                "the workers' encode seconds split evenly (load imbalance), not counted in allButEncoding",
    }

    # 3: the coordinator's ceiling.
    real = [j for _, j in runs]
    seg_encode = statistics.median(j["timings"]["workerEncode"] / j["segments"] for j in real)
    seg_bytes = statistics.median((j["timings"]["payloadBytes"] + j["timings"]["resultBytes"]) / j["segments"] for j in real)
    ceiling = tessera_runs(raw, "ceiling")
    rates = [j["timings"]["segmentsDispatched"] / j["timings"]["encodingWall"] for _, j in ceiling]
    lengths = a.memory_lengths.split()
    longest = tessera_runs(raw, f"memory-{lengths[-1]}s")
    bandwidth = [(j["timings"]["payloadBytes"] + j["timings"]["resultBytes"]) / 1e6 / j["timings"]["encodingWall"] for _, j in longest]
    # The coordinator loop's own cost per segment: processor time of its phases and its waits on the
    # store (planning and stitching run on other threads), and the same for the result spooler's
    # thread beside it (checking, spooling and recording results).
    loop = ["payloadPacking", "dispatch", "results", "bookkeeping"]
    def per_segment(j, total):
        return 1000 * total / j["timings"]["segmentsDispatched"]
    cpu_ms = statistics.median(per_segment(j, sum(j["timings"][p] for p in loop) - j["timings"]["spoolerCPU"]) for _, j in ceiling)
    db_ms = statistics.median(per_segment(j, j["timings"]["loopDatabase"]) for _, j in ceiling)
    spool_cpu_ms = statistics.median(per_segment(j, j["timings"]["spoolerCPU"]) for _, j in ceiling)
    spool_db_ms = statistics.median(per_segment(j, j["timings"]["spoolerDatabase"]) for _, j in ceiling)
    seg_rate, mbps = statistics.median(rates), statistics.median(bandwidth)
    by_segments = seg_rate * seg_encode
    by_bytes = mbps * 1e6 / seg_bytes * seg_encode
    workers = min(by_segments, by_bytes)
    results["ceiling"] = {
        "segmentsPerSecond": figure(round(seg_rate, 1), ">= 1000", seg_rate >= 1000),
        "segmentsPerSecondBestRun": round(max(rates), 1),
        "segmentsInCeilingRun": ceiling[0][1]["segments"],
        "megabytesPerSecond": round(mbps, 1),
        "megabytesPerSecondBestRun": round(max(bandwidth), 1),
        "encodeSecondsPerSegment1080p": round(seg_encode, 3),
        "megabytesPerSegment1080p": round(seg_bytes / 1e6, 3),
        "workersKeptBusy": figure(int(workers), ">= 200", workers >= 200, "1080p workers (Amdahl: min of the two limits)"),
        "workersBySegmentRate": int(by_segments),
        "loopCPUMsPerSegment": round(cpu_ms, 3),
        "databaseWaitMsPerSegment": round(db_ms, 3),
        "spoolerCPUMsPerSegment": round(spool_cpu_ms, 3),
        "spoolerDatabaseWaitMsPerSegment": round(spool_db_ms, 3),
        "segmentsPerSecondWithACore": round(1000 / max(cpu_ms + db_ms, spool_cpu_ms + spool_db_ms), 1),
        "benchmarkWorkers": {"processes": a.ceiling_workers, "tasksEach": a.ceiling_slots,
                             "tasksInFlight": a.ceiling_workers * a.ceiling_slots},
        "ceilingNote": "segmentsPerSecond is measured with the coordinator sharing the machine's cores with the "
                       "benchmark workers and PostgreSQL; segmentsPerSecondWithACore is derived: 1 / (CPU + store "
                       "waits) per segment of the slower of the loop's thread and the result spooler's, what the "
                       "coordinator could sustain with a core for each; benchmark workers skip the encode and take "
                       "tasksEach tasks at once, so that tasksInFlight are in flight as with a cluster of that many "
                       "real workers (each encoding for seconds, one task at a time)",
        "workersByBandwidth": int(by_bytes),
    }

    # 3b: what the transport costs, over loopback TCP in plaintext and with CURVE (the runs above use ipc).
    def wall_rate(runs, key):
        return statistics.median(key(j) / j["timings"]["encodingWall"] for _, j in runs)
    transports = {}
    for transport in ["tcp", "curve"]:
        ceiling_t, bandwidth_t = tessera_runs(raw, f"ceiling-{transport}"), tessera_runs(raw, f"bandwidth-{transport}")
        if not ceiling_t or not bandwidth_t:
            continue
        rate_t = wall_rate(ceiling_t, lambda j: j["timings"]["segmentsDispatched"])
        mbps_t = wall_rate(bandwidth_t, lambda j: (j["timings"]["payloadBytes"] + j["timings"]["resultBytes"]) / 1e6)
        busy = min(rate_t * seg_encode, mbps_t * 1e6 / seg_bytes * seg_encode)
        # What one libzmq I/O thread moves per second of a core (with CURVE, its encryption): here the
        # benchmark workers' own decryption shares the 2 cores, so the measured MB/s understates it.
        io_mbps = statistics.median((j["timings"]["payloadBytes"] + j["timings"]["resultBytes"]) / 1e6 / max(j["timings"]["zmqIO"], 1e-6)
                                    for _, j in bandwidth_t)
        transports[transport] = {"segmentsPerSecond": round(rate_t, 1), "megabytesPerSecond": round(mbps_t, 1),
                                 "workersKeptBusy": figure(int(busy), ">= 200", busy >= 200, "1080p workers"),
                                 "ioThreadMegabytesPerCoreSecond": round(io_mbps, 1),
                                 "workersPerIOThreadWithACore": int(io_mbps * 1e6 / seg_bytes * seg_encode)}
    results["ceiling"]["transports"] = transports

    # 5: memory.
    worker_rss = max(j["peakRSSBytes"]["worker"] for j in real)
    coord = {n: statistics.median(j["peakRSSBytes"]["coordinator"] for _, j in tessera_runs(raw, f"memory-{n}s")) for n in lengths}
    growth = coord[lengths[-1]] / coord[lengths[0]] - 1
    results["memory"] = {
        "workerPeakMB1080p": round(worker_rss / 1e6, 1),
        "coordinatorPeakMB1080p": round(max(j["peakRSSBytes"]["coordinator"] for j in real) / 1e6, 1),
        "coordinatorPeakMBByLength": {f"{n}s": round(v / 1e6, 1) for n, v in coord.items()},
        "coordinatorGrowth": figure(round(growth, 4), "<= 0.10", growth <= 0.10, f"{lengths[0]} s to {lengths[-1]} s"),
    }

    # 6: real footage, when measured.
    real = os.path.join(raw, "real-footage.json")
    if os.path.exists(real):
        footage = load(real)
        for clips in footage["clips"].values():
            for r in clips.values():
                worst = r["worstSegmentStartDeficitDB"]
                r["met"] = abs(r["sizeRatio"] - 1) <= 0.015 and abs(r["psnrDifferenceDB"]) <= 0.05 and (worst is None or worst >= -1)
        results["realFootage"] = footage

    # 7: the cost of two passes, when measured.
    two = os.path.join(raw, "bitrate.json")
    if os.path.exists(two):
        results["twoPass"] = load(two)

    with open(a.out, "w") as f:
        json.dump(results, f, indent=2, sort_keys=True)
    print_table(results)


def print_table(r):
    rows = []

    def row(name, value, target="", met=None):
        rows.append((name, str(value), target, "" if met is None else ("met" if met else "MISSED")))

    for label, t in r["throughput"].items():
        s = t["seconds"]
        row(f"{label} ffmpeg s (min/median)", f"{s['ffmpeg']['min']:.2f} / {s['ffmpeg']['median']:.2f}")
        row(f"{label} segment script s", f"{s['segmentScript']['min']:.2f} / {s['segmentScript']['median']:.2f}")
        row(f"{label} tessera s ({t['segments']} segments)", f"{s['tessera']['min']:.2f} / {s['tessera']['median']:.2f}")
        f = t["vsFFmpeg"]
        row(f"{label} throughput vs ffmpeg", f"{f['value']:.3f}x", f["target"], f["met"])
        row(f"{label} throughput vs segment script", f"{t['vsSegmentScript']:.3f}x")
    o = r["overhead"]
    for p, v in o["sharesOfWall"].items():
        row(f"overhead {o['input']}: {p}", f"{100 * v:.2f}%")
    f = o["allButEncoding"]
    row(f"overhead {o['input']}: all but encoding", f"{100 * f['value']:.2f}%", "<= 3%", f["met"])
    row(f"overhead {o['input']}: idle tail (imbalance)", f"{100 * o['idleTailShare']:.2f}%")
    c = r["ceiling"]
    row("benchmark workers x tasks each", f"{c['benchmarkWorkers']['processes']} x {c['benchmarkWorkers']['tasksEach']}")
    row("coordinator segments/s", c["segmentsPerSecond"]["value"], ">= 1000", c["segmentsPerSecond"]["met"])
    row("coordinator loop CPU ms / store wait ms per segment", f"{c['loopCPUMsPerSegment']} / {c['databaseWaitMsPerSegment']}")
    row("result spooler CPU ms / store wait ms per segment", f"{c['spoolerCPUMsPerSegment']} / {c['spoolerDatabaseWaitMsPerSegment']}")
    row("coordinator segments/s with a core per thread (derived)", c["segmentsPerSecondWithACore"])
    row("coordinator MB/s (payloads + results)", c["megabytesPerSecond"])
    row("1080p encode s per segment / MB per segment", f"{c['encodeSecondsPerSegment1080p']} / {c['megabytesPerSegment1080p']}")
    row("1080p workers one coordinator keeps busy", c["workersKeptBusy"]["value"], ">= 200", c["workersKeptBusy"]["met"])
    for transport, t in c.get("transports", {}).items():
        row(f"over {transport}: segments/s / MB/s", f"{t['segmentsPerSecond']} / {t['megabytesPerSecond']}")
        row(f"over {transport}: 1080p workers kept busy", t["workersKeptBusy"]["value"], ">= 200", t["workersKeptBusy"]["met"])
        row(f"over {transport}: MB/s per I/O thread with a core / 1080p workers each (derived)",
            f"{t['ioThreadMegabytesPerCoreSecond']} / {t['workersPerIOThreadWithACore']}")
    for label, q in r["quality"].items():
        row(f"{label} size vs ffmpeg", q["sizeRatio"]["value"], "0.97-1.03", q["sizeRatio"]["met"])
        row(f"{label} PSNR vs ffmpeg dB", q["psnrDifferenceDB"]["value"], "±0.1", q["psnrDifferenceDB"]["met"])
        row(f"{label} SSIM vs ffmpeg", q["ssimDifference"])
        row(f"{label} boundary PSNR dip dB (mid-segment)", f"{q['boundaryDipDB']['value']} ({q['midSegmentDipDB']})", "<= 0.5",
            q["boundaryDipDB"]["met"])
    for name, presets in r.get("realFootage", {}).get("clips", {}).items():
        for preset, q in presets.items():
            worst = "-" if q["worstSegmentStartDeficitDB"] is None else f"{q['worstSegmentStartDeficitDB']:+.2f}"
            row(f"real {name} {preset}: size / PSNR dB / worst start dB ({q['segments']} segments)",
                f"{100 * (q['sizeRatio'] - 1):+.2f}% / {q['psnrDifferenceDB']:+.3f} / {worst}", "±1.5% ±0.05 -1", q["met"])
            row(f"real {name} {preset}: wall s tessera / ffmpeg", f"{q['wallSeconds']['tessera']:.2f} / {q['wallSeconds']['ffmpeg']:.2f}")
    for c in r.get("twoPass", {}).get("twoPassCost", []):
        row(f"two passes {c['clip']} {c['target'] // 1000}k: wall s two / one pass",
            f"{c['twoPassSeconds']:.2f} / {c['onePassSeconds']:.2f} = {c['ratio']:.2f}x", "<= 1.5", c["met"])
    m = r["memory"]
    row("worker peak RSS MB, 1080p", m["workerPeakMB1080p"])
    row("coordinator peak RSS MB, 1080p", m["coordinatorPeakMB1080p"])
    row("coordinator peak RSS MB by length", ", ".join(f"{k}: {v}" for k, v in m["coordinatorPeakMBByLength"].items()))
    row("coordinator growth with length", f"{100 * m['coordinatorGrowth']['value']:.1f}%", "<= 10%", m["coordinatorGrowth"]["met"])

    w = max(len(x[0]) for x in rows)
    print(f"{'figure':<{w}}  {'value':>18}  {'target':>10}  ")
    for name, value, target, met in rows:
        print(f"{name:<{w}}  {value:>18}  {target:>10}  {met}")
    print(f"(preset {r['preset']}, CRF {r['crf']:g}, {r['runs']} runs, {r['machine']['cores']} cores; bench/results.json has every figure)")


if __name__ == "__main__":
    main()
