/// Stand-ins for a host without systemd or sudo, put first on PATH for the systemd recipe of docs/operations.md.
/// The units under /etc/systemd/system are run as plain processes, as systemd would start them: their
/// Environment= and EnvironmentFile= (a leading `-` for an optional file), LoadCredential= (copied to a
/// credentials directory, CREDENTIALS_DIRECTORY), StateDirectory= (STATE_DIRECTORY), User= or DynamicUser=
/// (`nobody`), UMask=, the specifiers %i, %H and %%, and ExecStart= with `${VAR}` expanded. The hardening lines
/// are not applied: `systemd-analyze verify` checks them (deploy/check.sh).
enum SystemdStandIn {
    /// `systemctl enable --now UNIT…` starts each unit; `systemctl reload UNIT` sends it SIGHUP; `stop UNIT…` sends
    /// SIGTERM and waits for the process to end (90 s, systemd's default); `restart UNIT…` stops, then starts;
    /// `daemon-reload` does nothing. A unit's stdout and stderr go to /var/log/UNIT.log.
    static let systemctl = #"""
        #!/usr/bin/env python3
        import os, pwd, re, shlex, shutil, signal, socket, subprocess, sys, time

        def unit_file(name):
            base = name if name.endswith(".service") else name + ".service"
            stem, _, instance = base[:-len(".service")].partition("@")
            path = f"/etc/systemd/system/{stem}@.service" if "@" in base else f"/etc/systemd/system/{base}"
            return base, instance, path

        def service_section(path, instance):
            values = {}
            section = None
            for line in open(path):
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                if line.startswith("["):
                    section = line
                    continue
                if section != "[Service]":
                    continue
                key, _, value = line.partition("=")
                value = re.sub(r"%(.)", lambda m: {"i": instance, "H": socket.gethostname(), "%": "%"}[m.group(1)], value)
                values.setdefault(key, []).append(value)
            return values

        def env_file(path, env):
            optional = path.startswith("-")
            path = path.lstrip("-")
            if not os.path.exists(path):
                if optional:
                    return
                sys.exit(f"systemctl: {path}: no such environment file")
            for line in open(path):
                line = line.strip()
                if line and not line.startswith("#") and "=" in line:
                    key, _, value = line.partition("=")
                    env[key.strip()] = value.strip().strip('"')

        def start(name):
            base, instance, path = unit_file(name)
            service = service_section(path, instance)
            user = service.get("User", [None])[-1] or ("nobody" if service.get("DynamicUser", ["no"])[-1] == "yes" else "root")
            account = pwd.getpwnam(user)
            env = {"PATH": os.environ["PATH"], "LANG": "C.UTF-8", "HOME": "/", "USER": user}
            for assignments in service.get("Environment", []):
                for assignment in shlex.split(assignments):
                    key, _, value = assignment.partition("=")
                    env[key] = value
            for file in service.get("EnvironmentFile", []):
                env_file(file, env)
            for state in service.get("StateDirectory", []):
                directory = f"/var/lib/{state}"
                os.makedirs(directory, exist_ok=True)
                os.chown(directory, account.pw_uid, account.pw_gid)
                env["STATE_DIRECTORY"] = directory
            credentials = service.get("LoadCredential", [])
            if credentials:
                directory = f"/run/credentials/{base}"
                shutil.rmtree(directory, ignore_errors=True)
                os.makedirs(directory)
                for credential in credentials:
                    id, _, source = credential.partition(":")
                    shutil.copyfile(source, f"{directory}/{id}")
                    os.chmod(f"{directory}/{id}", 0o400)
                    os.chown(f"{directory}/{id}", account.pw_uid, account.pw_gid)
                os.chown(directory, account.pw_uid, account.pw_gid)
                env["CREDENTIALS_DIRECTORY"] = directory
            words = [re.sub(r"\$\{(\w+)\}", lambda m: env.get(m.group(1), ""), word) for word in shlex.split(service["ExecStart"][-1])]
            umask = int(service.get("UMask", ["0022"])[-1], 8)
            def become():
                os.umask(umask)
                os.setgid(account.pw_gid)
                os.initgroups(user, account.pw_gid)
                os.setuid(account.pw_uid)
            os.makedirs("/var/log", exist_ok=True)
            log = open(f"/var/log/{base[:-len('.service')]}.log", "ab")
            process = subprocess.Popen(words, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                       start_new_session=True, preexec_fn=become)
            os.makedirs("/var/lib/systemctl", exist_ok=True)
            open(f"/var/lib/systemctl/{base}.pid", "w").write(str(process.pid))

        def stop(name):
            base = unit_file(name)[0]
            pid = int(open(f"/var/lib/systemctl/{base}.pid").read())
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                return
            for _ in range(900):
                # The unit's process is no child of this command: wait until it is gone (or a zombie).
                try:
                    if open(f"/proc/{pid}/stat").read().split(")")[-1].split()[0] == "Z":
                        return
                except FileNotFoundError:
                    return
                time.sleep(0.1)
            sys.exit(f"systemctl: {base} did not stop within 90 s")

        args = sys.argv[1:]
        if args[:1] == ["daemon-reload"]:
            sys.exit(0)
        if args[:2] == ["enable", "--now"]:
            for name in args[2:]:
                start(name)
        elif args[:1] == ["stop"]:
            for name in args[1:]:
                stop(name)
        elif args[:1] == ["restart"]:
            for name in args[1:]:
                stop(name)
                start(name)
        elif args[:1] == ["reload"]:
            for name in args[1:]:
                base = unit_file(name)[0]
                os.kill(int(open(f"/var/lib/systemctl/{base}.pid").read()), signal.SIGHUP)
        else:
            sys.exit(f"systemctl: {' '.join(args)}: not supported here")
        """#

    /// sudo for root: runs the command (as USER with `-u USER`).
    static let sudo = #"""
        #!/bin/bash
        if [[ $1 == -u ]]; then user=$2; shift 2; exec runuser -u "$user" -- "$@"; fi
        exec "$@"
        """#
}
