#!/usr/bin/env python3
"""The same job from a local file and from S3: wall time and peak resident memory of the coordinator and a worker.

    python3 bench/object_storage.py TESSERA INPUT [--runs 3] [--preset veryfast]

Starts moto's S3 server (PyPI's `moto[server]`) on loopback (authentication off, so that workers' presigned reads pass;
an IAM user's keys are still made and used), puts INPUT in a bucket, then runs `tessera transcode` in turns: INPUT -> local MP4, and
s3://bench/INPUT -> local MP4, each with the process's own embedded store and local workers. While each runs, its
process tree is sampled every 0.1 s: the `tessera transcode` process holds the coordinator, its other `tessera`
processes are the workers; each one's peak is its VmHWM. Prints medians and the ratios S3 / local, and writes JSON next to
this file (object_storage.json). Every output is checked for the source's frame count with ffprobe.
"""
import argparse, json, os, socket, statistics, subprocess, sys, tempfile, threading, time

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


def timed(args, env):
    """Runs `args`; returns (wall seconds, coordinator peak MiB, largest worker peak MiB)."""
    peaks = {"coordinator": 0, "worker": 0}
    binary = os.path.realpath(args[0])
    t0 = time.monotonic()
    proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

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
    _, err = proc.communicate()
    sampler.join()
    wall = time.monotonic() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args[:4])}: exit {proc.returncode}: {err.strip()[-400:]}")
    return wall, peaks["coordinator"] / 1024, peaks["worker"] / 1024


def frames(path):
    out = subprocess.run(["ffprobe", "-v", "error", "-count_packets", "-select_streams", "v:0", "-show_entries",
                          "stream=nb_read_packets", "-of", "csv=p=0", path], capture_output=True, text=True, check=True).stdout
    return int(out.strip().strip(","))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tessera")
    ap.add_argument("input")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--preset", default="veryfast")
    a = ap.parse_args()

    moto, url, (key_id, secret) = start_moto()
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
        common = ["-y", "--preset", a.preset, "--data-dir", os.path.join(work, "db")]
        runs = {"local": [], "s3": []}
        for r in range(a.runs):
            for kind, source in (("local", a.input), ("s3", f"s3://bench/{name}")):
                out = os.path.join(work, f"{kind}.mp4")
                wall, coordinator, worker = timed([a.tessera, "transcode", source, "-o", out] + common, aws)
                got = frames(out)
                if got != expected:
                    raise SystemExit(f"{kind}: {got} frames for {expected}")
                runs[kind].append({"wall": wall, "coordinatorMiB": coordinator, "workerMiB": worker})
                print(f"[{time.strftime('%H:%M:%S')}] run {r + 1} {kind}: {wall:.2f} s, coordinator {coordinator:.0f} MiB, "
                      f"worker {worker:.0f} MiB", file=sys.stderr, flush=True)
        med = {k: {f: statistics.median(x[f] for x in v) for f in ("wall", "coordinatorMiB", "workerMiB")} for k, v in runs.items()}
        print(f"{name}: {size / 1e6:.0f} MB, {expected} frames, preset {a.preset}, {a.runs} runs each, medians")
        print(f"{'':28}{'local':>12}{'s3':>12}{'s3 / local':>12}")
        for field, label, unit in (("wall", "wall time", "s"), ("coordinatorMiB", "coordinator peak RSS", "MiB"),
                                   ("workerMiB", "worker peak RSS (largest)", "MiB")):
            lo, s3v = med["local"][field], med["s3"][field]
            print(f"{label:28}{lo:>10.1f}{unit[:1]:>2}{s3v:>10.1f}{unit[:1]:>2}{s3v / lo:>11.3f}x")
        with open(os.path.join(HERE, "object_storage.json"), "w") as f:
            json.dump({"input": name, "bytes": size, "frames": expected, "preset": a.preset, "runs": runs, "medians": med}, f, indent=1)
    finally:
        subprocess.run([a.tessera, "db", "stop", "--data-dir", os.path.join(work, "db")], capture_output=True)
        moto.terminate()
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
