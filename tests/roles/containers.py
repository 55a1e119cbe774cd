"""Debian bookworm nodes for the role tests: one debootstrap image (built once, cached under .gpufabric/images), an
overlay of it per test, booted with systemd-nspawn and reached by Ansible through ``community.docker.nsenter``.

Planes get real links: each requested interface is a veth whose container end carries the plane's name, so
systemd-networkd inside the container configures it exactly as on a node. Containers without planes share the
host's network only so that apt can reach the package mirror. Every process is stopped by PID and every mount
removed on exit.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import itertools
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

# the standard library only: ./dev test builds the image with the system's python3 while it installs the venv
ROOT = Path(__file__).resolve().parent.parent.parent
STATE = ROOT / ".gpufabric"
IMAGE_PACKAGES = ("systemd", "systemd-sysv", "dbus", "python3", "python3-apt", "iproute2", "procps", "iputils-ping", "udev", "sudo")
# .debs kept between containers: a second test installs without downloading. One directory per pytest process (an
# xdist worker has its own): apt holds archives/lock while it fetches, and two containers downloading into one
# directory at once would fail on that lock.
APT_ARCHIVES = STATE / "apt-archives" / os.environ.get("PYTEST_XDIST_WORKER", "main")
_veth_numbers = itertools.count()
# Set by tests/roles/conftest.py to the id of a running test that lacks the pytest marker container (None otherwise):
# booted() then refuses, so a container never boots in the CPU tier (./dev fast, ./dev test's `-m "not container"`).
unmarked_test: str | None = None


def debian_mirror() -> str:
    """The Debian mirror the machine's own apt uses (the only package registry reachable here)."""
    for sources in sorted(Path("/etc/apt/sources.list.d").glob("*.sources")):
        for line in sources.read_text(encoding="utf-8").splitlines():
            if line.startswith("URIs:") and line.rstrip().endswith("/debian"):
                return line.split(":", 1)[1].strip()
    return "http://deb.debian.org/debian"


