"""The sandbox kernel's launcher: one learner kernel in its own namespaces, identity and limits.

Jupyter runs it, as whoever grades, from the kernelspec that
:class:`~chipsim.grading.execute.GuardedExecute` writes for each grading process::

    python -I -S sandbox_launch.py --run-dir DIR --mode root --bind-ro /usr ... \\
        --view VIEW:PKGDIR --as-bytes N --cpu S --nproc N --fsize N {connection_file} [args]

It is a standalone script (standard library only, run with ``-I -S``): no learner-writable
path is on its ``sys.path``. Three processes make one kernel::

    supervisor (this script, on the host)
      └─ init: pid 1 of new PID, mount, network, IPC and UTS namespaces
           └─ the IPython kernel, in its own session (and everything it starts)

The **supervisor** allocates the kernel's identity (``--mode root``: a uid of its own from a
pool, held by a lock for the kernel's lifetime; ``--mode userns``: an unprivileged user
namespace mapping the grader's uid to uid 1000), forks init into the new namespaces, forwards
Jupyter's signals (interrupt) to it, and when it ends writes ``status.json`` (how the kernel
ended: exit code or signal, CPU seconds, peak memory) into ``--run-dir``, a folder of the
grader's that the kernel never sees.

**init** builds the kernel's file system before anything of the learner runs: a fresh tmpfs
root holding read-only binds of the system folders, the Python installation, the venv and the
package *view* (``--view``: the grading view of chipsim, bound where chipsim is imported
from), a private ``/tmp`` (tmpfs, size-limited, owned by the kernel's uid, mode 0700) that is
also ``$HOME``, ``/dev`` with a few device nodes, a fresh ``/proc``, and ``/run/kernel``: the
one folder shared with the grader, where the kernel creates its ZeroMQ sockets (the ``ipc``
transport: there is no network in the namespace). Nothing else of the machine (the course
folder, ``.git``, ``solutions/``, the gradebook, other kernels' files) exists in it. It then
applies the limits, drops every privilege (root mode: the pool uid, no groups; both modes: no
capabilities, ``no_new_privs``), forks the kernel and reaps every process; when the kernel
exits, init exits and the kernel of Linux ends every process left in the namespace (a
``setsid`` daemon included). If the supervisor is killed (Jupyter's restart), init gets
``SIGKILL`` (parent-death signal) and the same happens.

Once the kernel has created its five sockets, the supervisor remounts ``/run/kernel``
read-only inside the kernel's namespace, so the kernel cannot swap a socket for a link that
the grader would then follow.

Root never acts by path inside a folder the kernel can write: the run folder is created by
the grader (0700) and handed over by file descriptor; the kernel's scratch is a tmpfs that
disappears with its namespace.
"""

from __future__ import annotations

import argparse
import ctypes
import errno
import fcntl
import json
import os
import platform
import resource
import select
import signal
import socket
import sys
import time

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


