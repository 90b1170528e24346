#!/usr/bin/env python3
"""The same job from a local file and from S3: wall time, processor time, peak resident memory of the coordinator and a
worker, and how many 1080p workers one coordinator keeps busy either way.

    python3 bench/object_storage.py TESSERA INPUT [--runs 3] [--preset veryfast] [--s3-output] [--range-front]

Starts moto's S3 server (PyPI's `moto[server]`) on loopback (authentication off, so that workers' presigned reads pass;
an IAM user's keys are still made and used), puts INPUT in a bucket, then runs `tessera transcode --json` over CURVE in
turns: INPUT -> local MP4, and s3://bench/INPUT -> local MP4 (with `--s3-output`, -> s3://bench/out.mp4), each with the process's own embedded store and local
workers. While each runs, its process tree is sampled every 0.1 s: the `tessera transcode` process holds the
coordinator, its other `tessera` processes are the workers; each one's peak is its VmHWM. Processor time: Tessera's
(the command and the workers it reaps, not the store) and the S3 server's, apart, since on loopback the server's
shares the cores. Capacity: the segments per second the coordinator's loop sustains on a core (its ceiling: benchmark
workers that neither read nor encode, 0.2 s segments of a 1080p clip with 6-frame GOPs, as in bench/run; with
`--ceiling-seconds 0`, from the jobs' own timings, their per-job and per-second work included) and the bytes per segment
its CURVE I/O thread moves in the jobs (at the rate measured in the local runs), times a segment's encode seconds. Prints medians and the ratios S3 / local, and writes JSON next to this file (object_storage.json).
`--range-front` serves ranged GETs from a loopback front that keeps a copy of each object it read once from moto
(moto reads the whole object for every ranged GET, which a store does not, so behind moto alone the wall time
measures moto). Every output is checked for the source's frame count with ffprobe.
"""
import argparse, json, os, resource, socket, statistics, subprocess, sys, tempfile, threading, time

HERE = os.path.dirname(os.path.abspath(__file__))

SETUP = """
import boto3, json, sys
url = sys.argv[1]
iam = boto3.client("iam", endpoint_url=url, region_name="us-east-1", aws_access_key_id="setup", aws_secret_access_key="setup")
iam.create_user(UserName="bench")
iam.put_user_policy(UserName="bench", PolicyName="s3", PolicyDocument=json.dumps({"Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Action": ["s3:*"], "Resource": "*"}]}))
key = iam.create_access_key(UserName="bench")["AccessKey"]
print(json.dumps([key["AccessKeyId"], key["SecretAccessKey"]]))
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_moto():
    # Authentication off: moto's refuses every presigned URL (it looks for an Authorization header), and the workers
    # read their segments' bytes through presigned URLs. The tests check signatures; this measures the byte path.
    port = free_port()
    env = dict(os.environ)
    proc = subprocess.Popen(["moto_server", "-H", "127.0.0.1", "-p", str(port)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    keys = json.loads(subprocess.run([sys.executable, "-c", SETUP, url], capture_output=True, text=True, check=True).stdout)
    return proc, url, keys


RANGE_FRONT = r"""
import http.client, http.server, sys, threading
port, upstream = int(sys.argv[1]), int(sys.argv[2])
cache, lock = {}, threading.Lock()
HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host", "expect"}

class Front(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *args): pass

    def forward(self, body=b""):
        path = self.path
        connection = http.client.HTTPConnection("127.0.0.1", upstream, timeout=600)
        connection.putrequest(self.command, path, skip_host=True, skip_accept_encoding=True)
        for k, v in self.headers.items():
            if k.lower() not in HOP or k.lower() == "host":
                connection.putheader(k, v)
        connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body)
        response = connection.getresponse()
        data = response.read()
        connection.close()
        # A HEAD answers with the length the GET would have.
        self.length = response.getheader("Content-Length") if self.command == "HEAD" else None
        return response.status, [(k, v) for k, v in response.getheaders() if k.lower() not in HOP], data

    def answer(self, status, headers, data, length=None):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", length or str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def do_GET(self):
        key = self.path.split("?")[0]
        wanted = self.headers.get("Range", "")
        if not wanted.startswith("bytes=") or key.count("/") < 2:
            return self.answer(*self.forward())
        with lock:
            held = cache.get(key)
        if held is None:
            range_header = self.headers.get("Range")
            del self.headers["Range"]
            status, headers, data = self.forward()
            self.headers["Range"] = range_header
            if status != 200:
                return self.answer(status, headers, data)
            etag = dict((k.lower(), v) for k, v in headers).get("etag", "")
            held = (data, etag)
            with lock:
                cache[key] = held
        data, etag = held
        pin = self.headers.get("If-Match")
        if pin and pin != etag:
            return self.answer(412, [("Content-Type", "application/xml")], b"<Error><Code>PreconditionFailed</Code></Error>")
        first, _, last = wanted[6:].partition("-")
        first, last = int(first), min(int(last) if last else len(data) - 1, len(data) - 1)
        # A view, not a copy: the front's own processor time shares the machine with the job it serves.
        self.answer(206, [("ETag", etag), ("Content-Range", "bytes %d-%d/%d" % (first, last, len(data)))],
                    memoryview(data)[first:last + 1])

    def other(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0) or 0))
        if self.command in ("PUT", "DELETE", "POST"):
            with lock:
                cache.pop(self.path.split("?")[0], None)
        status, headers, data = self.forward(body)
        self.answer(status, headers, data, self.length)

    do_PUT = do_POST = do_DELETE = do_HEAD = other