def bookworm_image() -> Path:
    """The pristine root tree, built with debootstrap on first use and reused afterwards (keyed by its package list).

    Several processes may ask at once (./dev test builds it while lint runs, pytest-xdist workers, two checkouts
    sharing .gpufabric): one builds, the others wait on the lock and then find it complete.
    """
    key = hashlib.sha256(",".join(IMAGE_PACKAGES).encode()).hexdigest()[:12]
    image = STATE / "images" / f"bookworm-{key}"
    if (image / ".gpufabric-complete").exists():
        return image
    image.parent.mkdir(parents=True, exist_ok=True)
    with (image.parent / f".{image.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, also if this process dies
        if not (image / ".gpufabric-complete").exists():
            _debootstrap(image)
    return image


def _debootstrap(image: Path) -> None:
    partial = image.with_name(image.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.parent.mkdir(parents=True, exist_ok=True)
    include = ",".join(IMAGE_PACKAGES)
    _run(["debootstrap", "--variant=minbase", f"--include={include}", "bookworm", str(partial), debian_mirror()], timeout=1200)
    shutil.copy("/etc/resolv.conf", partial / "etc" / "resolv.conf")
    (partial / "etc" / "apt" / "apt.conf.d" / "90gpufabric-tests").write_text(
        'APT::Install-Recommends "false";\nAPT::Install-Suggests "false";\n', encoding="utf-8"
    )
    _run(["chroot", str(partial), "apt-get", "update", "-qq"], timeout=600)
    _run(["chroot", str(partial), "apt-get", "clean"], timeout=60)
    (partial / ".gpufabric-complete").touch()
    partial.rename(image)


@dataclass(frozen=True)
class Container:
    """A booted node: its name, its merged root as seen from the host, and the PID of its systemd (PID 1 inside)."""

    name: str
    root: Path
    leader: int
    links: Mapping[str, str]  # container interface → host-side veth

    @property
    def host_vars(self) -> dict[str, object]:
        """Inventory variables that make Ansible reach this container and nothing else."""
        return {
            "ansible_connection": "community.docker.nsenter",
            "ansible_nsenter_pid": self.leader,
            "ansible_python_interpreter": "/usr/bin/python3",
        }

    def run(self, command: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """Run a shell command inside the container (for the tests' own read-back)."""
        return subprocess.run(
            ["nsenter", "-t", str(self.leader), "-a", "sh", "-c", command], capture_output=True, text=True, timeout=timeout, check=False
        )

    def read(self, path: str) -> str:
        return (self.root / path.lstrip("/")).read_text(encoding="utf-8")


@contextlib.contextmanager
def booted(
    name: str,
    workdir: Path,
    *,
    planes: Sequence[str] = (),
    private_network: bool = False,
    files: Mapping[str, tuple[str, int]] | None = None,
) -> Iterator[Container]:
    """Boot an overlay of the image as ``name``.

    ``planes`` are interface names given as veths (implies a private network); ``private_network`` without planes
    gives the container only a loopback (for runs that must not reach anything); otherwise it shares the host's
    network so apt reaches the mirror. ``files`` are written into the root before boot (path → (text, mode)).
    """
    if unmarked_test is not None:
        raise RuntimeError(f"{unmarked_test} boots a container: mark it @pytest.mark.container (the container tier runs it)")
    image = bookworm_image()
    APT_ARCHIVES.mkdir(parents=True, exist_ok=True)
    base = workdir / name
    upper, work, root = base / "upper", base / "work", base / "root"
    for d in (upper, work, root):
        d.mkdir(parents=True)
    _run(["mount", "-t", "overlay", "overlay", "-o", f"lowerdir={image},upperdir={upper},workdir={work}", str(root)])
    nspawn: subprocess.Popen[bytes] | None = None
    try:
        (root / "etc" / "hostname").write_text(name + "\n", encoding="utf-8")
        for path, (text, mode) in (files or {}).items():
            target = root / path.lstrip("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
            target.chmod(mode)
        # host-side names unique across processes (IFNAMSIZ: 15 characters; a Linux PID has at most 7 digits)
        links = {plane: f"gfv{next(_veth_numbers) % 1000}x{os.getpid()}" for plane in planes}
        command = ["systemd-nspawn", "-b", "-q", "--register=no", "--keep-unit", "--console=passive", "-M", name, "-D", str(root)]
        command.append(f"--bind={APT_ARCHIVES}:/var/cache/apt/archives")
        command += [f"--network-veth-extra={host}:{plane}" for plane, host in links.items()]
        if private_network and not links:
            command.append("--private-network")
        console = (base / "console.log").open("wb")
        nspawn = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=console, stderr=subprocess.STDOUT, start_new_session=True)
        leader = _wait_for_boot(nspawn, base / "console.log")
        for host in links.values():
            _run(["ip", "link", "set", host, "up"])  # carrier on the container end, so networkd configures it
        yield Container(name, root, leader, links)
    finally:
        if nspawn is not None:
            _stop(nspawn)
        subprocess.run(["umount", str(root)], capture_output=True, check=False)
        if os.path.ismount(root):
            subprocess.run(["umount", "-l", str(root)], capture_output=True, check=False)
        shutil.rmtree(base, ignore_errors=True)


def _wait_for_boot(nspawn: subprocess.Popen[bytes], console: Path, timeout: float = 60) -> int:
    """The container's PID 1 as seen from the host, once systemd reports the system up. Never a host-namespace PID."""
    own_ns = os.readlink("/proc/self/ns/pid")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if nspawn.poll() is not None:
            raise RuntimeError(f"systemd-nspawn exited with {nspawn.returncode}: {console.read_text(errors='replace')[-2000:]}")
        leader = _container_init(nspawn.pid, own_ns)
        if leader:
            state = subprocess.run(
                ["nsenter", "-t", str(leader), "-a", "systemctl", "is-system-running", "--wait"],
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            ).stdout.strip()
            if state in ("running", "degraded"):
                return leader
        time.sleep(0.1)
    raise RuntimeError(f"the container did not boot in {timeout} s: {console.read_text(errors='replace')[-2000:]}")


def _container_init(nspawn_pid: int, own_ns: str) -> int | None:
    children = Path(f"/proc/{nspawn_pid}/task/{nspawn_pid}/children")
    with contextlib.suppress(OSError):
        for pid in children.read_text().split():
            with contextlib.suppress(OSError):
                if os.readlink(f"/proc/{pid}/ns/pid") != own_ns:
                    return int(pid)
    return None


def _stop(nspawn: subprocess.Popen[bytes]) -> None:
    """SIGTERM makes nspawn halt the container cleanly; SIGKILL the process group if it does not within 30 s."""
    if nspawn.poll() is None:
        nspawn.send_signal(signal.SIGTERM)
        try:
            nspawn.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(nspawn.pid, signal.SIGKILL)
            nspawn.wait(timeout=10)


def _run(command: list[str], timeout: float = 120) -> None:
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}): {done.stderr[-2000:]}")