# -- the supervisor ---------------------------------------------------------------------------
def parse(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run-dir", required=True, help="the grader's private folder (0700)")
    ap.add_argument("--mode", choices=("root", "userns"), required=True)
    ap.add_argument("--python", default=sys.executable, help="the kernel's interpreter")
    ap.add_argument("--bind-ro", action="append", default=[], help="a folder to show read-only")
    ap.add_argument("--view", default="", help="SRC:DST, the package view and where it goes")
    ap.add_argument("--pythonpath", default="", help="the kernel's PYTHONPATH")
    ap.add_argument("--env", action="append", default=[], help="a variable passed to the kernel")
    ap.add_argument("--as-bytes", type=int, default=4 << 30)
    ap.add_argument("--cpu", type=int, default=900)
    ap.add_argument("--nproc", type=int, default=256)
    ap.add_argument("--fsize", type=int, default=1 << 30)
    ap.add_argument("--scratch-bytes", type=int, default=512 << 20)
    ap.add_argument("--uid-base", type=int, default=2_000_000_000)
    ap.add_argument("--uid-count", type=int, default=4096)
    ap.add_argument("--lock-dir", default="/run/chipsim-sandbox/uids")
    ap.add_argument("connection_file")
    return ap.parse_known_args(argv)  # the rest goes to the kernel (nbclient's extras)


def private_dir(path: str) -> int:
    """An fd on ``path``, which must be a real folder of ours that nobody else may write."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    st = os.fstat(fd)
    if st.st_uid != os.geteuid() or st.st_mode & 0o022:
        os.close(fd)
        raise SystemExit(f"chipsim-sandbox: {path} must be a folder of this user, mode 0700")
    return fd


def allocate_uid(args: argparse.Namespace) -> tuple[int, int]:
    """A uid no other kernel holds: ``(uid, fd of its lock)``. The lock lasts as long as this
    process (it is released even when the supervisor is killed)."""
    os.makedirs(args.lock_dir, mode=0o700, exist_ok=True)
    folder = private_dir(args.lock_dir)
    try:
        for slot in range(args.uid_count):
            uid = args.uid_base + slot
            fd = os.open(str(slot), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                         0o600, dir_fd=folder)  # fmt: skip
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            if not _uid_has_processes(uid):  # a killed kernel's processes may still be dying
                return uid, fd
            os.close(fd)
    finally:
        os.close(folder)
    raise SystemExit(f"chipsim-sandbox: all {args.uid_count} sandbox uids are in use")


def _uid_has_processes(uid: int) -> bool:
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    return True
            except OSError:
                pass
    return False


def prepare_sockets(run: int, owner: tuple[int, int]) -> int:
    """The run folder's ``ipc/`` (the kernel's sockets): emptied and handed to ``owner``, by fd."""
    fd = os.open("ipc", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=run)
    for name in os.listdir(fd):  # a previous kernel's sockets (restart): unlink never follows
        os.unlink(name, dir_fd=fd)
    os.fchown(fd, *owner)
    os.fchmod(fd, 0o700)
    return fd


def write_status(run: int, status: dict) -> None:
    tmp = f"status.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600, dir_fd=run)
    with os.fdopen(fd, "w") as f:
        json.dump(status, f)
    os.replace(tmp, "status.json", src_dir_fd=run, dst_dir_fd=run)


def main(argv: list[str]) -> int:
    args, rest = parse(argv)
    with open(args.connection_file) as f:
        conn = json.load(f)
    if conn.get("transport") != "ipc":
        raise SystemExit("chipsim-sandbox: the kernel has no network; use the ipc transport")
    run = private_dir(args.run_dir)
    if args.mode == "root":
        if os.geteuid() != 0:
            raise SystemExit("chipsim-sandbox: --mode root needs root")
        uid, _lock = allocate_uid(args)  # _lock: held (open) until this process ends
        ids = (uid, uid)
    else:
        ids = (USERNS_UID, USERNS_UID)
        outside = (os.geteuid(), os.getegid())
        unshare(CLONE_NEWUSER)
        with open("/proc/self/setgroups", "w") as f:
            f.write("deny")
        with open("/proc/self/uid_map", "w") as f:
            f.write(f"{USERNS_UID} {outside[0]} 1")
        with open("/proc/self/gid_map", "w") as f:
            f.write(f"{USERNS_UID} {outside[1]} 1")
    sockets = prepare_sockets(run, ids if args.mode == "root" else (-1, -1))
    for name in ("ready", "status.json"):  # a previous kernel's (restart)
        try:
            os.unlink(name, dir_fd=run)
        except FileNotFoundError:
            pass
    try:
        os.mkdir("root", 0o700, dir_fd=run)  # init's mount point for the kernel's root
    except FileExistsError:
        pass
    unshare(CLONE_NEWPID)  # our next child is pid 1 of a new PID namespace
    lifeline_r, lifeline_w = os.pipe()
    status_r, status_w = os.pipe()
    ns_parent, ns_child = socket.socketpair()  # init sends its mount namespace through it
    started = time.monotonic()  # wall time, for the feedback only
    child = os.fork()
    if child == 0:
        os.close(lifeline_w)
        os.close(status_r)
        ns_parent.close()
        try:
            sandbox_init(args, rest, conn, ids, sockets, lifeline_r, status_w, ns_child)
        except BaseException as exc:  # report why the sandbox could not start, then die
            os.write(status_w, json.dumps({"setup_error": str(exc)[:2000]}).encode())
        os._exit(70)
    os.close(lifeline_r)
    os.close(status_w)
    ns_child.close()
    forwarded: list[int] = []

    def forward(signum: int, _frame) -> None:
        forwarded.append(signum)
        try:
            os.kill(child, signum)
        except ProcessLookupError:
            pass

    for sig in FORWARDED:
        signal.signal(sig, forward)
    try:  # init's mount namespace, to lock the sockets later (init is not ptrace-able then)
        _, fds, _, _ = socket.recv_fds(ns_parent, 16, 1)
    except OSError:
        fds = []
    ns_parent.close()
    status = supervise(child, conn, sockets, run, fds[0] if fds else None)
    report = _read_all(status_r)
    try:
        status.update(json.loads(report or "{}"))
    except ValueError:
        status["setup_error"] = "init sent a garbled status"
    status.update(wall_s=round(time.monotonic() - started, 3), forwarded=forwarded, uid=ids[0])
    status["limits"] = {"cpu_s": args.cpu, "as_bytes": args.as_bytes, "nproc": args.nproc,
                        "fsize": args.fsize, "scratch_bytes": args.scratch_bytes}  # fmt: skip
    write_status(run, status)
    if status.get("signal"):
        return 128 + int(status["signal"])
    return int(status.get("exit_code") or 0)


def supervise(child: int, conn: dict, sockets: int, run: int, mnt_ns: int | None) -> dict:
    """Wait for init; meanwhile, once the kernel's sockets exist, make them read-only inside
    and tell the grader (``ready`` in the run folder): it sends no code before that."""
    names = {f"{os.path.basename(conn['ip'])}-{conn[k]}" for k in
             ("shell_port", "iopub_port", "stdin_port", "control_port", "hb_port")}  # fmt: skip
    locked = False
    while True:
        try:
            pid, wstatus = os.waitpid(child, 0 if locked else os.WNOHANG)
        except ChildProcessError:
            return {"setup_error": "init vanished"}
        if pid == child:
            return {"init_exit": os.waitstatus_to_exitcode(wstatus)}
        if not locked and names <= set(os.listdir(sockets)):
            locked = True
            if mnt_ns is not None and _remount_sockets_readonly(mnt_ns):
                os.close(os.open("ready", os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600,
                                 dir_fd=run))  # fmt: skip
            else:
                os.kill(child, signal.SIGKILL)  # never leave a kernel with swappable sockets
        if not locked:
            time.sleep(0.02)


def _remount_sockets_readonly(mnt_ns: int) -> bool:
    """In a short-lived helper that enters init's mount namespace: ``/run/kernel`` read-only."""
    helper = os.fork()
    if helper == 0:
        try:
            _check(_libc.setns(mnt_ns, CLONE_NEWNS), "setns")
            flags = MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC
            mount(None, SOCKETS, None, flags | _kept_flags(SOCKETS))
            os._exit(0)
        except BaseException as exc:
            os.write(2, f"chipsim-sandbox: cannot lock the kernel's sockets: {exc}\n".encode())
            os._exit(1)
    _, wstatus = os.waitpid(helper, 0)
    return os.waitstatus_to_exitcode(wstatus) == 0


def _read_all(fd: int) -> str:
    chunks = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks).decode(errors="replace")


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
        flags = MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | _kept_flags(src)
        mount(None, target, None, flags)


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
    if args.view:
        src, dst = args.view.split(":", 1)
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
    for sub in (".matplotlib", ".ipython", ".cache"):
        os.mkdir(f"{root}{HOME}/{sub}", 0o700)
        os.chown(f"{root}{HOME}/{sub}", *ids)
    for cache in _font_caches():  # matplotlib's font list, so each kernel does not rebuild it
        with open(cache, "rb") as f:
            _write_owned(f"{root}{HOME}/.matplotlib/{os.path.basename(cache)}", f.read(), ids)
    return root


def _write_owned(path: str, data: bytes, ids: tuple[int, int]) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    os.write(fd, data)
    os.fchown(fd, *ids)
    os.close(fd)


def _font_caches() -> list[str]:
    import glob

    roots = [os.environ.get("MPLCONFIGDIR", ""), os.path.expanduser("~/.cache/matplotlib")]
    return [p for r in roots if r for p in glob.glob(os.path.join(r, "fontlist-*.json"))]


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


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