server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Front)
print("ready", flush=True)
server.serve_forever()
"""


def start_range_front(upstream):
    """A loopback front that answers ranged GETs from a copy of each object it read once from moto (pinned by its
    ETag, 412 on another), and sends everything else on: moto reads the whole object for every ranged GET, which a
    store does not, so behind it the wall time measures moto. Returns the process and its URL."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-c", RANGE_FRONT, str(port), str(upstream)], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    if proc.stdout.readline().strip() != "ready":
        raise SystemExit("the range front did not start")
    return proc, f"http://127.0.0.1:{port}"


def children(pid):
    found = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                found += [int(c) for c in f.read().split()]
    except OSError:
        pass
    return found


def hwm_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def exe(pid):
    try:
        return os.path.realpath(f"/proc/{pid}/exe")
    except OSError:
        return None


def cpu_seconds(pid):
    """A process's own user and system time (not its children's)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed(args, env, server):
    """Runs `args`; returns (wall seconds, coordinator peak MiB, largest worker peak MiB, the command's JSON report,
    the processor seconds of the command and the workers it reaped, and those of the `server` processes meanwhile)."""
    peaks = {"coordinator": 0, "worker": 0}
    binary = os.path.realpath(args[0])
    before, server_before = resource.getrusage(resource.RUSAGE_CHILDREN), sum(map(cpu_seconds, server))
    t0 = time.monotonic()
    proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def sample():
        while proc.poll() is None:
            hwm = hwm_kib(proc.pid)
            if hwm:
                peaks["coordinator"] = max(peaks["coordinator"], hwm)
            stack = children(proc.pid)
            while stack:
                pid = stack.pop()
                stack += children(pid)
                # Workers are this binary's other processes (forked ahead of time, so their command line may be
                # the parent's); the store's server processes are PostgreSQL's.
                if exe(pid) == binary:
                    hwm = hwm_kib(pid)
                    if hwm:
                        peaks["worker"] = max(peaks["worker"], hwm)
            time.sleep(0.1)

    sampler = threading.Thread(target=sample)
    sampler.start()
    out, err = proc.communicate()
    sampler.join()
    wall = time.monotonic() - t0
    after, server_after = resource.getrusage(resource.RUSAGE_CHILDREN), sum(map(cpu_seconds, server))
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args[:4])}: exit {proc.returncode}: {err.strip()[-400:]}")
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, peaks["coordinator"] / 1024, peaks["worker"] / 1024, json.loads(out), cpu, server_after - server_before


def capacity(report, io_bytes_per_second):
    """1080p workers one coordinator keeps busy on a core for its loop and one for its transport's I/O thread: the
    segments per second each sustains (the loop's processor time and store waits per segment; the bytes a segment
    moves through the coordinator at `io_bytes_per_second` of that thread) times a segment's encode seconds."""
    t, segments = report["timings"], report["timings"]["segmentsDispatched"]
    encode = t["workerEncode"] / segments
    loop = sum(t[p] for p in ("payloadPacking", "dispatch", "results", "bookkeeping")) - t["spoolerCPU"] + t["loopDatabase"]
    spooler = t["spoolerCPU"] + t["spoolerDatabase"]
    moved = (t["payloadBytes"] + t["resultBytes"]) / segments
    by_loop = encode * segments / max(loop, spooler)
    by_bytes = encode * io_bytes_per_second / moved
    return {"encodeSecondsPerSegment": encode, "loopMsPerSegment": 1000 * max(loop, spooler) / segments,
            "bytesPerSegment": moved, "sourceBytesPerSegment": t["payloadBytes"] / segments,
            "workersByLoop": by_loop, "workersByTransport": by_bytes, "workers": min(by_loop, by_bytes)}


