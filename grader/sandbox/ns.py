"""Inside the sandbox: the Linux calls, the kernel's file system, and its pid 1 (init).

Used by :mod:`~grader.sandbox.launch` (the supervisor), which loads this file by path: both are
standalone scripts of the standard library only, so that no learner-writable path is ever on
the launcher's ``sys.path``. See :mod:`~grader.sandbox.launch` for the whole mechanism.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import platform
import resource
import select
import signal
import socket

# -- Linux constants (linux/sched.h, linux/mount.h, linux/prctl.h) ---------------------------
CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MS_NOATIME, MS_NODIRATIME, MS_RELATIME = 1024, 2048, 1 << 21
MNT_DETACH = 2
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS = 1, 4, 24, 38
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "riscv64": 41, "ppc64le": 203, "s390x": 217}

#: Where the kernel finds its sockets, its connection file and its home, inside the sandbox.
SOCKETS, HOME = "/run/kernel", "/tmp"
#: The uid the kernel has inside a user namespace (grading as a non-root user).
USERNS_UID = 1000
#: Signals the supervisor and init pass on to the kernel (interrupt, shutdown requests).
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1)
#: System folders bound read-only (each only if it exists; a symlink stays a symlink).
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
DEVICES = ("null", "zero", "full", "random", "urandom")

_libc = ctypes.CDLL(None, use_errno=True)


def _check(ret: int, what: str) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _b(s: str | None) -> bytes | None:
    return None if s is None else os.fsencode(s)


def unshare(flags: int) -> None:
    _check(_libc.unshare(ctypes.c_int(flags)), "unshare")


def mount(src: str | None, dst: str, fstype: str | None, flags: int, data: str | None = None):
    _check(
        _libc.mount(_b(src), _b(dst), _b(fstype), ctypes.c_ulong(flags), _b(data)),
        f"mount {src or fstype} on {dst}",
    )


def setns(fd: int, nstype: int) -> None:
    _check(_libc.setns(fd, nstype), "setns")


def remount_readonly(path: str, extra: int = 0) -> None:
    """Make the bind mount at ``path`` read-only (keeping the flags a user namespace must)."""
    flags = MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | extra
    mount(None, path, None, flags | _kept_flags(path))


def prctl(option: int, value: int) -> None:
    _check(_libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0), f"prctl({option})")


def drop_bounding_set() -> None:
    """Empty the capability bounding set: nothing run later can gain a capability back."""
    for cap in range(64):
        if _libc.prctl(PR_CAPBSET_DROP, ctypes.c_ulong(cap), 0, 0, 0) != 0:
            if ctypes.get_errno() == errno.EINVAL:  # past the last capability this kernel has
                break
            _check(-1, "dropping the capability bounding set")


def drop_capabilities() -> None:
    """Empty the effective, permitted and inheritable capability sets."""
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = (ctypes.c_uint32 * 6)()  # two {effective, permitted, inheritable}: all empty
    _check(_libc.capset(header, data), "capset")


def pivot_root(new_root: str) -> None:
    """Make ``new_root`` the root and detach the old one (pivot_root(".", ".") idiom)."""
    os.chdir(new_root)
    number = SYS_PIVOT_ROOT.get(platform.machine())
    if number is None:  # an architecture we do not know: a chroot, with no capabilities left
        os.chroot(".")
    else:
        _check(_libc.syscall(number, b".", b"."), "pivot_root")
        _check(_libc.umount2(b".", MNT_DETACH), "detaching the old root")
    os.chdir("/")


# -- init: the sandbox's pid 1 ------------------------------------------------------------------
def _kept_flags(path: str) -> int:
    """Mount flags a read-only remount must keep (a user namespace may not clear them)."""
    f = os.statvfs(path).f_flag
    kept = [(os.ST_NOSUID, MS_NOSUID), (os.ST_NODEV, MS_NODEV), (os.ST_NOEXEC, MS_NOEXEC),
            (os.ST_NOATIME, MS_NOATIME), (os.ST_NODIRATIME, MS_NODIRATIME),
            (os.ST_RELATIME, MS_RELATIME)]  # fmt: skip
    return sum(ms for st, ms in kept if f & st)


def _mountpoint(root: str, path: str, is_dir: bool) -> str:
    target = root + path
    os.makedirs(target if is_dir else os.path.dirname(target), mode=0o755, exist_ok=True)
    if not is_dir and not os.path.exists(target):
        os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o644))
    return target


def bind(root: str, src: str, dst: str, *, readonly: bool = True) -> None:
    """Show ``src`` at ``dst`` inside ``root`` (a symlink is copied as a symlink)."""
    if os.path.islink(src):
        os.makedirs(os.path.dirname(root + dst), mode=0o755, exist_ok=True)
        if not os.path.lexists(root + dst):
            os.symlink(os.readlink(src), root + dst)
        return
    target = _mountpoint(root, dst, os.path.isdir(src))
    mount(src, target, None, MS_BIND | MS_REC)
    if readonly:
        remount_readonly(target)


def build_root(args, conn: dict, ids: tuple[int, int], sockets: int) -> str:
    """The kernel's whole file system, under a fresh tmpfs; returns its path."""
    mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing we mount leaks out, nor in
    root = os.path.realpath(args.run_dir) + "/root"  # made by the supervisor; ours only
    mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=16m,mode=0755")
    # The private scratch first: a folder shown below (a package under /tmp) stays visible.
    os.makedirs(root + HOME)
    mount("tmpfs", root + HOME, "tmpfs", MS_NOSUID | MS_NODEV,
          f"size={args.scratch_bytes},mode=0700,uid={ids[0]},gid={ids[1]}")  # fmt: skip
    for path in SYSTEM:
        if os.path.lexists(path):
            bind(root, path, path)
    shown = [os.path.realpath(p) + "/" for p in SYSTEM if os.path.isdir(p)]
    for path in args.bind_ro:
        if any((os.path.realpath(path) + "/").startswith(s) for s in shown):
            continue  # already there, read-only
        bind(root, os.path.realpath(path), os.path.realpath(path))
        if os.path.abspath(path) != os.path.realpath(path):  # e.g. a venv reached by a link
            bind(root, os.path.realpath(path), os.path.abspath(path))
    for view in args.view:  # each package's grading view, where the package was
        src, dst = view.split(":", 1)
        bind(root, src, dst)
    os.makedirs(root + "/proc", mode=0o555)
    mount("proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    os.makedirs(root + "/dev", mode=0o755)
    for name in DEVICES:
        if os.path.exists(f"/dev/{name}"):
            bind(root, f"/dev/{name}", f"/dev/{name}", readonly=False)
    os.makedirs(root + "/dev/shm")
    mount("tmpfs", root + "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
          f"size=64m,mode=0700,uid={ids[0]},gid={ids[1]}")  # fmt: skip
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                         ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):  # fmt: skip
        os.symlink(target, f"{root}/dev/{name}")
    # (by path: a descriptor opened before unshare() names a mount of the old namespace)
    ipc = os.path.realpath(args.run_dir) + "/ipc"
    mount(ipc, _mountpoint(root, SOCKETS, True), None, MS_BIND)
    kernel_conn = dict(conn, ip=f"{SOCKETS}/{os.path.basename(conn['ip'])}")
    _write_owned(f"{root}{HOME}/.kernel.json", json.dumps(kernel_conn).encode(), ids)
    if args.files:  # the submission's own files and its hidden instances, the kernel's own
        _copy_owned(os.path.realpath(args.files), f"{root}{HOME}", ids)
    for sub in (".matplotlib", ".ipython", ".cache"):
        os.makedirs(f"{root}{HOME}/{sub}", 0o700, exist_ok=True)
        os.chown(f"{root}{HOME}/{sub}", *ids)
    for cache in _font_caches():  # matplotlib's font list, so each kernel does not rebuild it
        with open(cache, "rb") as f:
            _write_owned(f"{root}{HOME}/.matplotlib/{os.path.basename(cache)}", f.read(), ids)
    return root


