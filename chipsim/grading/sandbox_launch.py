"""The sandbox kernel's launcher: start an IPython kernel as an unprivileged user with limits.

Run by Jupyter (as whoever grades) from the ``chipsim-sandbox`` kernelspec::

    python launch.py --user nobody --group nogroup --as-bytes 4294967296 --cpu 900 \\
        --nproc 512 --fsize 1073741824 {connection_file} [extra kernel arguments]

It is a standalone script (the kernelspec folder holds a copy), so it imports nothing from
chipsim. As root it:

1. makes a private scratch folder owned by the unprivileged user (home, caches, cwd);
2. copies the connection file there (Jupyter's copy lives in root's 0700 runtime folder);
3. ``exec``\\ s ``setpriv --reuid --regid --clear-groups --no-new-privs`` and ``prlimit``
   (address space, CPU seconds, processes, file size) in front of ``python -m ipykernel_launcher``.

``exec`` keeps the process id, so Jupyter's interrupt (SIGINT) and kill reach the kernel.
When not root it cannot change user: it applies the limits only (``prlimit``), and says so
on stderr of the launcher (never in a notebook cell).
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import sys
import tempfile

PREFIX = "chipsim-sandbox-"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _sweep(tmp: str) -> None:
    """Remove scratch folders of kernels that are gone (their launcher pid is in the name)."""
    for path in glob.glob(os.path.join(tmp, PREFIX + "*")):
        try:
            pid = int(os.path.basename(path)[len(PREFIX) :].split("-")[0])
        except ValueError:
            continue
        if not _alive(pid):
            shutil.rmtree(path, ignore_errors=True)


def _font_caches() -> list[str]:
    """matplotlib's font list of the grading user, so each kernel does not rebuild it."""
    roots = [os.environ.get("MPLCONFIGDIR", ""), os.path.expanduser("~/.cache/matplotlib")]
    return [p for r in roots if r for p in glob.glob(os.path.join(r, "fontlist-*.json"))]


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", default=sys.executable, help="the kernel's interpreter")
    ap.add_argument("--site", default="", help="a site folder the kernel adds (a venv's)")
    ap.add_argument("--user", default="nobody")
    ap.add_argument("--group", default="nogroup")
    ap.add_argument("--as-bytes", type=int, default=4 << 30)
    ap.add_argument("--cpu", type=int, default=900)
    ap.add_argument("--nproc", type=int, default=512)
    ap.add_argument("--fsize", type=int, default=1 << 30)
    ap.add_argument("connection_file")
    args, rest = ap.parse_known_args(argv)  # the rest goes to the kernel (nbclient's extras)

    tmp = tempfile.gettempdir()
    _sweep(tmp)
    scratch = tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=tmp)
    conn = os.path.join(scratch, "kernel.json")
    shutil.copyfile(args.connection_file, conn)
    mpl = os.path.join(scratch, "matplotlib")
    os.makedirs(mpl)
    for cache in _font_caches():
        shutil.copy(cache, mpl)

    env = dict(os.environ)
    env.update(
        HOME=scratch,
        MPLCONFIGDIR=mpl,
        IPYTHONDIR=os.path.join(scratch, "ipython"),
        XDG_CACHE_HOME=os.path.join(scratch, "cache"),
        JUPYTER_RUNTIME_DIR=os.path.join(scratch, "runtime"),
        CHIPSIM_SANDBOX="1",
    )
    limits = [
        shutil.which("prlimit") or "prlimit",
        f"--as={args.as_bytes}",
        f"--cpu={args.cpu}",
        f"--nproc={args.nproc}",
        f"--fsize={args.fsize}",
    ]
    if args.site:  # a system interpreter running this venv's packages (.pth files included)
        boot = f"import runpy, site; site.addsitedir({args.site!r}); " + (
            "runpy.run_module('ipykernel_launcher', run_name='__main__')"
        )
        kernel = [args.python, "-c", boot, "-f", conn, *rest]
    else:
        kernel = [args.python, "-m", "ipykernel_launcher", "-f", conn, *rest]
    if os.geteuid() == 0:
        import grp
        import pwd

        uid = pwd.getpwnam(args.user).pw_uid
        gid = grp.getgrnam(args.group).gr_gid
        for root, dirs, files in os.walk(scratch):
            for name in [root, *(os.path.join(root, n) for n in dirs + files)]:
                os.chown(name, uid, gid)
        drop = [
            shutil.which("setpriv") or "setpriv",
            f"--reuid={uid}",
            f"--regid={gid}",
            "--clear-groups",
            "--no-new-privs",
        ]
        command = [*drop, *limits, *kernel]
        env["USER"] = env["LOGNAME"] = args.user
    else:
        print("chipsim-sandbox: not root, so the kernel keeps this user; limits only",
              file=sys.stderr)  # fmt: skip
        command = [*limits, *kernel]
    os.chdir(scratch)  # the notebook's folder may be private to the grader
    os.execvpe(command[0], command, env)


if __name__ == "__main__":
    main(sys.argv[1:])