def frames(path):
    out = subprocess.run(["ffprobe", "-v", "error", "-count_packets", "-select_streams", "v:0", "-show_entries",
                          "stream=nb_read_packets", "-of", "csv=p=0", path], capture_output=True, text=True, check=True).stdout
    # An MPEG-TS file lists its streams under its program too: the first count is the stream's.
    return int(out.split()[0].strip(","))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tessera")
    ap.add_argument("input")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--preset", default="veryfast")
    ap.add_argument("--range-front", action="store_true",
                    help="put a front before moto that serves ranged GETs from a copy of each object (see start_range_front)")
    ap.add_argument("--s3-output", action="store_true",
                    help="the S3 runs write their MP4 to the bucket too (downloaded afterwards to count its frames)")
    ap.add_argument("--ceiling-seconds", type=float, default=120,
                    help="length of the 1080p clip with 6-frame GOPs for the loop's ceiling (0: skip it)")
    a = ap.parse_args()

    moto, url, (key_id, secret) = start_moto()
    front = None
    if a.range_front:
        front, url = start_range_front(int(url.rsplit(":", 1)[1]))
    # The S3 server's processor time: moto's, and the front's when there is one.
    servers = [moto.pid] + ([front.pid] if front else [])
    work = tempfile.mkdtemp(prefix="tessera-objbench-")
    os.chmod(work, 0o755)  # the embedded store's server may run as another user (postgres, when run as root)
    try:
        aws = dict(os.environ, AWS_ACCESS_KEY_ID=key_id, AWS_SECRET_ACCESS_KEY=secret, AWS_REGION="us-east-1",
                   AWS_ENDPOINT_URL_S3=url)
        import boto3
        s3 = boto3.client("s3", endpoint_url=url, region_name="us-east-1", aws_access_key_id=key_id,
                          aws_secret_access_key=secret)
        s3.create_bucket(Bucket="bench")
        name = os.path.basename(a.input)
        s3.upload_file(a.input, "bench", name)
        size = os.path.getsize(a.input)
        expected = frames(a.input)
        # Over CURVE, as a cluster's workers are: what the coordinator's transport carries is what limits it.
        common = ["-y", "--preset", a.preset, "--data-dir", os.path.join(work, "db"), "--json", "--bench-transport", "curve"]
        # Created and started untimed, so that no timed run pays for it.
        subprocess.run([a.tessera, "db", "start", "--data-dir", os.path.join(work, "db")], check=True, capture_output=True)
        runs = {"local": [], "s3": []}
        reports = {"local": [], "s3": []}
        for r in range(a.runs):
            for kind, source in (("local", a.input), ("s3", f"s3://bench/{name}")):
                out = os.path.join(work, f"{kind}.mp4")
                target = f"s3://bench/out-{r}.mp4" if kind == "s3" and a.s3_output else out
                wall, coordinator, worker, report, cpu, server = timed([a.tessera, "transcode", source, "-o", target] + common,
                                                                       aws, servers)
                if target != out:
                    s3.download_file("bench", f"out-{r}.mp4", out)
                    s3.delete_object(Bucket="bench", Key=f"out-{r}.mp4")
                got = frames(out)
                if got != expected:
                    raise SystemExit(f"{kind}: {got} frames for {expected}")
                reports[kind].append(report)
                runs[kind].append({"wall": wall, "coordinatorMiB": coordinator, "workerMiB": worker, "tesseraCPU": cpu,
                                   "serverCPU": server, "segmentFrames": report["segmentFrames"]})
                print(f"[{time.strftime('%H:%M:%S')}] run {r + 1} {kind}: {wall:.2f} s, Tessera {cpu:.1f} s CPU, server "
                      f"{server:.1f} s CPU, coordinator {coordinator:.0f} MiB, worker {worker:.0f} MiB", file=sys.stderr, flush=True)
        fields = ("wall", "tesseraCPU", "serverCPU", "coordinatorMiB", "workerMiB")
        med = {k: {f: statistics.median(x[f] for x in v) for f in fields} for k, v in runs.items()}
        print(f"{name}: {size / 1e6:.0f} MB, {expected} frames, preset {a.preset}, {a.runs} runs each, medians"
              + (" (the s3 runs write to S3 too)" if a.s3_output else "")
              + (" (ranged GETs served by the range front)" if a.range_front else ""))
        print(f"{'':32}{'local':>12}{'s3':>12}{'s3 / local':>12}")
        for field, label, unit in (("wall", "wall time", "s"), ("tesseraCPU", "Tessera processor time", "s"),
                                   ("serverCPU", "S3 server processor time", "s"),
                                   ("coordinatorMiB", "coordinator peak RSS", "MiB"),
                                   ("workerMiB", "worker peak RSS (largest)", "MiB")):
            lo, s3v = med["local"][field], med["s3"][field]
            ratio = f"{s3v / lo:>11.3f}x" if lo >= 0.1 else f"{'-':>12}"
            print(f"{label:32}{lo:>10.1f}{unit[:1]:>2}{s3v:>10.1f}{unit[:1]:>2}{ratio}")
        # The CURVE I/O thread's rate, from the local runs (they move the most bytes through it).
        moved = sum(j["timings"]["payloadBytes"] + j["timings"]["resultBytes"] for j in reports["local"])
        io_rate = moved / max(sum(j["timings"]["zmqIO"] for j in reports["local"]), 1e-3)
        caps = {k: [capacity(j, io_rate) for j in v] for k, v in reports.items()}
        cap = {k: {f: statistics.median(c[f] for c in v) for f in v[0]} for k, v in caps.items()}
        ceiling = {}
        if a.ceiling_seconds > 0:
            # The loop in steady state: benchmark workers (no encode, no read; a filler result of the real encode's
            # size per frame), 0.2 s segments, 32 tasks in flight, as bench/run's ceiling, from a file and from S3.
            clip = os.path.join(work, "ceiling.mp4")
            subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=1920x1080:rate=30",
                            "-t", str(a.ceiling_seconds), "-c:v", "libx264", "-preset", "ultrafast", "-crf", "30", "-g", "6", clip],
                           check=True)
            s3.upload_file(clip, "bench", "ceiling.mp4")
            per_frame = int(statistics.median(j["timings"]["resultBytes"] / j["frames"] for j in reports["local"]))
            bench = ["--workers", "8", "--segment-seconds", "0.2", "--bench-skip-encode", str(per_frame), "--bench-slots", "4"]
            for kind, source in (("local", clip), ("s3", "s3://bench/ceiling.mp4")):
                found = []
                for r in range(a.runs):
                    report = timed([a.tessera, "transcode", source, "-o", os.path.join(work, "ceiling-out.mp4")] + common + bench,
                                   aws, servers)[3]
                    t = report["timings"]
                    segments = t["segmentsDispatched"]
                    loop = sum(t[p] for p in ("payloadPacking", "dispatch", "results", "bookkeeping")) - t["spoolerCPU"] + t["loopDatabase"]
                    spooler = t["spoolerCPU"] + t["spoolerDatabase"]
                    found.append({"segmentsPerSecond": segments / t["encodingWall"], "loopMsPerSegment": 1000 * loop / segments,
                                  "segmentsPerSecondWithACore": segments / max(loop, spooler)})
                    print(f"[{time.strftime('%H:%M:%S')}] ceiling run {r + 1} {kind}: {segments} segments, "
                          f"{found[-1]['segmentsPerSecond']:.0f}/s", file=sys.stderr, flush=True)
                ceiling[kind] = {f: statistics.median(x[f] for x in found) for f in found[0]}
                cap[kind]["workersByLoop"] = ceiling[kind]["segmentsPerSecondWithACore"] * cap[kind]["encodeSecondsPerSegment"]
                cap[kind]["workers"] = min(cap[kind]["workersByLoop"], cap[kind]["workersByTransport"])
            print(f"the loop's ceiling (0.2 s segments of a 1080p clip, benchmark workers)")
            for field, label in (("segmentsPerSecond", "segments per second"), ("loopMsPerSegment", "loop time per segment ms"),
                                 ("segmentsPerSecondWithACore", "segments per second with a core")):
                print(f"{label:32}{ceiling['local'][field]:>12.2f}{ceiling['s3'][field]:>12.2f}")
        print(f"coordinator capacity in workers like these (CURVE I/O thread: {io_rate / 1e6:.0f} MB per core-second)")
        for field, label, scale, unit in (("sourceBytesPerSegment", "source bytes sent per segment", 1e-6, "MB"),
                                          ("bytesPerSegment", "bytes through it per segment", 1e-6, "MB"),
                                          ("loopMsPerSegment", "loop time per segment (job)", 1, "ms"),
                                          ("encodeSecondsPerSegment", "encode seconds per segment", 1, "s"),
                                          ("workersByLoop", "workers by its loop", 1, ""),
                                          ("workersByTransport", "workers by its transport", 1, ""),
                                          ("workers", "workers kept busy", 1, "")):
            lo, s3v = cap["local"][field] * scale, cap["s3"][field] * scale
            print(f"{label:32}{lo:>10.2f}{unit:>2}{s3v:>10.2f}{unit:>2}")
        with open(os.path.join(HERE, "object_storage.json"), "w") as f:
            json.dump({"input": name, "bytes": size, "frames": expected, "preset": a.preset, "s3Output": a.s3_output, "rangeFront": a.range_front,
                       "runs": runs, "medians": med,
                       "ioBytesPerCoreSecond": io_rate, "ceiling": ceiling,
                       "capacity": cap}, f, indent=1)
    finally:
        subprocess.run([a.tessera, "db", "stop", "--data-dir", os.path.join(work, "db")], capture_output=True)
        moto.terminate()
        if front:
            front.terminate()
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