def _copy_owned(src: str, dst: str, ids: tuple[int, int]) -> None:
    """Copy the grader's folder ``src`` (plain files and folders it made) into ``dst``,
    owned by the kernel; a link or special file in it is skipped, never followed."""
    fd = os.open(src, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        for name in sorted(os.listdir(fd)):
            st = os.lstat(name, dir_fd=fd)
            target = f"{dst}/{name}"
            if st.st_mode & 0o170000 == 0o040000:  # a folder
                os.mkdir(target, 0o700)
                os.chown(target, *ids)
                _copy_owned(f"{src}/{name}", target, ids)
            elif st.st_mode & 0o170000 == 0o100000:  # a regular file
                inner = os.open(name, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=fd)
                with os.fdopen(inner, "rb") as f:
                    _write_owned(target, f.read(), ids)
    finally:
        os.close(fd)


def _write_owned(path: str, data: bytes, ids: tuple[int, int]) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    os.write(fd, data)
    os.fchown(fd, *ids)
    os.close(fd)


def _font_caches() -> list[str]:
    """The grader's matplotlib font lists, one per file name: the ``MPLCONFIGDIR`` one first,
    as matplotlib reads it (both folders may hold a list of the same name; the kernel has one)."""
    import glob

    roots = [os.environ.get("MPLCONFIGDIR", ""), os.path.expanduser("~/.cache/matplotlib")]
    found: dict[str, str] = {}
    for root in filter(None, roots):
        for path in sorted(glob.glob(os.path.join(root, "fontlist-*.json"))):
            found.setdefault(os.path.basename(path), path)
    return list(found.values())


def kernel_env(args) -> dict[str, str]:
    """The kernel's whole environment: nothing of the grader's but the variables named."""
    env = {name: os.environ[name] for name in args.env if name in os.environ}
    bindir = os.path.dirname(os.path.abspath(args.python))
    env.update(
        PATH=f"{bindir}:/usr/local/bin:/usr/bin:/bin", HOME=HOME, USER="learner",
        LOGNAME="learner", LANG="C.UTF-8", TMPDIR=HOME, MPLCONFIGDIR=f"{HOME}/.matplotlib",
        IPYTHONDIR=f"{HOME}/.ipython", XDG_CACHE_HOME=f"{HOME}/.cache",
        JUPYTER_RUNTIME_DIR=f"{HOME}/.cache", PYTHONDONTWRITEBYTECODE="1", CHIPSIM_SANDBOX="1",
    )  # fmt: skip
    if args.pythonpath:
        env["PYTHONPATH"] = args.pythonpath
    return env


def set_limits(args) -> None:
    for res, value in ((resource.RLIMIT_AS, args.as_bytes), (resource.RLIMIT_CPU, args.cpu),
                       (resource.RLIMIT_NPROC, args.nproc), (resource.RLIMIT_FSIZE, args.fsize),
                       (resource.RLIMIT_CORE, 0)):  # fmt: skip
        resource.setrlimit(res, (value, value))


def sandbox_init(args, rest, conn, ids, sockets, lifeline: int, status_w: int, ns) -> None:
    """pid 1 of the new namespaces: build the sandbox, drop privileges, run and reap."""
    unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS)
    mnt = os.open("/proc/self/ns/mnt", os.O_RDONLY)
    socket.send_fds(ns, [b"m"], [mnt])
    os.close(mnt)
    ns.close()
    root = build_root(args, conn, ids, sockets)
    os.close(sockets)
    env = kernel_env(args)
    pivot_root(root)
    mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    set_limits(args)
    drop_bounding_set()
    if args.mode == "root":
        os.setgroups([])
        os.setresgid(ids[1], ids[1], ids[1])
        os.setresuid(ids[0], ids[0], ids[0])
    drop_capabilities()
    prctl(PR_SET_NO_NEW_PRIVS, 1)
    prctl(PR_SET_DUMPABLE, 0)  # the kernel (same uid) may not ptrace or read init's memory
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # after the uid change, which would clear it
    if select.select([lifeline], [], [], 0)[0]:  # the supervisor died before that: give up
        os._exit(71)
    os.setsid()  # Jupyter's interrupt reaches the supervisor's process group, not us twice
    command = [args.python, "-s", "-m", "ipykernel_launcher", "-f", f"{HOME}/.kernel.json", *rest]
    out_r, out_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.setsid()
        for sig in FORWARDED:
            signal.signal(sig, signal.SIG_DFL)
        null = os.open("/dev/null", os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(out_w, 1)
        os.dup2(out_w, 2)
        os.closerange(3, 1 << 16)
        os.chdir(HOME)
        try:
            os.execve(command[0], command, env)
        finally:
            os._exit(127)
    os.close(out_w)
    os.write(status_w, json.dumps(reap(pid, out_r)).encode())
    os.close(status_w)
    os._exit(0)


def reap(kernel: int, output: int) -> dict:
    """Forward signals to the kernel and reap every process until the kernel exits; keep the
    last 4 KiB it wrote to its own stdout/stderr (what a kernel that fails to start says)."""
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)

    def forward(signum: int, _frame) -> None:
        try:
            os.kill(kernel, signum)
        except ProcessLookupError:
            pass

    for sig in FORWARDED:
        signal.signal(sig, forward)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    tail, open_fds = b"", [output, wake_r]
    while True:
        ready = select.select(open_fds, [], [], 1.0)[0]
        for fd in ready:
            data = os.read(fd, 65536)
            if fd == output:
                if not data:
                    open_fds.remove(output)
                tail = (tail + data)[-4096:]
        while True:  # reap every child that ended (orphans become ours)
            try:
                pid, wstatus, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                pid = 0
            if pid == 0:
                break
            if pid == kernel:
                sig = os.WTERMSIG(wstatus) if os.WIFSIGNALED(wstatus) else None
                code = os.WEXITSTATUS(wstatus) if os.WIFEXITED(wstatus) else None
                return {
                    "exit_code": code,
                    "signal": sig,
                    "signal_name": signal.Signals(sig).name if sig else None,
                    "cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
                    "maxrss_kib": usage.ru_maxrss,
                    "output_tail": tail.decode(errors="replace"),
                }
